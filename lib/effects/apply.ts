import { execFile } from "node:child_process";
import crypto from "node:crypto";
import { constants as fsConstants, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { getBlob } from "@/lib/backups/blobs";
import { ToolError } from "@/lib/errors";
import { comparePaths } from "@/lib/effects/read-change-set";
import type { FileChangeRow } from "@/lib/effects/journal";
import { atomicWriteFile } from "@/lib/workspace/atomic-write";
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
 *
 * What is already in the workspace is compared and re-moded through descriptors opened without
 * following links (lib/workspace/read-beneath.ts), never by a path checked a moment earlier: a
 * file swapped for a link meanwhile is neither hashed nor chmodded through the link.
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
 * @throws ToolError `path_outside_workspace` when a parent directory turned into a symlink or
 *   left the root; `write_failed` for file-system errors (the journal stays "applying", so a
 *   retry or a restart finishes it)
 */
export async function applyRows(root: string, rows: FileChangeRow[], source: ContentSource, observe?: ApplyObserver, options: { durable?: boolean } = {}): Promise<void> {
  const durable = options.durable ?? false;
  const parents = new ParentCheck(root);
  const reader = new BeneathReader(root);
  try {
    await applyWith(root, rows, source, reader, parents, durable, observe);
  } finally {
    reader.close();
  }
}

async function applyWith(root: string, rows: FileChangeRow[], source: ContentSource, reader: BeneathReader, parents: ParentCheck, durable: boolean, observe?: ApplyObserver): Promise<void> {
  const removals = rows.filter((r) => r.beforeType !== null && (r.afterType === null || r.afterType !== r.beforeType));
  removals.sort((a, b) => comparePaths(b.path, a.path));
  const creations = rows.filter((r) => r.afterType !== null);
  creations.sort((a, b) => comparePaths(a.path, b.path));
  let done = 0;
  const total = removals.length + creations.length;
  const tick = async () => {
    if (observe) await observe(++done, total);
  };
  const remove = async (row: FileChangeRow) => {
    let abs: string;
    try {
      abs = await parents.resolve(row.path);
    } catch (err) {
      // Its directory is gone already (a redo after a crash): nothing left to remove.
      if (err instanceof ToolError && err.detail.reason === "parent_missing") return tick();
      throw err;
    }
    const st = await lstatOrNull(abs);
    if (st && typeOf(st) === row.beforeType) {
      if (st.isDirectory()) await removeEmptyDir(abs, row.path);
      else await fs.unlink(abs).catch(ignoreMissing);
    }
    await tick();
  };
  const make = async (row: FileChangeRow) => {
    const abs = await parents.resolve(row.path);
    await create(root, abs, row, source, durable, reader);
    await tick();
  };
  // Files and symlinks go in parallel (the file system's latency, not the CPU, is the cost);
  // directories one by one, in order, around them.
  await inPool(removals.filter((r) => r.beforeType !== "dir"), remove);
  for (const row of removals.filter((r) => r.beforeType === "dir")) await remove(row);
  for (const row of creations.filter((r) => r.afterType === "dir")) await make(row);
  await inPool(creations.filter((r) => r.afterType !== "dir"), make);
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

async function create(root: string, abs: string, row: FileChangeRow, source: ContentSource, durable: boolean, reader: BeneathReader): Promise<void> {
  const st = reader.lstat(row.path);
  const mode = row.afterMode ?? undefined;
  if (row.afterType === "dir") {
    if (st && !st.isDirectory()) throw new ToolError("conflict", `${row.path} is no longer a directory`, { path: row.path, reason: "type_changed" });
    if (!st) {
      await fs.mkdir(abs, { mode: mode ?? 0o755 });
      await giveParentOwner(abs);
    }
    if (mode !== undefined && (!st || (st.mode & 0o7777) !== mode)) {
      const made = st ?? reader.lstat(row.path);
      reader.chmod(row.path, mode, made ? { dev: made.dev, ino: made.ino } : {});
    }
    return;
  }
  if (row.afterType === "symlink") {
    if (st?.isSymbolicLink() && (await fs.readlink(abs)) === row.afterLink) return;
    const tmp = path.join(path.dirname(abs), `.${crypto.randomBytes(8).toString("hex")}.agent-reach.tmp`);
    await fs.symlink(row.afterLink ?? "", tmp);
    try {
      await giveParentOwner(tmp);
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
    const same = { dev: st.dev, ino: st.ino };
    if (row.kind === "mode" && row.afterSha === null) {
      // A bulky file whose mode alone changed: no bytes were kept, only the mode moves.
      if (!sameMode) reader.chmod(row.path, mode!, same);
      return;
    }
    if (row.afterSha && st.size === row.size && (await reader.hash(row.path, same)) === row.afterSha) {
      if (!sameMode) reader.chmod(row.path, mode!, same);
      return;
    }
  }
  const bytes = await source.bytes(row);
  const created = !st?.isFile();
  await atomicWriteFile(abs, bytes, { mode, durable, createDirs: false, dirsRoot: root });
  if (created) await giveParentOwner(abs);
}

/** New entries get the owner of their directory, as the workspace's own files have (root only). */
async function giveParentOwner(abs: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const parent = await fs.stat(path.dirname(abs));
  const st = await fs.lstat(abs);
  if (st.uid !== parent.uid || st.gid !== parent.gid) await fs.lchown(abs, parent.uid, parent.gid);
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

/**
 * Every directory a row's path goes through must be a real directory inside the root (no symlink
 * swapped in since the change set was read). Checked once per directory.
 */
class ParentCheck {
  private ok = new Set<string>();
  constructor(private root: string) {}

  async resolve(rel: string): Promise<string> {
    if (rel === "" || rel.split("/").some((c) => c === "" || c === "." || c === "..")) {
      throw new ToolError("path_invalid", `Invalid change-set path ${JSON.stringify(rel)}.`, { path: rel });
    }
    const abs = path.join(this.root, rel);
    const dir = path.dirname(abs);
    if (!this.ok.has(dir)) {
      let real: string;
      try {
        real = await fs.realpath(dir);
      } catch {
        real = "";
      }
      if (real !== dir && dir !== this.root) {
        // A missing parent is created by an earlier row of the same set; anything else is a symlink.
        const st = await lstatOrNull(dir);
        if (st) throw new ToolError("path_outside_workspace", `A directory on the path of ${rel} is a symbolic link; nothing was written there.`, { path: rel, reason: "parent_symlink" });
        throw new ToolError("not_found", `The directory of ${rel} does not exist.`, { path: rel, reason: "parent_missing" });
      }
      this.ok.add(dir);
    }
    return abs;
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
 * Puts the before-states back after a failed apply (best effort per row: a bulky file that kept
 * no backup keeps its new content). Used by a failed apply and by recovery when the new content
 * is gone.
 */
export async function rollBack(root: string, rows: FileChangeRow[]): Promise<void> {
  const back = inverse(rows).filter((r) => !(r.afterType === "file" && r.afterSha === null));
  await applyRows(root, back, blobSource);
  await syncWorkspace(root);
}
