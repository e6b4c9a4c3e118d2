import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import { listDirectoryTool, ListDirectoryInput, type ListDirectoryOutput } from "@/lib/tools/list-directory";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";

function list(ctx: TestContext, args: Record<string, unknown>): Promise<ListDirectoryOutput> {
  return listDirectoryTool.run(ListDirectoryInput.parse(args), ctx);
}

async function listError(ctx: TestContext, args: Record<string, unknown>): Promise<ToolError> {
  try {
    await list(ctx, args);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error("expected a ToolError");
}

describe("list_directory", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws);
    await f.put("src/b.ts", "b\n");
    await f.put("src/a.ts", "aaaa\n");
    await f.put("src/deep/x/y/z.txt", "z\n");
    await f.put(".env", "K=V\n");
    await f.put("node_modules/pkg/index.js", "x\n");
    await f.put(".git/HEAD", "ref\n");
    await fs.symlink(path.join(f.root, "proj-out"), f.at("ext"));
    await fs.symlink("src/a.ts", f.at("alias.ts"));
    await fs.symlink("missing.txt", f.at("dangling"));
  });
  afterEach(() => f.cleanup());

  it("lists direct children sorted, with types, sizes and mtimes", async () => {
    const out = await list(ctx, {});
    expect(out.path).toBe(".");
    expect(out.entries.map((e) => [e.name, e.type])).toEqual([
      [".env", "file"],
      [".git", "directory"],
      ["alias.ts", "symlink"],
      ["dangling", "symlink"],
      ["ext", "symlink"],
      ["node_modules", "directory"],
      ["notes.txt", "file"],
      ["src", "directory"],
    ]);
    const notes = out.entries.find((e) => e.name === "notes.txt")!;
    expect(notes).toMatchObject({ path: "notes.txt", size_bytes: 13 });
    expect(new Date(notes.mtime).toISOString()).toBe(notes.mtime);
    expect(out).toMatchObject({ total: 8, truncated: false, next_offset: null, scan_capped: false });
  });

  it("shows where symlinks point without following them out of the workspace", async () => {
    const out = await list(ctx, {});
    const byName = Object.fromEntries(out.entries.map((e) => [e.name, e]));
    expect(byName["alias.ts"]).toMatchObject({ symlink_target: "src/a.ts", symlink_target_type: "file" });
    expect(byName.ext).toMatchObject({ symlink_target: null, symlink_target_type: "outside_workspace" });
    expect(byName.dangling).toMatchObject({ symlink_target: "missing.txt", symlink_target_type: "missing" });
    expect(JSON.stringify(out)).not.toContain("secret.txt");
  });

  it("walks depth-first, each directory before its contents, without entering .git or node_modules", async () => {
    const out = await list(ctx, { path: "src", depth: 5 });
    expect(out.entries.map((e) => e.path)).toEqual(["src/a.ts", "src/b.ts", "src/deep", "src/deep/x", "src/deep/x/y", "src/deep/x/y/z.txt"]);
    const root = await list(ctx, { depth: 3 });
    expect(root.entries.map((e) => e.path)).not.toContain("node_modules/pkg");
    expect(root.entries.map((e) => e.path)).not.toContain(".git/HEAD");
    expect(root.entries.map((e) => e.path)).toContain("src/deep/x");
    expect(root.entries.map((e) => e.path)).not.toContain("src/deep/x/y");
  });

  it("expands node_modules when the path points inside it", async () => {
    const out = await list(ctx, { path: "node_modules", depth: 2 });
    expect(out.entries.map((e) => e.path)).toEqual(["node_modules/pkg", "node_modules/pkg/index.js"]);
  });

  it("hides dot entries on request", async () => {
    const out = await list(ctx, { include_hidden: false });
    expect(out.entries.map((e) => e.name)).not.toContain(".env");
    expect(out.entries.map((e) => e.name)).not.toContain(".git");
  });

  it("pages with offset and limit", async () => {
    const first = await list(ctx, { limit: 3 });
    expect(first).toMatchObject({ total: 8, truncated: true, next_offset: 3 });
    const second = await list(ctx, { limit: 3, offset: 3 });
    const third = await list(ctx, { limit: 3, offset: 6 });
    expect(third).toMatchObject({ truncated: false, next_offset: null });
    const names = [...first.entries, ...second.entries, ...third.entries].map((e) => e.name);
    expect(names).toEqual((await list(ctx, {})).entries.map((e) => e.name));
  });

  it("lists an inside directory reached through a symlink under its canonical path", async () => {
    await fs.symlink("src", f.at("src-link"));
    const out = await list(ctx, { path: "src-link" });
    expect(out.path).toBe("src");
    expect(out.entries[0].path).toBe("src/a.ts");
  });

  it.each([
    ["C01 prefix sibling", "../proj-out", "path_outside_workspace", "lexical"],
    ["C02 symlinked outside dir", "ext", "path_outside_workspace", "symlink"],
    ["absolute outside", "/etc", "path_outside_workspace", "lexical"],
    ["backslash", "..\\proj-out", "path_invalid", "backslash"],
    ["a file", "notes.txt", "path_invalid", "not_a_directory"],
  ])("refuses %s", async (_name, raw, name, reason) => {
    const err = await listError(ctx, { path: raw });
    expect(err.errorName).toBe(name);
    expect(err.detail.reason).toBe(reason);
  });

  it("refuses a missing directory", async () => {
    expect((await listError(ctx, { path: "nope" })).errorName).toBe("not_found");
  });

  it.each([
    ["depth 0", { depth: 0 }],
    ["depth 6", { depth: 6 }],
    ["limit 0", { limit: 0 }],
    ["unknown argument", { recursive: true }],
  ])("schema refuses %s", (_name, args) => {
    expect(ListDirectoryInput.safeParse(args).success).toBe(false);
  });

  it("records audit notes", async () => {
    await list(ctx, { path: "./src" });
    expect(ctx.notes).toMatchObject({ pathRaw: "./src", pathResolved: f.at("src"), truncated: false });
  });
});
