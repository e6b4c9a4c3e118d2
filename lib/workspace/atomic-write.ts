import crypto from "node:crypto";
import { constants as fsConstants, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@/lib/errors";
import { PROC_FD, procFdAvailable } from "@/lib/workspace/proc-fd";
import { isInside } from "@/lib/workspace/fence";

/**
 * Atomic file replacement (docs/field-cases.md C13; the "temp file + rename" strategy, done
 * without its side effects):
 * - the bytes go to a temp file with a unique name in the target's directory (C14: no shared
 *   `.tmp` name), created with `O_EXCL | O_NOFOLLOW` and the final mode, so a 0600 file is never
 *   readable by others, not even for a moment;
 * - the temp file is fsynced, renamed over the target, and the directory (and the parents of
 *   directories this call created) is fsynced;
 * - a reader sees the old bytes or the new bytes, never a prefix; on any failure the temp file is
 *   removed, directories this call created are removed again, and the target is untouched;
 * - the mode (and, when permitted, the owner) of an existing file is kept;
 * - rename replaces this name only: a hard link elsewhere keeps the old inode and bytes (C13-5),
 *   reported as `nlinkBefore`.
 *
 * Symlinks are resolved by the caller's fence (lib/workspace/fence.ts): `absPath` is the canonical
 * path, so writing through an inside symlink writes its target and keeps the link (C13-4).
 */

/** `detail.reason` of a `write_failed` error. */
export type WriteFailReason = "enospc" | "io" | "eacces" | "erofs" | "target_changed";

export interface AtomicWriteOptions {
  /**
   * Final permission bits (e.g. 0o600). Default: the existing file's mode; for a new file 0o666
   * minus the process umask.
   */
  mode?: number;
  /**
   * Create missing parent directories, one component at a time, each checked not to be a symlink.
   * Only under `dirsRoot`, and only after the caller's fence accepted the path (C01, C03).
   */
  createDirs?: boolean;
  /** Canonical directory (the workspace root) below which directories may be created. */
  dirsRoot?: string;
  /**
   * Runs once the temp file holds all bytes durably, right before the rename. Throwing aborts the
   * write with nothing changed. Writers save their backup here, so a failed write leaves no backup.
   */
  beforeCommit?: () => Promise<void>;
  /**
   * false: skip the fsync of the temp file and of the directory (default true). For a caller that
   * makes many writes durable at once afterwards (one `syncfs`) and journals them so a crash in
   * between is redone; readers still see old or new bytes, never a prefix.
   */
  durable?: boolean;
}

export interface AtomicWriteResult {
  /** The target did not exist before. */
  created: boolean;
  /** Permission bits of the written file. */
  mode: number;
  /** Bytes written. */
  sizeBytes: number;
  /** Link count of the replaced file (null when created); > 1 means other names kept the old bytes. */
  nlinkBefore: number | null;
}

const CHUNK_BYTES = 1 << 20;

/**
 * Replaces (or creates) the file at `absPath` with `bytes`, atomically.
 *
 * @param absPath canonical absolute path of the target (already fenced)
 * @param bytes the complete new content
 * @returns whether the file was created, its mode, size in bytes and the link count it had
 * @throws ToolError `is_directory` when the target is a directory; `path_invalid` (reason
 *   "not_regular_file") for a device, FIFO or socket; `not_found` (reason "parent_missing") when
 *   the directory is missing and `createDirs` is false, (reason "parent_not_directory") when a
 *   parent is a file; `path_outside_workspace` (reason "parent_symlink", race: true) when a
 *   directory turned into a symlink; `write_failed` with detail.reason "enospc" | "io" |
 *   "eacces" | "erofs" (file system errors) or "target_changed" (the target became a symlink
 *   or its directory moved after the fence); whatever `beforeCommit` throws
 */
export async function atomicWriteFile(absPath: string, bytes: Buffer, options: AtomicWriteOptions = {}): Promise<AtomicWriteResult> {
  const dir = path.dirname(absPath);
  const existing = await lstatOrNull(absPath);
  assertReplaceable(absPath, existing);
  const createdDirs = existing ? [] : await ensureDirectory(dir, options);
  const tmpName = `.${crypto.randomBytes(8).toString("hex")}.agent-reach.tmp`;
  const mode = options.mode ?? (existing ? existing.mode & 0o7777 : 0o666);
  let handle: fs.FileHandle | null = null;
  let pinned: PinnedDirectory | null = null;
  let finalMode: number;
  try {
    // Every name below is resolved through a handle on the directory itself, so a directory on
    // the path swapped for a symlink after the fence cannot redirect the temp file or the rename.
    pinned = await pinDirectory(dir, options.dirsRoot);
    // Paths inside the workspace, known only at run time: not files for the build to trace.
    const tmpPath = pinned.at(tmpName);
    const finalPath = pinned.at(path.basename(absPath));
    handle = await fs.open(/*turbopackIgnore: true*/ tmpPath, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, mode);
    if (existing) await keepOwner(handle, existing);
    if (existing || options.mode !== undefined) await handle.chmod(mode);
    await writeAll(handle, bytes);
    if (options.durable !== false) await handle.sync();
    finalMode = (await handle.stat()).mode & 0o7777;
    await handle.close();
    handle = null;
    await assertDirectoryUnchanged(dir);
    await options.beforeCommit?.();
    await fs.rename(/*turbopackIgnore: true*/ tmpPath, finalPath);
  } catch (err) {
    await handle?.close().catch(() => undefined);
    if (pinned) await fs.rm(pinned.at(tmpName), { force: true }).catch(() => undefined);
    await pinned?.close();
    await removeDirectories(createdDirs);
    throw withSize(asWriteError(err), bytes.length);
  }
  if (options.durable !== false) await pinned.sync();
  await pinned.close();
  // The new name, and the entries of directories this call created, must survive a crash too.
  if (options.durable !== false) for (const d of new Set(createdDirs.map((c) => path.dirname(c)))) await syncDirectory(d);
  return { created: existing === null, mode: finalMode, sizeBytes: bytes.length, nlinkBefore: existing ? existing.nlink : null };
}

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return null;
    if (errnoOf(err) === "ENOTDIR") throw parentNotDirectory();
    throw asWriteError(err);
  }
}

function assertReplaceable(absPath: string, st: Stats | null): void {
  if (st === null || st.isFile()) return;
  if (st.isDirectory()) throw new ToolError("is_directory", "The target is a directory.", { path_resolved: absPath });
  if (st.isSymbolicLink()) {
    throw new ToolError("write_failed", "The target became a symbolic link after it was checked; nothing was written. Retry the call.", {
      reason: "target_changed" satisfies WriteFailReason,
    });
  }
  throw new ToolError("path_invalid", "The target is not a regular file (device, FIFO or socket).", { reason: "not_regular_file" });
}

/**
 * Makes sure `dir` exists. Missing components are created one at a time below
 * `options.dirsRoot`; every component (existing or new) is `lstat`ed and must be a real directory.
 *
 * @returns the directories created, outermost first (removed again if the write fails)
 */
async function ensureDirectory(dir: string, options: AtomicWriteOptions): Promise<string[]> {
  const st = await lstatOrNull(dir);
  if (st?.isDirectory()) return [];
  if (st) await assertRealDirectory(dir);
  if (!options.createDirs) {
    throw new ToolError("not_found", "The parent directory does not exist; pass create_dirs: true to create it.", {
      reason: "parent_missing",
    });
  }
  const root = options.dirsRoot;
  if (root === undefined) throw new Error("atomicWriteFile: createDirs needs dirsRoot");
  if (!isInside(root, dir)) {
    throw new ToolError("path_outside_workspace", "Directories are only created inside the workspace root.", { reason: "lexical" });
  }
  const created: string[] = [];
  let cur = root;
  try {
    for (const name of path.relative(root, dir).split(path.sep).filter(Boolean)) {
      cur = path.join(cur, name);
      if (await makeDirectory(cur)) created.push(cur);
      await assertRealDirectory(cur);
    }
  } catch (err) {
    await removeDirectories(created);
    throw asWriteError(err);
  }
  return created;
}

/** mkdir of one component; false when it already existed. */
async function makeDirectory(p: string): Promise<boolean> {
  try {
    await fs.mkdir(p);
    return true;
  } catch (err) {
    if (errnoOf(err) === "EEXIST") return false;
    throw err;
  }
}

async function assertRealDirectory(p: string): Promise<void> {
  const st = await fs.lstat(p);
  if (st.isSymbolicLink()) {
    throw new ToolError("path_outside_workspace", "A directory on the path became a symbolic link; nothing was written.", {
      reason: "parent_symlink",
      race: true,
    });
  }
  if (!st.isDirectory()) throw parentNotDirectory();
}

function parentNotDirectory(): ToolError {
  return new ToolError("not_found", "A parent component of the path is a file, not a directory.", { reason: "parent_not_directory" });
}

/** Removes directories this call created (innermost first), only while they are empty. */
async function removeDirectories(created: string[]): Promise<void> {
  for (const dir of [...created].reverse()) {
    await fs.rmdir(dir).catch(() => undefined);
  }
}

/** Keeps the owner of the replaced file when the process may (root, or same owner); otherwise no-op. */
async function keepOwner(handle: fs.FileHandle, existing: Stats): Promise<void> {
  const st = await handle.stat();
  if (st.uid === existing.uid && st.gid === existing.gid) return;
  await handle.chown(existing.uid, existing.gid).catch((err: unknown) => {
    if (errnoOf(err) !== "EPERM") throw err;
  });
}

async function writeAll(handle: fs.FileHandle, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, Math.min(CHUNK_BYTES, bytes.length - offset), offset);
    offset += bytesWritten;
  }
}

/** A directory held open, and the paths of names inside it that resolve through that handle. */
interface PinnedDirectory {
  /** A path for `name` in the held directory, whatever happened to the path that led to it. */
  at(name: string): string;
  /** fsync of the directory (best effort). */
  sync(): Promise<void>;
  close(): Promise<void>;
}


/**
 * Opens `dir` as the write's anchor. With `root` (the workspace root, canonical) and /proc, the
 * directory is reached from a handle on the root one component at a time, each opened through its
 * parent's handle with `O_NOFOLLOW | O_DIRECTORY` (the openat walk Node lacks): a component that
 * is a symlink now (swapped in after the fence) fails with ELOOP instead of being followed. The
 * handle is then checked to be the directory at `dir` (same device and inode, and `dir` still its
 * own realpath). Without /proc the names are plain paths under `dir`, checked the same way.
 * @throws errno errors (ELOOP, ENOENT, ENOTDIR: mapped by `asExpectedWriteFailure`) or
 *   `write_failed` "target_changed" when the handle is not the directory at `dir`.
 */
async function pinDirectory(dir: string, root: string | undefined): Promise<PinnedDirectory> {
  const flags = fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW;
  let handle: fs.FileHandle;
  if (procFdAvailable && root !== undefined && isInside(root, dir)) {
    handle = await fs.open(root, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
    try {
      for (const name of path.relative(root, dir).split(path.sep).filter(Boolean)) {
        const next = await fs.open(`${PROC_FD}/${handle.fd}/${name}`, flags);
        await handle.close();
        handle = next;
      }
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  } else {
    handle = await fs.open(dir, flags);
  }
  const held = handle;
  try {
    const [opened, now] = await Promise.all([held.stat(), fs.lstat(dir)]);
    if (opened.dev !== now.dev || opened.ino !== now.ino || (await fs.realpath(dir)) !== dir) {
      throw new ToolError("write_failed", "The target directory changed after it was checked; nothing was written. Retry the call.", {
        reason: "target_changed" satisfies WriteFailReason,
      });
    }
  } catch (err) {
    await held.close().catch(() => undefined);
    throw err;
  }
  const base = procFdAvailable ? `${PROC_FD}/${held.fd}` : dir;
  return {
    at: (name) => path.join(base, name),
    sync: () => held.sync().catch(() => undefined),
    close: () => held.close().catch(() => undefined),
  };
}

/** The directory must still be where the fence saw it (no symlink swapped in above it). */
async function assertDirectoryUnchanged(dir: string): Promise<void> {
  if ((await fs.realpath(dir)) !== dir) {
    throw new ToolError("write_failed", "The target directory moved after it was checked; nothing was written. Retry the call.", {
      reason: "target_changed" satisfies WriteFailReason,
    });
  }
}

/** fsync of the directory so the rename itself is durable; best effort (some file systems refuse it). */
async function syncDirectory(dir: string): Promise<void> {
  let handle: fs.FileHandle | null = null;
  try {
    handle = await fs.open(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
    await handle.sync();
  } catch {
    // The new content is already in place; a directory that cannot be fsynced only weakens durability.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

const REASONS: Record<string, { reason: WriteFailReason; what: string }> = {
  ENOSPC: { reason: "enospc", what: "no space left on the device" },
  EDQUOT: { reason: "enospc", what: "disk quota exceeded" },
  EFBIG: { reason: "enospc", what: "file too large for the file system" },
  EACCES: { reason: "eacces", what: "permission denied" },
  EPERM: { reason: "eacces", what: "operation not permitted" },
  EROFS: { reason: "erofs", what: "read-only file system" },
};

/** Maps a file-system error to `write_failed`; ToolErrors and non-errno errors (bugs) pass through. */
function asWriteError(err: unknown): unknown {
  const code = errnoOf(err);
  if (err instanceof ToolError || code === undefined) return err;
  const known = REASONS[code] ?? { reason: "io" as const, what: `I/O error (${code})` };
  return new ToolError("write_failed", `The write failed: ${known.what}. The file was not changed.`, { reason: known.reason, errno: code }, { cause: err });
}

/** Adds the number of bytes the failed write would have written to a `write_failed` error. */
function withSize(err: unknown, sizeBytes: number): unknown {
  if (err instanceof ToolError && err.errorName === "write_failed" && err.detail.size_bytes === undefined) {
    return new ToolError(err.errorName, err.message, { ...err.detail, size_bytes: sizeBytes }, { cause: err.cause });
  }
  return err;
}

function errnoOf(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Errno codes meaning a directory on the path vanished or stopped being a directory mid-call. */
const VANISHED = new Set(["ENOENT", "ENOTDIR"]);

/**
 * Turns what a write can meet from the file system into the answer an agent can act on, so an
 * expected failure is never a server error:
 * - a directory removed, renamed or swapped for a symlink while the call ran (raw ENOENT /
 *   ENOTDIR / ELOOP, `write_failed` "target_changed", a fence race) → `not_found` when the path's
 *   directory is gone now, else `path_outside_workspace`, both with detail
 *   `{reason: "changed_during_call", path}`: nothing was written, and a retry re-checks the path;
 * - `write_failed` (full disk, read-only, permission, I/O) → the same error, with the `path` and
 *   `size_bytes` that were not written named in the message and the detail.
 * Other errors pass through unchanged.
 * @param root the canonical workspace root; @param rawPath the path as the agent gave it.
 */
export async function asExpectedWriteFailure(err: unknown, root: string, rawPath: string, sizeBytes?: number): Promise<unknown> {
  const code = err instanceof ToolError ? (typeof err.detail.errno === "string" ? err.detail.errno : undefined) : errnoOf(err);
  const raced =
    (err instanceof ToolError && (err.detail.reason === "target_changed" || err.detail.race === true)) ||
    (code !== undefined && (VANISHED.has(code) || code === "ELOOP") && (!(err instanceof ToolError) || err.errorName === "write_failed"));
  if (raced) {
    const outside = code === "ELOOP" || (code === undefined && (await directoryState(root, rawPath)) === "outside");
    const detail = { reason: "changed_during_call" as const, path: rawPath, race: true };
    return !outside
      ? new ToolError("not_found", `A directory on the path ${rawPath} was removed or replaced while the call ran; nothing was written. Check the path and retry.`, detail, { cause: err })
      : new ToolError("path_outside_workspace", `A directory on the path ${rawPath} was replaced by a symbolic link while the call ran; nothing was written.`, detail, { cause: err });
  }
  if (err instanceof ToolError && err.errorName === "write_failed" && err.detail.path === undefined) {
    const size = sizeBytes ?? (typeof err.detail.size_bytes === "number" ? err.detail.size_bytes : undefined);
    const what = `${rawPath}${size !== undefined ? ` (${size} bytes)` : ""}`;
    return new ToolError("write_failed", `${err.message.replace(/ The file was not changed\.$/, "")} Nothing was written to ${what}; the file is unchanged.`, { ...err.detail, path: rawPath }, { cause: err });
  }
  return err;
}

/**
 * Where the directory of `rawPath` (relative to `root`) is now: "missing", "outside" (it resolves
 * outside `root`, e.g. a symlink swapped in) or "inside" (a real directory inside).
 */
async function directoryState(root: string, rawPath: string): Promise<"missing" | "outside" | "inside"> {
  const dir = path.dirname(path.resolve(root, rawPath));
  try {
    const real = await fs.realpath(dir);
    return isInside(root, real) ? "inside" : "outside";
  } catch {
    return "missing";
  }
}
