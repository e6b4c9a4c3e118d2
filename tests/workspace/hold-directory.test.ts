import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ToolError } from "@/lib/errors";
import { assertStillNamed, holdDirectory, openChecked } from "@/lib/workspace/hold-directory";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

/**
 * holdDirectory's openat walk and the descriptor checks the apply relies on, on real directories:
 * which spellings of "a directory on the path is not a real directory here" fail with which error,
 * and that names inside a held directory stay in it after the path that led there was swapped.
 */

let f: Fixture;
beforeEach(async () => {
  f = await makeFixture();
  await f.put("a/b/c/file.txt", "inside\n");
  await fs.symlink(path.join(f.root, "proj-out"), f.at("out"));
  await fs.symlink("../proj-out", f.at("a/rel-out"));
  await fs.symlink("b", f.at("a/inside-link"));
});
afterEach(() => f.cleanup());

async function failure(p: Promise<unknown>): Promise<{ error: string; reason: unknown }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ToolError)) throw new Error(`expected a ToolError, got ${String(err)}`);
  return { error: err.errorName, reason: err.detail.reason };
}

describe("holdDirectory: the walk", () => {
  test.each([
    ["", "."],
    ["a", "a"],
    ["a/b/c", "a/b/c"],
  ])("holds %j", async (rel, expected) => {
    const dir = await holdDirectory(f.ws, rel);
    try {
      const st = await dir.stat();
      expect(st.ino).toBe((await fs.lstat(f.at(expected))).ino);
      await dir.verify();
    } finally {
      await dir.close();
    }
  });
  test.each([
    ["out", "path_outside_workspace", "parent_symlink"],
    ["out/x", "path_outside_workspace", "parent_symlink"],
    ["a/rel-out", "path_outside_workspace", "parent_symlink"],
    // A link that stays inside is still a link: the apply never goes through one.
    ["a/inside-link", "path_outside_workspace", "parent_symlink"],
    ["a/inside-link/c", "path_outside_workspace", "parent_symlink"],
    ["missing", "not_found", "parent_missing"],
    ["a/b/c/file.txt", "not_found", "parent_not_directory"],
    ["a/b/c/file.txt/x", "not_found", "parent_not_directory"],
    ["a/../out", "path_invalid", undefined],
    ["a//b", "path_invalid", undefined],
    ["./a", "path_invalid", undefined],
  ])("refuses %j (%s)", async (rel, error, reason) => {
    expect(await failure(holdDirectory(f.ws, rel))).toEqual({ error, reason });
  });
});

describe("a held directory after its path was swapped", () => {
  test("names resolve in the held directory, and verify fails", async () => {
    const dir = await holdDirectory(f.ws, "a/b/c");
    try {
      await fs.rename(f.at("a/b"), f.at("a/b.moved"));
      await fs.symlink(path.join(f.root, "proj-out"), f.at("a/b"));
      expect(await fs.readFile(dir.at("file.txt"), "utf8")).toBe("inside\n");
      await fs.writeFile(dir.at("new.txt"), "placed\n");
      expect(await fs.readFile(f.at("a/b.moved/c/new.txt"), "utf8")).toBe("placed\n");
      expect(await fs.readdir(path.join(f.root, "proj-out"))).toEqual(["secret.txt"]);
      expect(await failure(dir.verify())).toEqual({ error: "path_outside_workspace", reason: "parent_symlink" });
    } finally {
      await dir.close();
    }
  });
  test("a real directory put in its place fails verify with target_changed", async () => {
    const dir = await holdDirectory(f.ws, "a/b");
    try {
      await fs.rename(f.at("a/b"), f.at("a/b.moved"));
      await fs.mkdir(f.at("a/b"));
      expect(await failure(dir.verify())).toEqual({ error: "write_failed", reason: "target_changed" });
    } finally {
      await dir.close();
    }
  });
});

describe("openChecked and assertStillNamed", () => {
  // Each replacement is made beside the file first (so it never reuses the file's inode), then
  // moved over its name.
  const beside = () => f.at("a/b/c/replacement");
  test.each([
    ["a link to an outside file", async () => fs.symlink(path.join(f.root, "proj-out/secret.txt"), beside())],
    ["a link to an inside file", async () => fs.symlink("../../../notes.txt", beside())],
    ["another file", async () => fs.writeFile(beside(), "other\n")],
    ["a directory", async () => fs.mkdir(beside())],
    ["nothing", null],
  ])("a file replaced by %s between the check and the open is refused", async (_what, replace) => {
    const dir = await holdDirectory(f.ws, "a/b/c");
    try {
      const checked = await fs.lstat(dir.at("file.txt"));
      if (replace) await replace();
      await fs.rm(f.at("a/b/c/file.txt"));
      if (replace) await fs.rename(beside(), f.at("a/b/c/file.txt"));
      expect(await failure(openChecked(dir.at("file.txt"), "file", checked, "a/b/c/file.txt"))).toEqual({ error: "conflict", reason: "type_changed" });
    } finally {
      await dir.close();
    }
  });
  test("a directory replaced by a link to an outside directory is refused", async () => {
    const dir = await holdDirectory(f.ws, "a/b");
    try {
      const checked = await fs.lstat(dir.at("c"));
      await fs.rename(f.at("a/b/c"), f.at("a/c.moved"));
      await fs.symlink(path.join(f.root, "proj-out"), f.at("a/b/c"));
      expect(await failure(openChecked(dir.at("c"), "dir", checked, "a/b/c"))).toEqual({ error: "conflict", reason: "type_changed" });
    } finally {
      await dir.close();
    }
  });
  test("the name swapped after the open: assertStillNamed fails", async () => {
    const dir = await holdDirectory(f.ws, "a/b/c");
    const checked = await fs.lstat(dir.at("file.txt"));
    const handle = await openChecked(dir.at("file.txt"), "file", checked, "a/b/c/file.txt");
    try {
      await assertStillNamed(dir.at("file.txt"), handle, "a/b/c/file.txt");
      await fs.rm(f.at("a/b/c/file.txt"));
      await fs.symlink(path.join(f.root, "proj-out/secret.txt"), f.at("a/b/c/file.txt"));
      expect(await failure(assertStillNamed(dir.at("file.txt"), handle, "a/b/c/file.txt"))).toEqual({ error: "conflict", reason: "type_changed" });
    } finally {
      await handle.close();
      await dir.close();
    }
  });
});
