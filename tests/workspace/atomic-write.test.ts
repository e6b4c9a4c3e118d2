import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { ToolError } from "@/lib/errors";
import { atomicWriteFile } from "@/lib/workspace/atomic-write";
import { sha256Hex } from "@/lib/workspace/text";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { armWriteFault, type WriteFault } from "@/tests/helpers/write-fault";

// Disk faults come from a wrapped node:fs/promises (tests/helpers/write-fault.ts), not from the product.
vi.mock("node:fs/promises", async (importOriginal) => (await import("@/tests/helpers/write-fault")).withWriteFaults(await importOriginal()));

let f: Fixture;
beforeEach(async () => {
  f = await makeFixture();
});
afterEach(async () => {
  armWriteFault(null);
  await f.cleanup();
});

const modeOf = async (p: string) => (await fs.stat(p)).mode & 0o7777;
const tempFilesIn = async (dir: string) => (await fs.readdir(dir)).filter((n) => n.endsWith(".tmp"));

async function rejection(p: Promise<unknown>): Promise<ToolError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ToolError)) throw new Error(`expected a ToolError, got ${String(err)}`);
  return err;
}

describe("atomicWriteFile: content, mode and links (C13)", () => {
  test("creates a new file with 0666 minus the umask", async () => {
    const res = await atomicWriteFile(f.at("new.txt"), Buffer.from("x\n"));
    expect(res).toEqual({ created: true, mode: 0o666 & ~process.umask(), sizeBytes: 2, nlinkBefore: null });
    expect(await fs.readFile(f.at("new.txt"), "utf8")).toBe("x\n");
  });

  test.each([
    ["C13-1 run.sh keeps 0755", "run.sh", "#!/bin/sh\necho hi\n", 0o755, "#!/bin/sh\necho bye\n", /^992e1ee5[0-9a-f]{48}b561afbd$/],
    ["C13-2 secret.env keeps 0600", "secret.env", "K=V\n", 0o600, "K=W\n", null],
    ["a 0640 file keeps 0640", "g.txt", "a\n", 0o640, "b\n", null],
  ])("%s", async (_name, rel, before, mode, after, shaPattern) => {
    await f.put(rel, before, mode);
    if (rel === "run.sh") expect(sha256Hex(Buffer.from(before))).toMatch(/^29900186[0-9a-f]{48}a6a9cbba$/);
    const res = await atomicWriteFile(f.at(rel), Buffer.from(after));
    expect(res).toMatchObject({ created: false, mode, nlinkBefore: 1 });
    expect(await modeOf(f.at(rel))).toBe(mode);
    const bytes = await fs.readFile(f.at(rel));
    expect(bytes.toString()).toBe(after);
    if (shaPattern) expect(sha256Hex(bytes)).toMatch(shaPattern);
  });

  test("an explicit mode wins over the existing one (restore) and is exact despite the umask", async () => {
    await f.put("m.txt", "a\n", 0o644);
    const res = await atomicWriteFile(f.at("m.txt"), Buffer.from("b\n"), { mode: 0o664 });
    expect(res.mode).toBe(0o664);
    expect(await modeOf(f.at("m.txt"))).toBe(0o664);
  });

  test("C13-2: the temp file of a 0600 file is never wider than 0600, at any observed moment (umask 0)", async () => {
    await f.put("secret.env", "K=V\n", 0o600);
    const previousUmask = process.umask(0);
    const seen: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        for (const name of await tempFilesIn(f.ws)) {
          const st = await fs.lstat(path.join(f.ws, name)).catch(() => null);
          if (st) seen.push(st.mode & 0o777);
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    try {
      await atomicWriteFile(f.at("secret.env"), Buffer.alloc(4 << 20, 0x41), {
        beforeCommit: async () => {
          const [tmp] = await tempFilesIn(f.ws);
          seen.push((await fs.lstat(path.join(f.ws, tmp))).mode & 0o777);
        },
      });
    } finally {
      polling = false;
      await poll;
      process.umask(previousUmask);
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((m) => m === 0o600)).toBe(true);
    expect(await modeOf(f.at("secret.env"))).toBe(0o600);
  });

  test("C13-5: a hard link is not written through; nlinkBefore reports it", async () => {
    const shared = path.join(f.root, "proj-out", "shared.txt");
    await fs.writeFile(shared, "shared\n");
    await fs.link(shared, f.at("hl.txt"));
    const res = await atomicWriteFile(f.at("hl.txt"), Buffer.from("changed\n"));
    expect(res.nlinkBefore).toBe(2);
    expect(await fs.readFile(shared, "utf8")).toBe("shared\n");
    expect(await fs.readFile(f.at("hl.txt"), "utf8")).toBe("changed\n");
    expect((await fs.stat(f.at("hl.txt"))).nlink).toBe(1);
  });

  test("the owner of the replaced file is kept (process runs as root here)", async () => {
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0);
    await f.put("owned.txt", "a\n");
    await fs.chown(f.at("owned.txt"), 1234, 2345);
    await atomicWriteFile(f.at("owned.txt"), Buffer.from("b\n"));
    const st = await fs.stat(f.at("owned.txt"));
    expect([st.uid, st.gid]).toEqual([1234, 2345]);
  });

  test("a concurrent reader sees only the old or the new bytes, never a prefix", async () => {
    const oldBytes = Buffer.alloc(3 << 20, 0x61);
    const newBytes = Buffer.alloc(5 << 20, 0x62);
    await f.put("big.txt", oldBytes);
    const allowed = new Set([sha256Hex(oldBytes), sha256Hex(newBytes)]);
    const observed = new Set<string>();
    let writing = true;
    const reader = (async () => {
      while (writing) {
        observed.add(sha256Hex(await fs.readFile(f.at("big.txt"))));
        await new Promise((r) => setImmediate(r));
      }
    })();
    await atomicWriteFile(f.at("big.txt"), newBytes);
    writing = false;
    await reader;
    observed.add(sha256Hex(await fs.readFile(f.at("big.txt"))));
    expect([...observed].every((h) => allowed.has(h))).toBe(true);
    expect(observed.has(sha256Hex(newBytes))).toBe(true);
  });
});

describe("atomicWriteFile: failures leave the target untouched and no temp file (C13-3)", () => {
  const faults: Array<[WriteFault, string]> = [
    [{ afterBytes: 4096, code: "ENOSPC" }, "enospc"],
    [{ afterBytes: 4096, code: "EDQUOT" }, "enospc"],
    [{ afterBytes: 0, code: "EIO" }, "io"],
    [{ afterBytes: 1 << 19, code: "EACCES" }, "eacces"],
    [{ afterBytes: 10, code: "EROFS" }, "erofs"],
  ];
  test.each(faults)("fault %o → write_failed reason %s", async (fault, reason) => {
    await f.put("run.sh", "#!/bin/sh\necho hi\n", 0o755);
    armWriteFault(fault);
    const err = await rejection(atomicWriteFile(f.at("run.sh"), Buffer.alloc(1 << 20, 0x23)));
    expect(err.errorName).toBe("write_failed");
    expect(err.detail).toMatchObject({ reason, errno: fault.code });
    expect(await fs.readFile(f.at("run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
    expect(await modeOf(f.at("run.sh"))).toBe(0o755);
    expect(await fs.readdir(f.ws)).toEqual(["notes.txt", "run.sh"]);
  });

  test("the fault hook is one-shot", async () => {
    armWriteFault({ afterBytes: 1, code: "EIO" });
    await expect(atomicWriteFile(f.at("a.txt"), Buffer.from("aa"))).rejects.toThrow(ToolError);
    await expect(atomicWriteFile(f.at("a.txt"), Buffer.from("aa"))).resolves.toMatchObject({ created: true });
  });

  test("a failing beforeCommit aborts: target untouched, temp removed, new directories removed", async () => {
    await expect(
      atomicWriteFile(f.at("d1/d2/x.txt"), Buffer.from("x"), {
        createDirs: true,
        dirsRoot: f.ws,
        beforeCommit: async () => {
          throw new ToolError("internal", "backup store down");
        },
      }),
    ).rejects.toThrow("backup store down");
    expect(await fs.readdir(f.ws)).toEqual(["notes.txt"]);
  });

  test("a failed write into a new directory removes the directories it created", async () => {
    armWriteFault({ afterBytes: 1, code: "ENOSPC" });
    await expect(atomicWriteFile(f.at("n1/n2/x.txt"), Buffer.from("xyz"), { createDirs: true, dirsRoot: f.ws })).rejects.toThrow(ToolError);
    expect(await fs.readdir(f.ws)).toEqual(["notes.txt"]);
  });
});

describe("atomicWriteFile: directories and refusals", () => {
  test("creates missing directories one at a time under dirsRoot", async () => {
    const res = await atomicWriteFile(f.at("a/b/c/new.txt"), Buffer.from("ok\n"), { createDirs: true, dirsRoot: f.ws });
    expect(res.created).toBe(true);
    expect(await fs.readFile(f.at("a/b/c/new.txt"), "utf8")).toBe("ok\n");
  });

  const refusals: Array<{ name: string; setup: () => Promise<void>; target: () => string; createDirs: boolean; error: string; reason?: string }> = [
    { name: "missing directory without createDirs", setup: async () => {}, target: () => f.at("nope/x.txt"), createDirs: false, error: "not_found", reason: "parent_missing" },
    {
      name: "directory outside dirsRoot (C01-3: nothing created)",
      setup: async () => {},
      target: () => path.join(f.root, "projX", "new.txt"),
      createDirs: true,
      error: "path_outside_workspace",
      reason: "lexical",
    },
    {
      name: "a component is a symlink (C03-2 race)",
      setup: () => fs.symlink(path.join(f.root, "proj-out"), f.at("ext")),
      target: () => f.at("ext/a/new.txt"),
      createDirs: true,
      error: "path_outside_workspace",
      reason: "parent_symlink",
    },
    { name: "a component is a file", setup: () => f.put("file", "x"), target: () => f.at("file/a/new.txt"), createDirs: true, error: "not_found", reason: "parent_not_directory" },
    { name: "the target is a directory", setup: () => fs.mkdir(f.at("dir")), target: () => f.at("dir"), createDirs: false, error: "is_directory" },
    {
      name: "the target became a symlink (not replaced by a regular file)",
      setup: () => fs.symlink("notes.txt", f.at("link.txt")),
      target: () => f.at("link.txt"),
      createDirs: false,
      error: "write_failed",
      reason: "target_changed",
    },
  ];
  test.each(refusals)("$name → $error", async ({ setup, target, createDirs, error, reason }) => {
    await setup();
    const before = await fs.readdir(f.root, { recursive: true });
    const err = await rejection(atomicWriteFile(target(), Buffer.from("x\n"), { createDirs, dirsRoot: f.ws }));
    expect(err.errorName).toBe(error);
    if (reason) expect(err.detail.reason).toBe(reason);
    expect(await fs.readdir(f.root, { recursive: true })).toEqual(before);
  });

  test("concurrent writers of one path never share a temp name and leave no temp files", async () => {
    const writes = Array.from({ length: 20 }, (_, i) => atomicWriteFile(f.at("same.txt"), Buffer.from(`v${i}\n`)));
    await Promise.all(writes);
    expect((await fs.readFile(f.at("same.txt"), "utf8")).startsWith("v")).toBe(true);
    expect(await tempFilesIn(f.ws)).toEqual([]);
  });
});
