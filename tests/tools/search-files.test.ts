import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import { searchFilesTool, SearchFilesInput, type SearchFilesOutput } from "@/lib/tools/search-files";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";

function search(ctx: TestContext, args: Record<string, unknown>): Promise<SearchFilesOutput> {
  return searchFilesTool.run(SearchFilesInput.parse(args), ctx);
}

async function searchError(ctx: TestContext, args: Record<string, unknown>): Promise<ToolError> {
  try {
    await search(ctx, args);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error("expected a ToolError");
}

describe("search_files", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws);
    await f.put("src/app.ts", "import x from 'y';\nconst TODO = 1;\n// todo: later\r\n");
    await f.put("src/util/strings.ts", "export const todo = 'TODO';\n");
    await f.put("src/readme.md", "# TODO list\n");
    await f.put("docs/a.b.md", "a.b and axb\n");
    await f.put("logo.png", Buffer.concat([Buffer.from("89504E470D0A1A0A", "hex"), Buffer.from("TODO"), Buffer.alloc(64)]));
    await f.put("win.txt", Buffer.from("\ufeffhi TODO\r\n", "utf16le"));
    await f.put("node_modules/pkg/index.js", "TODO\n");
    await f.put(".git/config", "TODO\n");
    await f.put(".github/workflow.yml", "# TODO\n");
    await fs.symlink(path.join(f.root, "proj-out"), f.at("ext"));
    await fs.writeFile(path.join(f.root, "proj-out/secret.txt"), "TODO TOP-SECRET\n");
    await fs.symlink("src/app.ts", f.at("alias.ts"));
  });
  afterEach(() => f.cleanup());

  it("finds files by glob relative to path, without following symlinks or entering .git / node_modules", async () => {
    const out = await search(ctx, { pattern: "**/*.ts" });
    expect(out).toMatchObject({ mode: "files", files: ["src/app.ts", "src/util/strings.ts"], truncated: false });
    const under = await search(ctx, { pattern: "util/*.ts", path: "src" });
    expect(under.files).toEqual(["src/util/strings.ts"]);
  });

  it("a glob without a slash matches names at any depth", async () => {
    expect((await search(ctx, { pattern: "*.md" })).files).toEqual(["docs/a.b.md", "src/readme.md"]);
  });

  it("finds lines with a literal query, case-sensitive by default", async () => {
    const out = await search(ctx, { query: "TODO" });
    expect(out.mode).toBe("content");
    expect(out.matches).toEqual([
      { path: ".github/workflow.yml", line: 1, column: 3, text: "# TODO" },
      { path: "src/app.ts", line: 2, column: 7, text: "const TODO = 1;" },
      { path: "src/readme.md", line: 1, column: 3, text: "# TODO list" },
      { path: "src/util/strings.ts", line: 1, column: 22, text: "export const todo = 'TODO';" },
      { path: "win.txt", line: 1, column: 4, text: "hi TODO" },
    ]);
    expect(out.files_skipped.binary).toBe(1);
    expect(JSON.stringify(out)).not.toContain("TOP-SECRET");
  });

  it("case-insensitive search and include filter", async () => {
    const out = await search(ctx, { query: "todo", case_sensitive: false, include: "*.ts" });
    expect(out.matches!.map((m) => `${m.path}:${m.line}`)).toEqual(["src/app.ts:2", "src/app.ts:3", "src/util/strings.ts:1"]);
    expect(out.matches![1].text).toBe("// todo: later");
  });

  it("literal queries escape regex characters; regex queries do not", async () => {
    expect((await search(ctx, { query: "a.b", path: "docs" })).matches!.map((m) => m.column)).toEqual([1]);
    expect((await search(ctx, { query: "a.b$", regex: true, path: "docs" })).matches).toEqual([
      { path: "docs/a.b.md", line: 1, column: 9, text: "a.b and axb" },
    ]);
    expect((await search(ctx, { query: "ax?b\\b", regex: true, path: "docs" })).matches!.length).toBe(1);
  });

  it("searches node_modules when path points inside it", async () => {
    const out = await search(ctx, { query: "TODO", path: "node_modules" });
    expect(out.matches!.map((m) => m.path)).toEqual(["node_modules/pkg/index.js"]);
  });

  it("caps results and says so", async () => {
    await f.put("many.txt", "hit\n".repeat(50));
    const out = await search(ctx, { query: "hit", max_results: 10 });
    expect(out.matches).toHaveLength(10);
    expect(out.truncated).toBe(true);
    const files = await search(ctx, { pattern: "**", max_results: 2 });
    expect(files.files).toHaveLength(2);
    expect(files.truncated).toBe(true);
  });

  it("windows long lines around the match without splitting characters", async () => {
    await f.put("min.js", `${"\u{1F600}".repeat(500)}NEEDLE${"\u{1F600}".repeat(500)}\n`);
    const [m] = (await search(ctx, { query: "NEEDLE" })).matches!;
    expect(m.column).toBe(1001);
    expect(m.text.length).toBeLessThanOrEqual(302);
    expect(m.text).toContain("NEEDLE");
    expect(m.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(m.text.startsWith("…")).toBe(true);
    expect(m.text.endsWith("…")).toBe(true);
  });

  it.each([
    ["neither pattern nor query", {}, "missing_pattern_or_query"],
    ["an invalid regex", { query: "(unclosed", regex: true }, "invalid_regex"],
  ])("refuses %s with invalid_arguments", async (_name, args, reason) => {
    const err = await searchError(ctx, args);
    expect(err.errorName).toBe("invalid_arguments");
    expect(err.detail.reason).toBe(reason);
  });

  it.each([
    ["C01 prefix sibling", "../proj-out", "path_outside_workspace", "lexical"],
    ["C02 outside dir link", "ext", "path_outside_workspace", "symlink"],
    ["NUL", "src\u0000", "path_invalid", "nul_byte"],
    ["a file", "notes.txt", "path_invalid", "not_a_directory"],
  ])("refuses the base path: %s", async (_name, raw, name, reason) => {
    const err = await searchError(ctx, { query: "TODO", path: raw });
    expect(err.errorName).toBe(name);
    expect(err.detail.reason).toBe(reason);
  });

  it("refuses a missing base directory", async () => {
    expect((await searchError(ctx, { pattern: "*", path: "nope" })).errorName).toBe("not_found");
  });

  it.each([
    ["max_results over 1000", { query: "x", max_results: 1001 }],
    ["empty query", { query: "" }],
    ["unknown argument", { query: "x", glob: "*" }],
  ])("schema refuses %s", (_name, args) => {
    expect(SearchFilesInput.safeParse(args).success).toBe(false);
  });

  it("records audit notes", async () => {
    await search(ctx, { query: "TODO", path: "src" });
    expect(ctx.notes).toMatchObject({ pathRaw: "src", pathResolved: f.at("src"), truncated: false });
  });
});
