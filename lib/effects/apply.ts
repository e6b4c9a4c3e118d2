import { execFile } from "node:child_process";
import crypto from "node:crypto";
import { constants as fsConstants, createReadStream, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { getBlob } from "@/lib/backups/blobs";
import { ToolError } from "@/lib/errors";
import { comparePaths } from "@/lib/effects/read-change-set";
import type { FileChangeRow } from "@/lib/effects/journal";
import { forgetLinkScans } from "@/lib/effects/link-check";
import { atomicWriteFile } from "@/lib/workspace/atomic-write";
import { assertStillNamed, holdDirectory, openChecked, splitRel, type HeldDirectory } from "@/lib/workspace/hold-directory";
import { BeneathReader } from "@/lib/workspace/read-beneath";

/**
 * Puts journaled after-states into the real workspace. Idempotent: every step first looks at what
 * is there and does nothing when the path already is as wanted, so a restart can run the same
 * rows again after a crash (roll forward), or run them with before and after swapped (roll back,
 * revert). Order: removals deepest first (files, then the directories they emptied), then
 * creations shallowest first (directories, then files and symlinks). Files are replaced
 * atomically (temp file in the same directory, rename); the caller makes the whole set durable at
 * once (`syncWorkspace`) before it marks the journal applied. New files and directories get the
 * owner of the directory they are created in (when the gateway may chown); modes come from the
 * rows. A directory is only removed when empty: files someone added meanwhile are never lost.
 * Another change set may be applied between any two steps, so no step acts on a path it checked
 * earlier: each row holds its directory open (lib/workspace/hold-directory.ts), modes and owners
 * are set on descriptors opened without following links, and entries are placed and removed
 * through the held directory.
 */

const execFileAsync = promisify(execFile);

/**
 * Up to this many rows, each applied file is fsynced on its own (cheap for a few files); above it
 * the whole set is made durable at once with one syncfs before the journal says "applied".
 */
export const DURABLE_EACH_MAX = 64;


/** Where the bytes of an after-state come from. */
export interface ContentSource {
  /** The bytes of `row`'s after-state (a file). */
  bytes(row: FileChangeRow): Promise<Buffer>;
}

/**
 * The after bytes live in an overlay upper layer (`upper/<path>`). Bytes are checked against the
 * journaled sha256 where there is one, so a redo after a crash never applies a torn file (it
 * fails, and recovery rolls back instead).
 */
export function upperSource(upper: string): ContentSource {
  return {
    async bytes(row) {
      const bytes = await readNoFollow(path.join(upper, row.path));
      if (row.afterSha && crypto.createHash("sha256").update(bytes).digest("hex") !== row.afterSha) {
        throw new ToolError("internal", `The captured content of ${row.path} no longer matches its recorded sha256.`, { path: row.path, reason: "capture_damaged" });
      }
      return bytes;
    },
  };
}

/** The after bytes are blobs (sha256 in `afterSha`): a revert, a rewind, a roll back. */
export const blobSource: ContentSource = {
  async bytes(row) {
    if (!row.afterSha) throw new ToolError("internal", `No stored bytes for ${row.path}.`, { path: row.path });
    const bytes = await getBlob(row.afterSha);
    if (!bytes) throw new ToolError("internal", `The stored bytes of ${row.path} are missing from the backup store.`, { path: row.path, sha256: row.afterSha });
    return bytes;
  },
};

async function readNoFollow(abs: string): Promise<Buffer> {
  const handle = await fs.open(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The rows with before and after swapped: applying them undoes the original rows. */
export function inverse(rows: FileChangeRow[]): FileChangeRow[] {
  return rows.map((r) => ({
    ...r,
    kind: inverseKind(r),
    beforeType: r.afterType,
    beforeSha: r.afterSha,
    beforeMode: r.afterMode,
    beforeLink: r.afterLink,
    afterType: r.beforeType,
    afterSha: r.beforeSha,
    afterMode: r.beforeMode,
    afterLink: r.beforeLink,
  }));
}

function inverseKind(r: FileChangeRow): FileChangeRow["kind"] {
  switch (r.kind) {
    case "created":
      return "deleted";
    case "deleted":
      return r.beforeType === "symlink" ? "symlink" : "created";
    case "dir_created":
      return "dir_deleted";
    case "dir_deleted":
      return "dir_created";
    default:
      return r.kind;
  }
}

/** Progress hook for tests and benchmarks: called after each applied row. */
export type ApplyObserver = (done: number, total: number) => void | Promise<void>;

/**
 * Makes every row's after-state true in the workspace `root`.
 *
 * @param rows journaled rows (any order; sorted here)
 * @param source where file bytes come from
 * @param options `durable`, and `skipped` (note failed rows and go on: see ApplyOptions)
 * @throws ToolError `path_outside_workspace` (reason "parent_symlink") when a directory on a row's
 *   path is a symlink; `conflict` (reason "type_changed") when a row's name was replaced between
 *   its check and the call it guards; `write_failed` (reason "target_changed") when a row's
 *   directory was replaced by another one meanwhile, or for file-system errors (the journal stays
 *   "applying", so a retry or a restart finishes it)
 */
export async function applyRows(root: string, rows: FileChangeRow[], source: ContentSource, observe?: ApplyObserver, options: ApplyOptions = {}): Promise<void> {
  // The links a write tool reuses from a recent walk may change with these rows.
  forgetLinkScans(root);
  try {
    await applyEach(root, rows, source, observe, options);
  } finally {
    forgetLinkScans(root);
  }
}

async function applyEach(root: string, rows: FileChangeRow[], source: ContentSource, observe: ApplyObserver | undefined, options: ApplyOptions): Promise<void> {
  const durable = options.durable ?? false;
  const skipped = options.skipped;
  const removals = rows.filter((r) => r.beforeType !== null && (r.afterType === null || r.afterType !== r.beforeType));
  removals.sort((a, b) => comparePaths(b.path, a.path));
  const creations = rows.filter((r) => r.afterType !== null);
  creations.sort((a, b) => comparePaths(a.path, b.path));
  let done = 0;
  const total = removals.length + creations.length;
  const tick = async () => {
    if (observe) await observe(++done, total);
  };
  // Every row holds its directory afresh (no directory is trusted from an earlier row: another
  // apply may have run in between), and every call below acts through that descriptor.
  const remove = (row: FileChangeRow) => guard(row, () => removeRow(row));
  const make = (row: FileChangeRow) => guard(row, () => makeRow(row));
  // With `skipped`, a failed row is noted and the others still run (a roll back); else it throws.
  const guard = async (row: FileChangeRow, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      if (!skipped) throw err;
      skipped.push({ path: row.path, error: err });
      await tick();
    }
  };
  const removeRow = async (row: FileChangeRow) => {
    const { dir: dirRel, name } = rowParts(row.path);
    let dir: HeldDirectory;
    try {
      dir = await holdDirectory(root, dirRel);
    } catch (err) {
      // Its directory is gone already (a redo after a crash): nothing left to remove.
      if (err instanceof ToolError && err.detail.reason === "parent_missing") return tick();
      throw err;
    }
    try {
      const abs = dir.at(name);
      const st = await lstatOrNull(abs);
      if (st && typeOf(st) === row.beforeType) {
        await raceHook("remove", row.path);
        // rmdir and unlink never follow the name itself; the directory is checked once more, so
        // one swapped since the hold fails the row.
        await dir.verify();
        if (st.isDirectory()) await removeEmptyDir(abs, row.path);
        else await fs.unlink(abs).catch(ignoreMissing);
      }
    } finally {
      await dir.close();
    }
    await tick();
  };
  const makeRow = async (row: FileChangeRow) => {
    const { dir: dirRel, name } = rowParts(row.path);
    const dir = await holdDirectory(root, dirRel);
    try {
      await create(root, dir, name, row, source, durable);
    } finally {
      await dir.close();
    }
    await tick();
  };
  // Files and symlinks go in parallel (the file system's latency, not the CPU, is the cost);
  // directories one by one, in order, around them.
  await inPool(removals.filter((r) => r.beforeType !== "dir"), remove);
  for (const row of removals.filter((r) => r.beforeType === "dir")) await remove(row);
  for (const row of creations.filter((r) => r.afterType === "dir")) await make(row);
  await inPool(creations.filter((r) => r.afterType !== "dir"), make);
}

/** Options of `applyRows`. */
export interface ApplyOptions {
  /** fsync each file as it is written (default false: the caller syncs the workspace once). */
  durable?: boolean;
  /**
   * When given, a row that fails is pushed here (its path and error) and the remaining rows still
   * run, so one row never stops the others; without it the first failure is thrown.
   */
  skipped?: Array<{ path: string; error: unknown }>;
}

/** Files worked on at once by an apply or a stage. */
export const APPLY_CONCURRENCY = 16;

/** Runs `fn` over `items` with at most APPLY_CONCURRENCY in flight; the first failure is thrown once all settled. */
export async function inPool<T>(items: T[], fn: (item: T, index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const worker = async () => {
    while (next < items.length && failure === null) {
      const i = next++;
      try {
        await fn(items[i], i);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(APPLY_CONCURRENCY, items.length) }, worker));
  if (failure !== null) throw failure;
}

/**
 * Makes one row's after-state true at `name` in the held directory `dir`. Nothing here is done by
 * path after a check: modes and owners are set on a descriptor opened with O_NOFOLLOW and compared
 * (device, inode) with the entry that was checked; new entries are placed through the directory's
 * descriptor after the directory was checked once more.
 */
async function create(root: string, dir: HeldDirectory, name: string, row: FileChangeRow, source: ContentSource, durable: boolean): Promise<void> {
  const abs = dir.at(name);
  const st = await lstatOrNull(abs);
  const mode = row.afterMode ?? undefined;
  if (row.afterType === "dir") {
    if (st && !st.isDirectory()) throw new ToolError("conflict", `${row.path} is no longer a directory`, { path: row.path, reason: "type_changed" });
    if (st && (mode === undefined || (st.mode & 0o7777) === mode)) return;
    await raceHook("dir", row.path);
    if (!st) {
      await dir.verify();
      // mkdir never follows the name: something put there since the check fails the row.
      await fs.mkdir(abs, { mode: mode ?? 0o755 }).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new ToolError("conflict", `${row.path} appeared while changes were applied`, { path: row.path, reason: "type_changed" });
        throw err;
      });
    }
    const handle = await openChecked(abs, "dir", st, row.path);
    try {
      if (!st) await giveOwner(handle, dir);
      if (mode !== undefined && ((await handle.stat()).mode & 0o7777) !== mode) await handle.chmod(mode);
    } finally {
      await handle.close();
    }
    return;
  }
  if (row.afterType === "symlink") {
    if (st?.isSymbolicLink() && (await fs.readlink(abs)) === row.afterLink) return;
    const tmpName = `.${crypto.randomBytes(8).toString("hex")}.agent-reach.tmp`;
    const tmp = dir.at(tmpName);
    await fs.symlink(row.afterLink ?? "", tmp);
    try {
      if (process.getuid?.() === 0) {
        const parent = await dir.stat();
        await fs.lchown(tmp, parent.uid, parent.gid);
      }
      await raceHook("symlink", row.path);
      await dir.verify();
      await fs.rename(tmp, abs);
    } catch (err) {
      await fs.unlink(tmp).catch(() => undefined);
      throw err;
    }
    return;
  }
  // A regular file.
  if (st?.isFile()) {
    const sameMode = mode === undefined || (st.mode & 0o7777) === mode;
    const modeOnly = row.kind === "mode" && row.afterSha === null;
    if (modeOnly && sameMode) return;
    if (modeOnly || (row.afterSha && st.size === row.size)) {
      await raceHook("file", row.path);
      // The file checked above, open without following a link; its bytes are hashed and its mode
      // set through the same descriptor, so a name swapped meanwhile changes nothing it points to.
      const handle = await openChecked(abs, "file", st, row.path);
      try {
        // A bulky file whose mode alone changed: no bytes were kept, only the mode moves.
        if (modeOnly || (await hashHandle(handle)) === row.afterSha) {
          await raceHook("file-checked", row.path);
          if (!sameMode) {
            await handle.chmod(mode!);
            await assertStillNamed(abs, handle, row.path);
          }
          return;
        }
      } finally {
        await handle.close();
      }
    }
  }
  const bytes = await source.bytes(row);
  const created = !st?.isFile();
  await atomicWriteFile(path.join(/*turbopackIgnore: true*/ root, row.path), bytes, { mode, durable, createDirs: false, dirsRoot: root });
  if (created && process.getuid?.() === 0) {
    const handle = await openChecked(abs, "file", null, row.path);
    try {
      await giveOwner(handle, dir);
    } finally {
      await handle.close();
    }
  }
}

/** The directory and name of a row's path; rejects empty, "." and ".." components. */
function rowParts(rel: string): { dir: string; name: string } {
  if (rel === "" || rel.split("/").some((c) => c === "" || c === "." || c === "..")) {
    throw new ToolError("path_invalid", `Invalid change-set path ${JSON.stringify(rel)}.`, { path: rel });
  }
  return splitRel(rel);
}

/** New entries get the owner of their directory, as the workspace's own files have (root only). */
async function giveOwner(handle: fs.FileHandle, dir: HeldDirectory): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const [parent, st] = await Promise.all([dir.stat(), handle.stat()]);
  if (st.uid !== parent.uid || st.gid !== parent.gid) await handle.chown(parent.uid, parent.gid);
}

async function hashHandle(handle: fs.FileHandle): Promise<string> {
  const hash = crypto.createHash("sha256");
  for await (const chunk of createReadStream("", { fd: handle.fd, autoClose: false, start: 0 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * Test hook: awaited between a row's check and the call it guards ("remove": before unlink or
 * rmdir; "dir": before mkdir or chmod of a directory; "symlink": before the link is renamed into
 * place; "file": before a file whose bytes already match is opened; "file-checked": after it was
 * hashed, before its mode is set). Tests swap names there to prove the race changes nothing
 * outside the workspace. Null outside tests.
 */
export type ApplyRaceHook = (point: "remove" | "dir" | "symlink" | "file" | "file-checked", rel: string) => void | Promise<void>;
let applyRaceHook: ApplyRaceHook | null = null;

/** Installs (or, with null, removes) the test hook of `ApplyRaceHook`. */
export function setApplyRaceHook(hook: ApplyRaceHook | null): void {
  applyRaceHook = hook;
}

async function raceHook(point: Parameters<ApplyRaceHook>[0], rel: string): Promise<void> {
  if (applyRaceHook) await applyRaceHook(point, rel);
}

async function removeEmptyDir(abs: string, rel: string): Promise<void> {
  try {
    await fs.rmdir(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    if (code === "ENOTEMPTY" || code === "EEXIST") {
      throw new ToolError("conflict", `The directory ${rel} holds files that are not part of this change; it was left in place.`, { path: rel, reason: "directory_not_empty" });
    }
    throw err;
  }
}

function ignoreMissing(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
}

/** Type of an existing entry as rows name it. */
export function typeOf(st: Stats): "file" | "symlink" | "dir" | "other" {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "dir";
  if (st.isFile()) return "file";
  return "other";
}

export async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await fs.lstat(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw err;
  }
}

/** Flushes the workspace's file system (syncfs), so every applied row is durable at once. */
export async function syncWorkspace(root: string): Promise<void> {
  await execFileAsync("sync", ["-f", root]).catch(() => execFileAsync("sync", []));
}

/**
 * The state of a path now, for conflict checks: type, sha256 (files), mode, link; read through
 * `reader` (no link on the path followed; the hash from the file lstat found).
 * @throws WorkspaceChanged when a directory on the path is a symbolic link, or the file was
 *   swapped between its lstat and its hash
 */
export async function currentState(reader: BeneathReader, rel: string, withHash: boolean): Promise<{ type: "file" | "symlink" | "dir" | "other" | null; sha: string | null; mode: number | null; link: string | null; size: number }> {
  const st = reader.lstat(rel);
  if (!st) return { type: null, sha: null, mode: null, link: null, size: 0 };
  const type = typeOf(st);
  return {
    type,
    sha: type === "file" && withHash ? await reader.hash(rel, { dev: st.dev, ino: st.ino }) : null,
    mode: type === "symlink" ? 0o777 : st.mode & 0o7777,
    link: type === "symlink" ? reader.readlink(rel) : null,
    size: st.size,
  };
}

/**
 * Puts the before-states back after a failed apply, row by row. A row whose path another change
 * took over meanwhile (replaced by a link or another entry, its directory swapped or gone) is left
 * as that change made it: the roll back never acts through what it did not check, and it never
 * undoes someone else's change. A bulky file that kept no backup keeps its new content. Used by a
 * failed apply and by recovery when the new content is gone.
 *
 * @returns the paths left as they are (taken over meanwhile)
 * @throws the first error of a row that failed for another reason (a file-system error), after
 *   every other row was put back
 */
export async function rollBack(root: string, rows: FileChangeRow[]): Promise<string[]> {
  const back = inverse(rows).filter((r) => !(r.afterType === "file" && r.afterSha === null));
  const skipped: Array<{ path: string; error: unknown }> = [];
  await applyRows(root, back, blobSource, undefined, { skipped });
  await syncWorkspace(root);
  const hard = skipped.find((s) => !takenOver(s.error));
  if (hard) throw hard.error;
  if (skipped.length > 0) console.error(`[agent-reach] roll back left ${skipped.length} path(s) as another change made them: ${skipped.map((s) => JSON.stringify(s.path)).join(", ")}`);
  return skipped.map((s) => s.path);
}

/** Errors that mean a row's path (or its directory) changed since the apply looked at it. */
function takenOver(err: unknown): boolean {
  if (err instanceof ToolError) {
    if (err.errorName === "conflict" || err.errorName === "path_outside_workspace" || err.errorName === "not_found") return true;
    return err.errorName === "write_failed" && err.detail.reason === "target_changed";
  }
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP" || code === "EEXIST" || code === "EISDIR";
}
