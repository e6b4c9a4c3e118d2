import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * Flag parsing of the CLI against JSON Schemas shaped like the ones GET /api/tools serves
 * (zod 4 `z.toJSONSchema`, io "input"): names, types, booleans, numbers, arrays, @file,
 * positionals, and global options mixed in after the command.
 */
let argv: any;
let dir: string;

const SCHEMA = {
  type: "object",
  properties: {
    path: { type: "string", description: "File." },
    offset: { default: 0, type: "integer", minimum: 0 },
    ratio: { type: "number" },
    include_line_numbers: { default: true, type: "boolean" },
    tags: { type: "array", items: { type: "string" } },
    sizes: { type: "array", items: { type: "integer" } },
    options: { type: "object", additionalProperties: {} },
    mode: { anyOf: [{ type: "string" }, { type: "null" }] },
  },
  required: ["path"],
  additionalProperties: false,
};

beforeAll(async () => {
  argv = await import(pathToFileURL(path.resolve(__dirname, "../../lib/cli/argv.mjs")).href);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-cli-argv-"));
  fs.writeFileSync(path.join(dir, "body.txt"), "línea 1\nzeile 2 — 你好\n");
  fs.writeFileSync(path.join(dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
});

describe("parseCommandArgs", () => {
  it.each([
    ["kebab-case flags", ["--path", "a.txt", "--include-line-numbers"], { path: "a.txt", include_line_numbers: true }],
    ["snake_case flags", ["--path", "a.txt", "--include_line_numbers=false"], { path: "a.txt", include_line_numbers: false }],
    ["--no- form", ["--path", "a", "--no-include-line-numbers"], { path: "a", include_line_numbers: false }],
    ["boolean with an explicit value", ["--path", "a", "--include-line-numbers", "false"], { path: "a", include_line_numbers: false }],
    ["--key=value", ["--path=a=b.txt"], { path: "a=b.txt" }],
    ["integers and numbers", ["--path", "a", "--offset", "40", "--ratio", "0.5"], { path: "a", offset: 40, ratio: 0.5 }],
    ["a repeated array flag", ["--path", "a", "--tags", "x", "--tags", "y"], { path: "a", tags: ["x", "y"] }],
    ["an array as JSON", ["--path", "a", "--sizes", "[1,2]"], { path: "a", sizes: [1, 2] }],
    ["typed array items", ["--path", "a", "--sizes", "3", "--sizes", "4"], { path: "a", sizes: [3, 4] }],
    ["an object as JSON", ["--path", "a", "--options", '{"k":1}'], { path: "a", options: { k: 1 } }],
    ["a string-or-null", ["--path", "a", "--mode", "fast"], { path: "a", mode: "fast" }],
    ["a positional for the required field", ["notes.md", "--offset", "2"], { path: "notes.md", offset: 2 }],
    ["a value starting with dashes", ["--path", "--weird--"], { path: "--weird--" }],
    ["a literal @ with @@", ["--path", "@@home.txt"], { path: "@home.txt" }],
    ["values after --", ["--", "--dash-file"], { path: "--dash-file" }],
  ])("parses %s", async (_label, args, expected) => {
    expect(await argv.parseCommandArgs(args, SCHEMA, {})).toEqual(expected);
  });

  it("reads @file values locally as UTF-8", async () => {
    const args = await argv.parseCommandArgs(["--path", `@${path.join(dir, "body.txt")}`], SCHEMA, {});
    expect(args.path).toBe("línea 1\nzeile 2 — 你好\n");
  });

  it("takes global options found after the command", async () => {
    const globals: Record<string, unknown> = {};
    const args = await argv.parseCommandArgs(["--path", "a", "--wait", "30", "--format", "text", "--debug", "--session", "s1"], SCHEMA, globals);
    expect(args).toEqual({ path: "a" });
    expect(globals).toEqual({ wait: 30, format: "text", debug: true, session: "s1" });
  });

  it.each([
    ["an unknown flag", ["--path", "a", "--bogus", "1"], "invalid_arguments", /Unknown option --bogus/],
    ["a missing value", ["--path"], "invalid_arguments", /needs a value/],
    ["a non-number", ["--path", "a", "--offset", "ten"], "invalid_arguments", /expects a number/],
    ["a fraction for an integer", ["--path", "a", "--offset", "1.5"], "invalid_arguments", /expects an integer/],
    ["bad JSON", ["--path", "a", "--options", "{nope"], "invalid_arguments", /expects JSON/],
    ["a string flag given twice", ["--path", "a", "--path", "b"], "invalid_arguments", /more than once/],
    ["an extra positional", ["a", "b"], "invalid_arguments", /Unexpected argument "b"/],
    ["--no- on a string", ["--path", "a", "--no-mode"], "invalid_arguments", /only boolean options/],
    ["a bad --format", ["--path", "a", "--format", "xml"], "invalid_arguments", /must be one of json, text/],
    ["a negative --wait", ["--path", "a", "--wait", "-1"], "invalid_arguments", /seconds >= 0/],
    ["a missing @file", ["--path", "@/nonexistent/file.txt"], "not_found", /no such file/],
  ])("refuses %s", async (_label, args, name, message) => {
    const err = await argv.parseCommandArgs(args, SCHEMA, {}).catch((e: unknown) => e);
    expect(err.errorName).toBe(name);
    expect(err.message).toMatch(message);
  });

  it("refuses an @file that is not UTF-8 instead of replacing its bytes", async () => {
    const err = await argv.parseCommandArgs(["--path", `@${path.join(dir, "latin1.txt")}`], SCHEMA, {}).catch((e: unknown) => e);
    expect(err.errorName).toBe("encoding_unsupported");
  });
});

describe("splitCommandLine", () => {
  it.each([
    [["--format", "text", "read-file", "--path", "a"], { format: "text" }, "read-file", ["--path", "a"]],
    [["--server=http://h:1", "--debug", "self-check"], { server: "http://h:1", debug: true }, "self-check", []],
    [["-h"], { help: true }, null, []],
    [["list-tools"], {}, "list-tools", []],
  ])("splits %j", (args, globals, command, rest) => {
    expect(argv.splitCommandLine(args)).toEqual({ globals, command, rest });
  });
});
