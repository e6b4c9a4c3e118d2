import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import { loadConfig } from "@/lib/config";
import { searchFilesTool, SearchFilesInput, type SearchFilesOutput } from "@/lib/tools/search-files";
import { MAX_MATCHERS } from "@/lib/workspace/search-matcher";
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

  it("does not report the empty string after a final newline as a line", async () => {
    await f.put("gaps.txt", "a\n\nb\n");
    const out = await search(ctx, { query: "^$", regex: true, include: "gaps.txt" });
    expect(out.matches!.map((m) => m.line)).toEqual([2]);
  });
});

/**
 * Catastrophic queries: matching runs in a worker thread with a time budget, so the event loop
 * keeps turning and the call ends with a clear error instead of stalling the server.
 */
describe("search_files against catastrophic queries", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws, { searchTimeoutMs: 300 });
    await f.put("src/ok.ts", "const a = 'aaaa';\n");
    await f.put("src/evil.txt", `${"a".repeat(40)}!\n`.repeat(3));
  });
  afterEach(async () => {
    await f.cleanup();
  });

  it.each([
    ["nested quantifier", "(a+)+$"],
    ["overlapping alternation", "(a|aa)+$"],
    ["nested star", "(a*)*b"],
    ["repeated group", "^(\\w+\\s?)*$"],
    ["quantified wildcard groups", "(.*a){25}!x"],
  ])("stops a %s with regex_timeout while the event loop keeps turning", async (_name, query) => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    try {
      const err = await searchError(ctx, { query, regex: true });
      expect(err.errorName).toBe("invalid_arguments");
      expect(err.detail).toMatchObject({ reason: "regex_timeout", argument: "query", path: "src/evil.txt", budget_ms: 300 });
      expect(err.message).toMatch(/simplify/i);
      expect(err.message).toContain("regex: false");
    } finally {
      clearInterval(ticker);
    }
    expect(ticks).toBeGreaterThan(0);
  });

  it("says how far the search got when the budget ran out", async () => {
    await f.put("src/a-first.txt", "aaa\n");
    const err = await searchError(ctx, { query: "(a+)+$", regex: true, path: "src" });
    expect(err.detail).toMatchObject({ reason: "regex_timeout", path: "src/evil.txt", files_scanned: 2, matches_found: 1 });
  });

  it("a catastrophic pattern is harmless when include keeps it away from the slow file", async () => {
    // A generous budget: the slow file would exhaust it too, and a loaded machine must not make
    // the harmless files run out of a short one.
    const out = await search(makeToolContext(f.ws, { searchTimeoutMs: 10_000 }), { query: "(a+)+$", regex: true, include: "*.ts" });
    expect(out.matches).toEqual([]);
  });

  it("stops a literal query that V8 matches in quadratic time", async () => {
    const half = "a".repeat(15_000);
    await f.put("big.txt", `${"a".repeat(2 * 1024 * 1024)}\n`);
    const err = await searchError(ctx, { query: `${half}b${half}`, include: "big.txt" });
    expect(err.detail).toMatchObject({ reason: "regex_timeout", path: "big.txt" });
    expect(err.message).toMatch(/^The query "a{120}…" did not finish/);
  });

  it("answers regex_too_complex when the backtracking stack overflows", async () => {
    await f.put("ab.txt", "ab".repeat(4_000_000));
    const err = await searchError(makeToolContext(f.ws, { searchTimeoutMs: 60_000 }), { query: "(a|b)*c", regex: true, include: "ab.txt" });
    expect(err.detail).toMatchObject({ reason: "regex_too_complex", path: "ab.txt" });
  });

  it.each([
    ["a regex", true, "invalid_regex"],
    ["a literal", false, "query_too_long"],
  ])("refuses %s too large for V8 to compile (found only when it first runs)", async (_name, regex, reason) => {
    // A generous budget: compiling is what fails here, and a loaded machine must not turn it into a timeout.
    const err = await searchError(makeToolContext(f.ws, { searchTimeoutMs: 30_000 }), { query: `${"a".repeat(70_000)}b`, regex, include: "*.ts" });
    expect(err.detail).toMatchObject({ reason, argument: "query" });
    expect(err.message).toContain("Regular expression too large");
    expect(err.message.length).toBeLessThan(600);
  });

  it("runs more concurrent searches than matcher slots: the extra ones wait their turn", async () => {
    // A 1 s budget each (not the 10 s default): the extra ones still wait for a slot, the literal
    // search with the default budget still finds its matches behind them.
    const calls = Array.from({ length: MAX_MATCHERS + 2 }, () => searchError(makeToolContext(f.ws, { searchTimeoutMs: 1000 }), { query: "(a+)+$", regex: true }));
    const literal = search(makeToolContext(f.ws), { query: "aaaa" });
    for (const err of await Promise.all(calls)) expect(err.detail.reason).toBe("regex_timeout");
    expect((await literal).matches!.map((m) => m.path)).toEqual(["src/evil.txt", "src/evil.txt", "src/evil.txt", "src/ok.ts"]);
  });

  it("stops matching when the call is aborted", async () => {
    const controller = new AbortController();
    const reason = new Error("client went away");
    setTimeout(() => controller.abort(reason), 50);
    await expect(search({ ...makeToolContext(f.ws, { searchTimeoutMs: 600_000 }), signal: controller.signal }, { query: "(a+)+$", regex: true })).rejects.toBe(reason);
  });

  it.each([
    [undefined, 10_000],
    ["2500", 2500],
  ])("takes the budget from AGENT_REACH_SEARCH_TIMEOUT_MS=%s", (value, ms) => {
    expect(loadConfig({ AGENT_REACH_SEARCH_TIMEOUT_MS: value } as unknown as NodeJS.ProcessEnv).searchTimeoutMs).toBe(ms);
  });

  it.each(["0", "abc", "99", "1.5"])("refuses AGENT_REACH_SEARCH_TIMEOUT_MS=%s", (value) => {
    expect(() => loadConfig({ AGENT_REACH_SEARCH_TIMEOUT_MS: value } as unknown as NodeJS.ProcessEnv)).toThrow(/AGENT_REACH_SEARCH_TIMEOUT_MS/);
  });
});
