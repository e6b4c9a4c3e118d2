import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ToolError } from "@/lib/errors";
import { applyRows, setApplyRaceHook, type ApplyRaceHook, type ContentSource } from "@/lib/effects/apply";
import type { FileChangeRow } from "@/lib/effects/journal";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

/**
 * applyRows against names swapped between a row's check and the call it guards (chmod, chown,
 * mkdir, symlink placement, rename, unlink), through the apply's test hook: whatever the swap
 * points at outside the workspace (a host file, a host directory, a parent directory turned into a
 * link) keeps its mode, bytes and entries, and the row fails with a conflict or a path error instead
 * of passing as applied. Real files in a temp directory; the workspace is `f.ws`.
 */

let f: Fixture;
/** Outside the workspace: a 0600 file and a 0700 directory holding victim.txt. */
let hostFile: string;
let hostDir: string;
const blobs = new Map<string, Buffer>();
const source: ContentSource = {
  bytes: async (r) => {
    const b = blobs.get(r.afterSha ?? "");
    if (!b) throw new Error(`no bytes for ${r.path}`);
    return b;
  },
};

beforeEach(async () => {
  f = await makeFixture();
  hostFile = path.join(f.root, "host-secret.conf");
  hostDir = path.join(f.root, "host-dir");
  await fs.writeFile(hostFile, "HOST\n", { mode: 0o600 });
  await fs.chmod(hostFile, 0o600);
  await fs.mkdir(hostDir);
  await fs.chmod(hostDir, 0o700);
  await fs.writeFile(path.join(hostDir, "victim.txt"), "VICTIM\n");
});
afterEach(async () => {
  setApplyRaceHook(null);
  await f.cleanup();
});

const sha = (b: Buffer) => crypto.createHash("sha256").update(b).digest("hex");
const modeOf = async (p: string) => (await fs.lstat(p)).mode & 0o7777;

function row(p: Partial<FileChangeRow> & Pick<FileChangeRow, "path" | "kind">): FileChangeRow {
  return { seq: 0, beforeType: null, beforeSha: null, beforeMode: null, beforeLink: null, afterType: null, afterSha: null, afterMode: null, afterLink: null, size: 0, bulky: false, ...p };
}

/** A row for `rel` whose after-state is `bytes` with `mode`; the bytes are put in the blob map. */
function fileRow(rel: string, kind: FileChangeRow["kind"], bytes: Buffer, mode: number, before: Partial<FileChangeRow> = {}): FileChangeRow {
  blobs.set(sha(bytes), bytes);
  return row({ path: rel, kind, beforeType: "file", beforeMode: 0o644, ...before, afterType: "file", afterSha: sha(bytes), afterMode: mode, size: bytes.length });
}

/** Runs the apply with `hook` at `point` (once, for `rel`), and returns what it threw. */
async function applyRacing(rows: FileChangeRow[], point: Parameters<ApplyRaceHook>[0], swap: () => Promise<void>): Promise<unknown> {
  let fired = 0;
  setApplyRaceHook(async (p) => {
    if (p === point && fired++ === 0) await swap();
  });
  const err = await applyRows(f.ws, rows, source).then(
    () => null,
    (e: unknown) => e,
  );
  expect(fired, `the hook at "${point}" ran`).toBe(1);
  return err;
}

/** The host side is exactly as beforeEach made it. */
async function expectHostUntouched(): Promise<void> {
  expect((await modeOf(hostFile)).toString(8)).toBe("600");
  expect(await fs.readFile(hostFile, "utf8")).toBe("HOST\n");
  expect((await modeOf(hostDir)).toString(8)).toBe("700");
  expect((await fs.readdir(hostDir)).sort()).toEqual(["victim.txt"]);
  expect(await fs.readFile(path.join(hostDir, "victim.txt"), "utf8")).toBe("VICTIM\n");
}

/** Replaces the workspace name `rel` by a symbolic link to `target` (the agent's other change set). */
const swapForLink = (rel: string, target: () => string) => async () => {
  await fs.rm(f.at(rel), { recursive: true, force: true });
  await fs.symlink(target(), f.at(rel));
};
/** Moves the directory `rel` aside (inside the workspace) and puts a link to `target` in its place. */
const swapParent = (rel: string, target: () => string) => async () => {
  await fs.rename(f.at(rel), f.at(`${rel}.moved`));
  await fs.symlink(target(), f.at(rel));
};

const BIG = Buffer.alloc(4096, 7);

/** Spellings of "a host path" a swapped-in link can use. */
const fileTargets: Array<[string, () => string]> = [
  ["absolute", () => hostFile],
  ["relative ../", () => "../host-secret.conf"],
  ["through a dir with ..", () => "sub/../../host-secret.conf"],
];

describe("a file's mode: the name swapped for a link to a host file", () => {
  const cases: Array<[string, () => FileChangeRow, Parameters<ApplyRaceHook>[0]]> = [
    ["mode-only row, swapped before the open", () => row({ path: "big.bin", kind: "mode", beforeType: "file", beforeMode: 0o644, afterType: "file", afterMode: 0o777, size: BIG.length }), "file"],
    ["mode-only row, swapped after the open", () => row({ path: "big.bin", kind: "mode", beforeType: "file", beforeMode: 0o644, afterType: "file", afterMode: 0o777, size: BIG.length }), "file-checked"],
    ["bytes already there, swapped before the hash", () => fileRow("big.bin", "modified", BIG, 0o777), "file"],
    ["bytes already there, swapped after the hash", () => fileRow("big.bin", "modified", BIG, 0o777), "file-checked"],
  ];
  for (const [name, makeRow, point] of cases) {
    for (const [spelling, target] of fileTargets) {
      test(`${name} (${spelling} link)`, async () => {
        await f.put("big.bin", BIG, 0o644);
        await f.put("sub/keep.txt", "k\n");
        const err = await applyRacing([makeRow()], point, swapForLink("big.bin", target));
        expect(err).toBeInstanceOf(ToolError);
        expect((err as ToolError).detail).toMatchObject({ path: "big.bin", reason: "type_changed" });
        await expectHostUntouched();
        // The name is still the agent's link; nothing followed it.
        expect((await fs.lstat(f.at("big.bin"))).isSymbolicLink()).toBe(true);
      });
    }
  }
  test("the name swapped for a link to a host directory", async () => {
    await f.put("big.bin", BIG, 0o644);
    const err = await applyRacing([fileRow("big.bin", "modified", BIG, 0o777)], "file", swapForLink("big.bin", () => hostDir));
    expect((err as ToolError).detail).toMatchObject({ reason: "type_changed" });
    await expectHostUntouched();
  });
});

describe("a directory's mode or creation: the name swapped for a link to a host directory", () => {
  test.each([
    ["absolute", () => hostDir],
    ["relative", () => "../host-dir"],
  ])("mode of an existing directory (%s link)", async (_s, target) => {
    await f.put("d/x.txt", "x\n");
    const err = await applyRacing([row({ path: "d", kind: "mode", beforeType: "dir", beforeMode: 0o755, afterType: "dir", afterMode: 0o777 })], "dir", swapForLink("d", target));
    expect((err as ToolError).detail).toMatchObject({ path: "d", reason: "type_changed" });
    await expectHostUntouched();
  });
  test.each([
    ["to a host directory", () => hostDir],
    ["to a host file", () => hostFile],
  ])("a new directory whose name became a link %s", async (_s, target) => {
    const err = await applyRacing([row({ path: "newdir", kind: "dir_created", afterType: "dir", afterMode: 0o777 })], "dir", async () => {
      await fs.symlink(target(), f.at("newdir"));
    });
    expect((err as ToolError).detail).toMatchObject({ path: "newdir", reason: "type_changed" });
    await expectHostUntouched();
  });
  test("a new directory whose parent became a link to a host directory", async () => {
    await f.put("sub/keep.txt", "k\n");
    const err = await applyRacing([row({ path: "sub/newdir", kind: "dir_created", afterType: "dir", afterMode: 0o755 })], "dir", swapParent("sub", () => hostDir));
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).detail).toMatchObject({ reason: "parent_symlink" });
    await expectHostUntouched();
    expect(await fs.readdir(f.at("sub.moved"))).toEqual(["keep.txt"]);
  });
});

describe("placement: a parent directory swapped for a link to a host directory", () => {
  const parentTargets: Array<[string, () => string]> = [
    ["absolute", () => hostDir],
    ["relative", () => "../host-dir"],
    ["a link to a link", () => "hop"],
  ];
  for (const [spelling, target] of parentTargets) {
    test(`a symlink row is not placed in the host directory (${spelling})`, async () => {
      await fs.symlink(hostDir, f.at("hop"));
      await f.put("sub/target.txt", "t\n");
      const err = await applyRacing([row({ path: "sub/victim.txt", kind: "symlink", afterType: "symlink", afterLink: "target.txt", afterMode: 0o777 })], "symlink", swapParent("sub", target));
      expect((err as ToolError).detail).toMatchObject({ reason: "parent_symlink", race: true });
      await expectHostUntouched();
      // The link's temp name was removed again from the directory it was made in.
      expect((await fs.readdir(f.at("sub.moved"))).sort()).toEqual(["target.txt"]);
    });
    test(`a removal does not unlink in the host directory (${spelling})`, async () => {
      await fs.symlink(hostDir, f.at("hop"));
      await f.put("sub/victim.txt", "mine\n");
      const err = await applyRacing([row({ path: "sub/victim.txt", kind: "deleted", beforeType: "file", beforeMode: 0o644, size: 5 })], "remove", swapParent("sub", target));
      expect((err as ToolError).detail).toMatchObject({ reason: "parent_symlink", race: true });
      await expectHostUntouched();
      expect(await fs.readFile(f.at("sub.moved/victim.txt"), "utf8")).toBe("mine\n");
    });
  }
  test("a parent swapped for another real directory fails the placement too", async () => {
    await f.put("sub/victim.txt", "mine\n");
    const err = await applyRacing([row({ path: "sub/victim.txt", kind: "deleted", beforeType: "file", beforeMode: 0o644, size: 5 })], "remove", async () => {
      await fs.rename(f.at("sub"), f.at("sub.moved"));
      await fs.mkdir(f.at("sub"));
      await fs.writeFile(f.at("sub/victim.txt"), "other\n");
    });
    expect((err as ToolError).detail).toMatchObject({ reason: "target_changed", race: true });
    expect(await fs.readFile(f.at("sub/victim.txt"), "utf8")).toBe("other\n");
    expect(await fs.readFile(f.at("sub.moved/victim.txt"), "utf8")).toBe("mine\n");
  });
  test("a removed name swapped for a link: the link goes, its host target stays", async () => {
    await f.put("victim.txt", "mine\n");
    const err = await applyRacing([row({ path: "victim.txt", kind: "deleted", beforeType: "file", beforeMode: 0o644, size: 5 })], "remove", swapForLink("victim.txt", () => hostFile));
    expect(err).toBeNull();
    await expectHostUntouched();
    await expect(fs.lstat(f.at("victim.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("a parent that is a link before the apply starts", () => {
  const cases: Array<[string, () => FileChangeRow]> = [
    ["a mode change", () => row({ path: "sub/victim.txt", kind: "mode", beforeType: "file", beforeMode: 0o644, afterType: "file", afterMode: 0o777 })],
    ["a new file", () => fileRow("sub/new.txt", "created", Buffer.from("n\n"), 0o644, { beforeType: null, beforeMode: null })],
    ["a replaced file", () => fileRow("sub/victim.txt", "modified", Buffer.from("agent\n"), 0o666)],
    ["a symlink", () => row({ path: "sub/link", kind: "symlink", afterType: "symlink", afterLink: "victim.txt", afterMode: 0o777 })],
    ["a new directory", () => row({ path: "sub/d", kind: "dir_created", afterType: "dir", afterMode: 0o777 })],
    ["a deletion", () => row({ path: "sub/victim.txt", kind: "deleted", beforeType: "file", beforeMode: 0o644 })],
    ["a nested path", () => fileRow("sub/x/y.txt", "created", Buffer.from("n\n"), 0o644, { beforeType: null, beforeMode: null })],
  ];
  for (const [name, makeRow] of cases) {
    test(`${name} under it is refused`, async () => {
      await fs.symlink(hostDir, f.at("sub"));
      const err = await applyRows(f.ws, [makeRow()], source).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ToolError);
      expect((err as ToolError).errorName).toMatch(/^(path_outside_workspace|not_found)$/);
      await expectHostUntouched();
    });
  }
});

describe("skipped: a roll back goes on past a row taken over meanwhile", () => {
  test("the other rows are applied and the taken-over one is named", async () => {
    await f.put("a.txt", "a\n", 0o644);
    await f.put("b.txt", "b\n", 0o644);
    const skipped: Array<{ path: string; error: unknown }> = [];
    setApplyRaceHook(async (point, rel) => {
      if (point === "file" && rel === "a.txt") await swapForLink("a.txt", () => hostFile)();
    });
    await applyRows(f.ws, [
      row({ path: "a.txt", kind: "mode", beforeType: "file", beforeMode: 0o644, afterType: "file", afterMode: 0o777 }),
      row({ path: "b.txt", kind: "mode", beforeType: "file", beforeMode: 0o644, afterType: "file", afterMode: 0o700 }),
    ], source, undefined, { skipped });
    expect(skipped.map((s) => [s.path, (s.error as ToolError).detail.reason])).toEqual([["a.txt", "type_changed"]]);
    expect((await modeOf(f.at("b.txt"))).toString(8)).toBe("700");
    await expectHostUntouched();
  });
});

describe("ordinary applies still work", () => {
  test("mode changes, a new file, a new directory, a link inside, removals", async () => {
    await f.put("big.bin", BIG, 0o644);
    await f.put("same.txt", "same\n", 0o644);
    await f.put("gone.txt", "bye\n", 0o644);
    await f.put("empty/.keep", "", 0o644);
    await fs.rm(f.at("empty/.keep"));
    await f.put("d/x.txt", "x\n");
    await fs.chmod(f.at("d"), 0o755);
    const rows = [
      row({ path: "big.bin", kind: "mode", beforeType: "file", beforeMode: 0o644, afterType: "file", afterMode: 0o755, size: BIG.length }),
      fileRow("same.txt", "modified", Buffer.from("same\n"), 0o600),
      fileRow("new/inner.txt", "created", Buffer.from("new\n"), 0o640, { beforeType: null, beforeMode: null }),
      row({ path: "new", kind: "dir_created", afterType: "dir", afterMode: 0o750 }),
      row({ path: "d", kind: "mode", beforeType: "dir", beforeMode: 0o755, afterType: "dir", afterMode: 0o711 }),
      row({ path: "new/link", kind: "symlink", afterType: "symlink", afterLink: "inner.txt", afterMode: 0o777 }),
      row({ path: "gone.txt", kind: "deleted", beforeType: "file", beforeMode: 0o644 }),
      row({ path: "empty", kind: "dir_deleted", beforeType: "dir", beforeMode: 0o755 }),
    ];
    let seen = 0;
    setApplyRaceHook(() => {
      seen++;
    });
    await applyRows(f.ws, rows, source);
    expect(seen).toBeGreaterThan(0);
    expect((await modeOf(f.at("big.bin"))).toString(8)).toBe("755");
    expect(await fs.readFile(f.at("big.bin"))).toEqual(BIG);
    expect((await modeOf(f.at("same.txt"))).toString(8)).toBe("600");
    expect((await modeOf(f.at("new"))).toString(8)).toBe("750");
    expect((await modeOf(f.at("new/inner.txt"))).toString(8)).toBe("640");
    expect(await fs.readFile(f.at("new/inner.txt"), "utf8")).toBe("new\n");
    expect(await fs.readlink(f.at("new/link"))).toBe("inner.txt");
    expect(await fs.readFile(f.at("new/link"), "utf8")).toBe("new\n");
    expect((await modeOf(f.at("d"))).toString(8)).toBe("711");
    await expect(fs.lstat(f.at("gone.txt"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(fs.lstat(f.at("empty"))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await fs.readdir(f.ws)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    // Applying the same rows again changes nothing (a redo after a crash).
    await applyRows(f.ws, rows, source);
    expect((await modeOf(f.at("big.bin"))).toString(8)).toBe("755");
    await expectHostUntouched();
  });
  test("new entries get the owner of their directory, set on the descriptor", async () => {
    // Only root may give a file away; elsewhere the apply leaves owners alone.
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    await fs.mkdir(f.at("owned"));
    await fs.chown(f.at("owned"), 4321, 4322);
    await applyRows(f.ws, [
      fileRow("owned/a.txt", "created", Buffer.from("a\n"), 0o644, { beforeType: null, beforeMode: null }),
      row({ path: "owned/d", kind: "dir_created", afterType: "dir", afterMode: 0o755 }),
      row({ path: "owned/l", kind: "symlink", afterType: "symlink", afterLink: "a.txt", afterMode: 0o777 }),
    ], source);
    for (const name of ["a.txt", "d", "l"]) {
      const st = await fs.lstat(f.at(`owned/${name}`));
      expect([name, st.uid, st.gid]).toEqual([name, 4321, 4322]);
    }
  });
});
