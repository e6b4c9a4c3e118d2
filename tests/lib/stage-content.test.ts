import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { destroyedHow, isLoadedCache, maxDeletions, stageEntries } from "@/lib/effects/stage";
import type { ChangeEntry, EntryState } from "@/lib/effects/read-change-set";
import type { BackupRecord, BackupStore } from "@/lib/backups/types";

/**
 * Staging judges a change set by what its files ARE, not by the directory they sit in:
 * - compiled code an interpreter loads instead of the reviewed source (Python bytecode in
 *   `__pycache__` or beside the source, bootsnap's caches) is held, listed and backed up, never
 *   applied as a bulky generated file; removing it stays generated work;
 * - content destroyed without a deletion (a file replaced by a link, emptied, cut by half) counts
 *   against the large-deletion threshold like a deletion.
 * On a real temporary workspace, with an in-memory backup store.
 */

let root: string;
beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "stage-content-")));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
beforeEach(() => {
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
});

/** A backup store that keeps what it is given, to check what was saved. */
function memoryBackups(): BackupStore & { saved: BackupRecord[] } {
  const saved: BackupRecord[] = [];
  return {
    saved,
    save: async ({ path: p, bytes, mode }) => {
      const rec = { id: `b${saved.length}`, path: p, sha256: crypto.createHash("sha256").update(bytes).digest("hex"), size: bytes.length, mode, callId: "call_test", createdAt: new Date() };
      saved.push(rec);
      return rec;
    },
    get: async () => null,
    list: async () => ({ items: [], total: 0 }),
    discard: async () => {},
  };
}

/** Writes `rel` in the workspace and returns its before-state as the change set reader records it. */
function existing(rel: string, bytes: string | Buffer): EntryState {
  const abs = path.join(root, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, bytes);
  const st = fs.lstatSync(abs);
  return { type: "file", mode: st.mode & 0o7777, size: st.size, dev: st.dev, ino: st.ino };
}

const file = (size: number): EntryState => ({ type: "file", mode: 0o644, size });
const dir: EntryState = { type: "dir", mode: 0o755, size: 0 };

async function stage(entries: ChangeEntry[], after: Record<string, string | Buffer> = {}, extra: Partial<Parameters<typeof stageEntries>[0]> = {}) {
  const backups = memoryBackups();
  const staged = await stageEntries({ root, entries, backups, source: { bytes: async (row) => Buffer.from(after[row.path] ?? "") }, ...extra });
  return { ...staged, saved: backups.saved };
}

describe("compiled code loaded instead of the source", () => {
  const held = [
    "src/__pycache__/mod.cpython-312.pyc",
    "__pycache__/mod.cpython-311.opt-1.pyc",
    "a/b/c/__pycache__/x.cpython-313.opt-2.pyc",
    "src/__pycache__/anything-at-all",
    "mod.pyc",
    "pkg/sub/mod.pyo",
    "tmp/cache/bootsnap/compile-cache-iseq/3f/2a9c",
    "tmp/cache/bootsnap/compile-cache-yaml/00/11",
    "tmp/cache/bootsnap/load-path-cache",
    "tmp/cache/bootsnap-compile-cache/ab/cd",
    "tmp/cache/bootsnap-load-path-cache",
  ];
  const notHeld = [
    "src/mod.py",
    "docs/pycache.md",
    "src/pycache/mod.txt",
    ".venv/lib/python3.12/site-packages/pkg/__pycache__/mod.cpython-312.pyc",
    "node_modules/pkg/__pycache__/x.pyc",
    ".tox/py312/lib/python3.12/site-packages/a.pyc",
    "vendor/bundle/ruby/3.2.0/gems/bootsnap-1.17.0/lib/bootsnap/compile_cache.rb",
  ];

  it.each(held)("%s is a loaded cache", (rel) => expect(isLoadedCache(rel)).toBe(true));
  it.each(notHeld)("%s is not (a source, or inside a tree applied unseen anyway)", (rel) => expect(isLoadedCache(rel)).toBe(false));

  it.each(held)("a change set creating %s is held, lists it and names it", async (rel) => {
    const parts = rel.split("/");
    const entries: ChangeEntry[] = parts.slice(0, -1).map((_, i) => ({ path: parts.slice(0, i + 1).join("/"), kind: "dir_created" as const, before: null, after: dir }));
    entries.push({ path: rel, kind: "created", before: null, after: file(16) });
    const s = await stage(entries, { [rel]: Buffer.from([0xcb, 0x0d, 0x0d, 0x0a, 1, 2, 3, 0]) });
    expect(s.holdReasons.join(" | ")).toContain(`writes ${rel} (compiled code an interpreter loads instead of the reviewed source`);
    expect(s.summary.bulky).toBeUndefined();
    expect(s.summary.files.map((f) => f.path)).toContain(rel);
    expect(s.rows.find((r) => r.path === rel)?.bulky).toBe(false);
  });

  it("replacing existing bytecode is held and the old bytes are backed up", async () => {
    const rel = "src/__pycache__/mod.cpython-312.pyc";
    const before = existing(rel, Buffer.from("old bytecode"));
    const s = await stage([{ path: rel, kind: "modified", before, after: file(12) }], { [rel]: "new bytecode" });
    expect(s.holdReasons.some((r) => r.startsWith(`writes ${rel}`))).toBe(true);
    expect(s.saved.map((b) => b.path)).toEqual([rel]);
  });

  it("a link in its place, or a link named __pycache__, is held too", async () => {
    existing("src/mod.py", "print('clean')\n");
    existing("evil/mod.cpython-312.pyc", "x");
    const inside = await stage([{ path: "src/__pycache__/mod.cpython-312.pyc", kind: "symlink", before: null, after: { type: "symlink", mode: 0o777, size: 0, link: "../../evil/mod.cpython-312.pyc" } }]);
    expect(inside.holdReasons.join(" | ")).toMatch(/writes src\/__pycache__\/mod\.cpython-312\.pyc/);
    const named = await stage([{ path: "src/__pycache__", kind: "symlink", before: null, after: { type: "symlink", mode: 0o777, size: 0, link: "../evil" } }]);
    expect(named.holdReasons.join(" | ")).toMatch(/links src\/__pycache__ → \.\.\/evil/);
  });

  it("removing bytecode (the interpreter recompiles) or an empty __pycache__ applies as generated work", async () => {
    const entries: ChangeEntry[] = [];
    for (let i = 0; i < maxDeletions() + 5; i++) {
      const rel = `src/__pycache__/m${i}.cpython-312.pyc`;
      entries.push({ path: rel, kind: "deleted", before: existing(rel, `pyc ${i}`), after: null });
    }
    entries.push({ path: "lib/__pycache__", kind: "dir_created", before: null, after: dir });
    const s = await stage(entries);
    expect(s.holdReasons).toEqual([]);
    expect(s.saved).toEqual([]);
    expect(s.summary.destroyed).toBeUndefined();
  });
});

describe("content destroyed counts like a deletion", () => {
  const text = (lines: number) => Array.from({ length: lines }, (_, i) => `line ${i}\n`).join("");
  const cases: Array<[string, Pick<ChangeEntry, "kind" | "before" | "after">, string | null, string | null, ReturnType<typeof destroyedHow>]> = [
    ["deleted file", { kind: "deleted", before: file(10), after: null }, text(1), null, "deleted"],
    ["deleted link", { kind: "deleted", before: { type: "symlink", mode: 0o777, size: 0, link: "x" }, after: null }, null, null, "deleted"],
    ["file replaced by a link", { kind: "symlink", before: file(10), after: { type: "symlink", mode: 0o777, size: 0, link: "../a.js" } }, null, null, "link"],
    ["emptied", { kind: "modified", before: file(70), after: file(0) }, text(10), "", "emptied"],
    ["10 lines to 4", { kind: "modified", before: file(70), after: file(28) }, text(10), text(4), "halved"],
    ["10 lines to 1 long line", { kind: "modified", before: file(70), after: file(500) }, text(10), "x".repeat(499) + "\n", "halved"],
    ["binary cut below half", { kind: "modified", before: file(100), after: file(40) }, "\0".repeat(100), "\0".repeat(40), "halved"],
    ["10 lines to 5 (half kept)", { kind: "modified", before: file(70), after: file(35) }, text(10), text(5), null],
    ["an ordinary edit", { kind: "modified", before: file(70), after: file(72) }, text(10), text(9) + "changed!\n", null],
    ["grows", { kind: "modified", before: file(7), after: file(70) }, text(1), text(10), null],
    ["mode only", { kind: "mode", before: file(7), after: file(7) }, text(1), text(1), null],
    ["created", { kind: "created", before: null, after: file(0) }, null, "", null],
    ["empty file stays empty", { kind: "modified", before: file(0), after: file(0) }, "", "", null],
    ["a link replaced by a file", { kind: "modified", before: { type: "symlink", mode: 0o777, size: 0, link: "x" }, after: file(0) }, null, "", null],
  ];
  it.each(cases)("%s", (_, e, before, after, want) => {
    expect(destroyedHow(e, before === null ? null : Buffer.from(before), after === null ? null : Buffer.from(after))).toBe(want);
  });

  /** `n` existing files in big/ changed by `how`. */
  function destroying(n: number, how: "link" | "empty" | "halve" | "delete" | "mixed"): { entries: ChangeEntry[]; after: Record<string, string> } {
    const entries: ChangeEntry[] = [];
    const after: Record<string, string> = {};
    for (let i = 0; i < n; i++) {
      const rel = `big/f${String(i).padStart(3, "0")}.js`;
      const before = existing(rel, text(10));
      const kind = how === "mixed" ? (["link", "empty", "halve", "delete"] as const)[i % 4] : how;
      if (kind === "link") entries.push({ path: rel, kind: "symlink", before, after: { type: "symlink", mode: 0o777, size: 0, link: "../src/a.js" } });
      else if (kind === "delete") entries.push({ path: rel, kind: "deleted", before, after: null });
      else {
        after[rel] = kind === "empty" ? "" : text(2);
        entries.push({ path: rel, kind: "modified", before, after: file(after[rel].length) });
      }
    }
    return { entries, after };
  }

  it.each([
    ["link", /^destroys 70 files' content: 70 replaced by links \(big\/f000\.js, big\/f001\.js, big\/f002\.js, …\) \(more than 50\)$/],
    ["empty", /^destroys 70 files' content: 70 emptied \(big\/f000\.js, .*\) \(more than 50\)$/],
    ["halve", /^destroys 70 files' content: 70 cut to less than half \(/],
    ["mixed", /^destroys 70 files' content: 17 deleted, 18 replaced by links, 18 emptied, 17 cut to less than half \(/],
    ["delete", /^deletes 70 files \(more than 50\)$/],
  ] as const)("70 files (%s) in one change set: held, each backed up", async (how, reason) => {
    expect(maxDeletions()).toBe(50);
    const { entries, after } = destroying(70, how);
    const s = await stage(entries, after);
    expect(s.holdReasons.filter((r) => /^(destroys|deletes)/.test(r))).toEqual([expect.stringMatching(reason)]);
    expect(s.summary.destroyed).toBe(70);
    expect(s.saved).toHaveLength(70);
  });

  it("below the threshold it applies, and what the agent destroyed before counts with it", async () => {
    const { entries, after } = destroying(30, "empty");
    const alone = await stage(entries, after);
    expect(alone.holdReasons).toEqual([]);
    expect(alone.summary.destroyed).toBe(30);
    const prior = await stage(entries, after, { priorDeletions: async () => ({ count: 25, emptied: 20, calls: ["call_a", "call_b"] }) });
    expect(prior.holdReasons).toEqual([
      "destroys 30 files' content: 30 emptied (big/f000.js, big/f001.js, big/f002.js, …), and this agent's commands deleted 5 more and destroyed the content of 20 more in the last 30 minutes without a reviewer (call_a, call_b): more than 50 together",
    ]);
    const off = await stage(entries, after, { holdLargeDeletions: false, priorDeletions: async () => ({ count: 99, calls: ["call_a"] }) });
    expect(off.holdReasons).toEqual([]);
  });
});
