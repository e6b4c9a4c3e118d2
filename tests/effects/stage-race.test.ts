import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { backupStoreFor } from "@/lib/backups/store";
import { db } from "@/lib/db";
import { applyRows, upperSource } from "@/lib/effects/apply";
import { changeSetLockCount, withChangeSetLock } from "@/lib/effects/change-set-lock";
import { readChangeSet } from "@/lib/effects/read-change-set";
import { stageEntries } from "@/lib/effects/stage";
import type { Workspace } from "@/lib/tools/define-tool";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";

/**
 * A change set's before-bytes are the named file's, or nothing (red team round 6, G6): a file of
 * the change set swapped for a link, or a directory above it swapped for one, between the moment
 * the change set was read and the moment it is staged, stops the staging with `conflict`; no
 * backup holds the link target's bytes and the backups already made for the set are removed.
 * The swap is made deterministically between `readChangeSet` and `stageEntries` (the step a
 * concurrent command's apply could land in before the per-workspace lock); a second part runs two
 * real commands at once and checks the same property.
 */

let ws: Workspace;
let outside: string;
const SECRET = "WS-SECRET-VALUE=hunter2-" + crypto.randomBytes(4).toString("hex") + "\n";
const HOST_SECRET = "HOST-SECRET-" + crypto.randomBytes(4).toString("hex") + "\n";
const FILES = 40;

beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});

let upper: string;
beforeEach(() => {
  emptyWorkspace(ws);
  outside = fs.mkdtempSync(path.join(os.tmpdir(), "ar-race-host-"));
  fs.writeFileSync(path.join(outside, "secret.txt"), HOST_SECRET, { mode: 0o600 });
  fs.mkdirSync(path.join(outside, "r"));
  fs.writeFileSync(path.join(outside, "r", `f${FILES - 1}`), HOST_SECRET);
  fs.writeFileSync(path.join(ws.root, ".env"), SECRET);
  fs.mkdirSync(path.join(ws.root, "r"));
  fs.mkdirSync(path.join(ws.root, "decoy"));
  fs.writeFileSync(path.join(ws.root, "decoy", `f${FILES - 1}`), SECRET);
  for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(ws.root, "r", `f${i}`), "a\n");
  // An upper layer as a command that rewrote every r/f* leaves it (plain files over the lower ones).
  upper = fs.mkdtempSync(path.join(os.tmpdir(), "ar-race-upper-"));
  fs.mkdirSync(path.join(upper, "r"));
  for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(upper, "r", `f${i}`), "b\n");
});
afterEach(() => {
  fs.rmSync(upper, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

const last = `r/f${FILES - 1}`;
/** Every link target a racing command can give the swapped file. */
const FILE_SWAPS: Array<[string, () => string]> = [
  ["a workspace secret", () => "../.env"],
  ["a host file outside the workspace (absolute)", () => path.join(outside, "secret.txt")],
  ["a host file through '..' after a link", () => "../hostlink/secret.txt"],
  ["a directory", () => "../decoy"],
  ["a dangling name", () => "../no-such-file"],
];
/** Every link a directory above the file can be swapped for. */
const DIR_SWAPS: Array<[string, () => string]> = [
  ["a directory outside holding the same name", () => path.join(outside, "r")],
  ["a directory inside holding a secret under the same name", () => "decoy"],
];

async function stageAfterSwap(swap: () => void) {
  const callId = `call_race_${crypto.randomBytes(4).toString("hex")}`;
  const backups = backupStoreFor(ws.id, callId);
  const read = await readChangeSet(upper, ws.root);
  expect(read.entries.filter((e) => e.kind === "modified")).toHaveLength(FILES);
  swap();
  const err = await stageEntries({ root: ws.root, entries: read.entries, source: upperSource(upper), backups }).then(
    () => null,
    (e: unknown) => e as { errorName?: string; detail?: { reason?: string } },
  );
  return { err, callId };
}

async function expectNoForeignBytes(callId: string) {
  // No backup row of the call is left, and no blob anywhere holds the secret bytes.
  expect(await db().backup.count({ where: { callId } })).toBe(0);
  for (const secret of [SECRET, HOST_SECRET]) {
    const sha = crypto.createHash("sha256").update(secret).digest("hex");
    expect(await db().blob.findUnique({ where: { sha256: sha }, select: { sha256: true } })).toBeNull();
  }
}

describe("a file of the change set swapped for a link between read and stage", () => {
  it.each(FILE_SWAPS)("to %s: conflict, no backup of the target", async (_name, target) => {
    fs.symlinkSync(outside, path.join(ws.root, "hostlink"));
    const { err, callId } = await stageAfterSwap(() => {
      fs.rmSync(path.join(ws.root, last), { recursive: true, force: true });
      fs.symlinkSync(target(), path.join(ws.root, last));
    });
    expect(err).toMatchObject({ errorName: "conflict", detail: { reason: "changed_during_call" } });
    await expectNoForeignBytes(callId);
  });

  it("replaced by another regular file (a rename inside the workspace): conflict by inode", async () => {
    const { err, callId } = await stageAfterSwap(() => fs.renameSync(path.join(ws.root, "decoy", `f${FILES - 1}`), path.join(ws.root, last)));
    expect(err).toMatchObject({ errorName: "conflict", detail: { reason: "changed_during_call" } });
    await expectNoForeignBytes(callId);
  });
});

describe("a directory above the change set's files swapped for a link between read and stage", () => {
  it.each(DIR_SWAPS)("to %s: conflict, no backup of what it names", async (_name, target) => {
    const { err, callId } = await stageAfterSwap(() => {
      fs.renameSync(path.join(ws.root, "r"), path.join(ws.root, "r-moved"));
      fs.symlinkSync(target(), path.join(ws.root, "r"));
    });
    expect(err).toMatchObject({ errorName: "conflict", detail: { reason: "changed_during_call" } });
    await expectNoForeignBytes(callId);
  });
});

describe("the unswapped change set", () => {
  it("stages and applies as before: every file backed up with its own bytes", async () => {
    const callId = `call_race_${crypto.randomBytes(4).toString("hex")}`;
    const read = await readChangeSet(upper, ws.root);
    const staged = await stageEntries({ root: ws.root, entries: read.entries, source: upperSource(upper), backups: backupStoreFor(ws.id, callId) });
    expect(staged.backupIds).toHaveLength(FILES);
    await applyRows(ws.root, staged.rows, upperSource(upper));
    expect(fs.readFileSync(path.join(ws.root, last), "utf8")).toBe("b\n");
    const sizes = await db().backup.findMany({ where: { callId }, select: { size: true } });
    expect(sizes.every((b) => b.size === 2)).toBe(true);
  });

  it("a file swapped for a link after staging is not chmodded or hashed through it at apply", async () => {
    // A mode-only change (chmod 755 r/f0) whose file becomes a link to a 0600 host file before the apply.
    fs.rmSync(path.join(upper, "r"), { recursive: true });
    fs.mkdirSync(path.join(upper, "r"));
    fs.copyFileSync(path.join(ws.root, "r", "f0"), path.join(upper, "r", "f0"));
    fs.chmodSync(path.join(upper, "r", "f0"), 0o755);
    const callId = `call_race_${crypto.randomBytes(4).toString("hex")}`;
    const read = await readChangeSet(upper, ws.root);
    expect(read.entries.map((e) => [e.path, e.kind])).toEqual([["r/f0", "mode"]]);
    const staged = await stageEntries({ root: ws.root, entries: read.entries, source: upperSource(upper), backups: backupStoreFor(ws.id, callId) });
    const host = path.join(outside, "secret.txt");
    fs.rmSync(path.join(ws.root, "r", "f0"));
    fs.symlinkSync(host, path.join(ws.root, "r", "f0"));
    await expect(applyRows(ws.root, staged.rows, upperSource(upper))).rejects.toBeTruthy();
    expect(fs.statSync(host).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(host, "utf8")).toBe(HOST_SECRET);
  });
});

describe("one change set at a time per workspace", () => {
  it("the lock runs holders in arrival order and is released after a failure", async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = withChangeSetLock(ws.root, async () => {
      order.push("first:start");
      await gate;
      order.push("first:end");
      throw new Error("boom");
    });
    const second = withChangeSetLock(ws.root, async () => {
      order.push("second");
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(["first:start"]);
    release();
    await expect(first).rejects.toThrow("boom");
    await second;
    expect(order).toEqual(["first:start", "first:end", "second"]);
    expect(changeSetLockCount()).toBe(0);
  });

  it("two real commands at once, one swapping a file of the other's change set for a link to .env: no backup ever holds the secret", async () => {
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(ws.root, "r", `g${i}`), "a\n");
    const b = runBoxed(ws, "sleep 0.3; rm r/g299 && ln -s ../.env r/g299");
    const a = runBoxed(ws, "for i in $(seq 0 299); do echo b > r/g$i; done; sleep 0.3");
    const [ra, rb] = await Promise.allSettled([a, b]);
    // Whatever the order, each call either applied or answered conflict; neither kept foreign bytes.
    if (ra.status === "rejected") expect(ra.reason).toMatchObject({ errorName: "conflict" });
    // B's link names a secret, so its change set is held (round 8): runBoxed has no call row to hold
    // it on, which shows as the call left "running"; or it lost the race as a conflict.
    if (rb.status === "rejected") expect(String((rb.reason as Error).message ?? rb.reason)).toMatch(/left "running"|changed while|conflict/);
    const sha = crypto.createHash("sha256").update(SECRET).digest("hex");
    expect(await db().backup.count({ where: { blobSha: sha } })).toBe(0);
    expect(fs.readFileSync(path.join(ws.root, ".env"), "utf8")).toBe(SECRET);
    expect(changeSetLockCount()).toBe(0);
  });
});
