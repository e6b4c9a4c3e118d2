import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { startTestServer } from "@/tests/helpers/server";
import { allowTools, sha256, WRITE_TOOLS } from "@/tests/reliability/harness/common";
import { httpDoor, mcpDoor, type Door, type DoorAnswer } from "@/tests/reliability/harness/doors";

/**
 * Bad input at the doors: fast-check throws random and hostile arguments at every
 * tool (and at names that are no tool) through the HTTP door and the MCP door of a real server
 * whose policy lets writes run unattended (run_command and fetch_url keep the default "ask" with
 * no wait, so they are parsed, fenced and decided but never run). Properties, per call:
 * - no 5xx: no HTTP status >= 500, no MCP JSON-RPC internal error, no `internal` error envelope;
 * - an answer is a well-formed envelope (`ok`, `call_id`, `data` | `error.name`);
 * and, after the run: the server still answers /api/health, nothing outside the workspace changed
 * (a sentinel directory beside it, reachable through `..`, absolute paths and a symlink, is
 * compared byte for byte), and the workspace holds no temp file.
 */

export interface FuzzOptions {
  /** Calls per door. */
  runs: number;
  seed: number;
}

export interface FuzzReport {
  seed: number;
  calls: Record<"http" | "mcp", number>;
  /** Answers by door, HTTP status and error name, e.g. {"http 400 invalid_arguments": 210}. */
  answers: Record<string, number>;
  violations: string[];
  /** Files and directories created inside the workspace by accepted writes (allowed, fenced). */
  workspaceEntriesAfter: number;
}

/** Strings an attacker or a confused model would send as a path, command, URL or id. */
function hostileStrings(outside: string): string[] {
  return [
    "",
    ".",
    "..",
    "/",
    "../outside/pwned.txt",
    "../../outside/pwned.txt",
    `${outside}/pwned.txt`,
    `${outside}/secret.txt`,
    "link-out/pwned.txt",
    "link-out/secret.txt",
    "link-out",
    "src/../../outside/pwned.txt",
    "src/./../../outside/../outside/pwned.txt",
    "..\\outside\\pwned.txt",
    "%2e%2e/outside/pwned.txt",
    "..%2foutside%2fpwned.txt",
    "file:///etc/passwd",
    "src/a.txt\u0000.png",
    "\u0000",
    "src/\n/a.txt",
    "src/a.txt\r\n",
    "\u202egnp.txt",
    "\ud800",
    "a".repeat(5000),
    `${"deep/".repeat(300)}x.txt`,
    "~/.ssh/id_rsa",
    "$HOME/.bashrc",
    "`touch ../outside/pwned.txt`",
    "$(touch ../outside/pwned.txt)",
    "; rm -rf ../outside",
    "http://169.254.169.254/latest/meta-data/",
    "http://127.0.0.1:1/",
    "src/a.txt",
    "src",
    ".git/config",
    ".env",
    "call_00000000000000000000000000",
    "bak_00000000000000000000000000",
    "C:\\Windows\\win.ini",
    "//server/share",
    "src/a.txt/",
    "src/a.txt/..",
  ];
}

/** A value for any argument: hostile strings, edge numbers, wrong types, nested junk. */
function valueArb(outside: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...hostileStrings(outside)) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
    { weight: 2, arbitrary: fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 0.5, 1e-300) },
    { weight: 1, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

/** A property of a tool's JSON Schema (the parts the fuzzer reads). */
interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

/** A tool's input JSON Schema (the parts the fuzzer reads). */
interface InputSchema {
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

/** A value of the property's own type (hostile content), so calls get past parsing into the tools. */
function typedArb(schema: PropertySchema, outside: string): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "integer" || type === "number") {
    const min = schema.minimum ?? 0;
    const max = Math.min(schema.maximum ?? 1_000_000, 1_000_000);
    return fc.oneof({ weight: 4, arbitrary: fc.integer({ min, max }) }, { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, (schema.maximum ?? max) + 1) });
  }
  if (type === "boolean") return fc.boolean();
  if (type === "object") return fc.dictionary(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 }), { maxKeys: 3 });
  if (type === "string") {
    if (schema.pattern) return fc.oneof(fc.stringMatching(new RegExp(schema.pattern)), fc.constantFrom(...hostileStrings(outside)));
    return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...hostileStrings(outside)) }, { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 120 }) });
  }
  return valueArb(outside);
}

/**
 * Argument objects for a tool: mostly its own fields with values of their type (hostile
 * content), sometimes values of any type, extra keys, or no object at all.
 */
function argsArb(schema: InputSchema, outside: string): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const fields = Object.keys(properties);
  const value = valueArb(outside);
  const required = (schema.required ?? []).filter((f) => f in properties);
  const typed = fc.record(Object.fromEntries(fields.map((f) => [f, typedArb(properties[f], outside)])), { requiredKeys: required });
  const anyValues = fields.length > 0 ? fc.dictionary(fc.constantFrom(...fields), value, { maxKeys: fields.length }) : fc.constant({});
  return fc.oneof(
    { weight: 8, arbitrary: typed },
    { weight: 3, arbitrary: anyValues },
    { weight: 1, arbitrary: fc.tuple(typed, fc.dictionary(fc.string({ maxLength: 20 }), value, { maxKeys: 3 })).map(([a, b]) => ({ ...b, ...(a as object) })) },
    { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.array(value, { maxLength: 3 }), fc.string(), fc.integer()) },
    { weight: 1, arbitrary: fc.constant(JSON.parse('{"__proto__": {"path": "../outside/pwned.txt"}, "constructor": {"prototype": {"polluted": true}}}')) },
  );
}

function answerKey(a: DoorAnswer): string {
  if (!a.body) return `${a.door} ${a.status} (no envelope)`;
  return `${a.door} ${a.status} ${a.body.ok ? "ok" : a.body.error?.name}`;
}

/** Problems with one answer (empty when it is fine). */
function checkAnswer(a: DoorAnswer, tool: string, args: unknown): string[] {
  const what = `${a.door} ${tool} ${JSON.stringify(args)?.slice(0, 200)}`;
  if (a.status >= 500) return [`${what}: status ${a.status} ${a.failure ?? JSON.stringify(a.body?.error ?? null).slice(0, 300)}`];
  // MCP: a JSON-RPC "invalid params" (arguments not an object) is the protocol's answer. HTTP: a
  // name that is no tool's URL segment ("", "../tools") reaches another route (404/405).
  if (!a.body) return (a.door === "mcp" && a.status === 400) || (a.door === "http" && !/^[a-z_]+$/.test(tool)) ? [] : [`${what}: no envelope (${a.failure})`];
  if (typeof a.body.ok !== "boolean" || !("call_id" in a.body)) return [`${what}: malformed envelope ${JSON.stringify(a.body).slice(0, 200)}`];
  if (!a.body.ok && (typeof a.body.error?.name !== "string" || a.body.error.name === "internal")) return [`${what}: ${JSON.stringify(a.body.error).slice(0, 300)}`];
  return [];
}

/** Byte-for-byte picture of a directory tree (symlinks as their target text). */
function picture(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name))) {
      const abs = path.join(d, e.name);
      if (e.isSymbolicLink()) out.push(`${abs} -> ${fs.readlinkSync(abs)}`);
      else if (e.isDirectory()) {
        out.push(`${abs}/`);
        walk(abs);
      } else out.push(`${abs} ${sha256(fs.readFileSync(abs))} ${fs.statSync(abs).mode.toString(8)}`);
    }
  };
  walk(dir);
  return out.join("\n");
}

/**
 * Runs the fuzz campaign on a fresh server: `runs` calls per door.
 * @returns counts and violations (empty when every property held)
 */
export async function runDoorFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const base = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "ar-fuzz-")));
  const workspace = path.join(base, "ws");
  const outside = path.join(base, "outside");
  fs.mkdirSync(path.join(workspace, "src"), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, "secret.txt"), "do not touch\n");
  fs.writeFileSync(path.join(workspace, "src/a.txt"), "alpha\nbeta\n");
  fs.writeFileSync(path.join(workspace, ".env"), "TOKEN=abc\n");
  fs.symlinkSync("../outside", path.join(workspace, "link-out"));
  const before = picture(outside);
  const parentBefore = fs.readdirSync(base).sort().join(",");

  const server = await startTestServer({ workspace, env: { AGENT_REACH_APPROVAL_WAIT_DEFAULT_S: "0" } });
  const report: FuzzReport = { seed: options.seed, calls: { http: 0, mcp: 0 }, answers: {}, violations: [], workspaceEntriesAfter: 0 };
  const doors: Door[] = [httpDoor(server), await mcpDoor(server)];
  try {
    await allowTools(server, WRITE_TOOLS);
    const schemas: Array<{ name: string; input_schema: InputSchema }> = (await (await fetch(`${server.url}/api/tools`)).json()).tools;
    const names = schemas.map((t) => t.name);
    const schemaOf = new Map(schemas.map((t) => [t.name, t.input_schema]));
    const toolArb = fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom(...names) },
      { weight: 1, arbitrary: fc.constantFrom("no_such_tool", "../tools", "read_file/../write_file", "READ_FILE", "", "%00", "__proto__", "constructor") },
    );
    const callArb = toolArb.chain((tool) => argsArb(schemaOf.get(tool) ?? { properties: { path: { type: "string" } } }, outside).map((args) => ({ tool, args })));
    for (const door of doors) {
      await fc.assert(
        fc.asyncProperty(callArb, async ({ tool, args }) => {
          const answer = await door.call(tool, args);
          report.calls[door.name]++;
          const key = answerKey(answer);
          report.answers[key] = (report.answers[key] ?? 0) + 1;
          const problems = checkAnswer(answer, tool, args);
          report.violations.push(...problems);
          return problems.length === 0;
        }),
        { numRuns: options.runs, seed: options.seed, endOnFailure: true },
      );
    }
  } catch (err) {
    report.violations.push(`fast-check: ${(err as Error).message.split("\n").slice(0, 6).join(" | ")}`);
  } finally {
    const health = await fetch(`${server.url}/api/health`).then((r) => r.status).catch(() => 0);
    if (health !== 200) report.violations.push(`server unhealthy after the fuzz run: ${health}`);
    await Promise.all(doors.map((d) => d.close()));
    await server.stop();
    if (picture(outside) !== before) report.violations.push(`the directory outside the workspace changed:\n${picture(outside)}`);
    const parentAfter = fs.readdirSync(base).sort().join(",");
    if (parentAfter !== parentBefore) report.violations.push(`entries appeared beside the workspace: ${parentAfter}`);
    const temps = picture(workspace).split("\n").filter((l) => l.includes(".agent-reach.tmp"));
    report.violations.push(...temps.map((t) => `temp file left: ${t}`));
    report.workspaceEntriesAfter = picture(workspace).split("\n").length;
    if (report.violations.length === 0) fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
  return report;
}
