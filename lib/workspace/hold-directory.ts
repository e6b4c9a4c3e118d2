import { constants as fsConstants, type Stats } from "node:fs";
import fs from "node:fs/promises";
import { ToolError } from "@/lib/errors";
import { PROC_FD, procFdAvailable } from "@/lib/workspace/proc-fd";

/**
 * A directory of the workspace held open by a descriptor, so that metadata and placement calls
 * (chmod, chown, mkdir, symlink, rename, unlink, rmdir) act in the directory that was checked,
 * whatever happens to the path that led to it afterwards.
 *
 * The directory is reached from a descriptor on the workspace root one component at a time, each
 * opened through its parent's descriptor with `O_NOFOLLOW | O_DIRECTORY` (the openat walk Node
 * lacks, done through Linux's `/proc/self/fd/N/name`): a component that is a symbolic link at that
 * moment fails instead of being followed. Names inside the held directory are then reached as
 * `/proc/self/fd/N/name`, which resolves `name` in the directory open as N; calls that do not
 * follow their last component (lstat, lchown, mkdir, symlink, rename, unlink, rmdir, open with
 * `O_NOFOLLOW`) thus never leave it.
 */

/** A workspace directory held open; see the module comment. */
export interface HeldDirectory {
  /** The directory's path relative to the root ("" for the root itself). */
  readonly rel: string;
  /** A path for `name` (one component) in the held directory, resolved through the descriptor. */
  at(name: string): string;
  /** fstat of the held directory. */
  stat(): Promise<Stats>;
  /**
   * Walks from the root again and checks that `rel` still leads to the held directory (same device
   * and inode, no symbolic link on the way). Call right before a placement, so a directory swapped
   * since the hold fails the row instead of going unnoticed.
   * @throws like `holdDirectory`, or ToolError `write_failed` (reason "target_changed", race: true)
   *   when `rel` now leads to another directory
   */
  verify(): Promise<void>;
  close(): Promise<void>;
}


const DIR_FLAGS = fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW;

/**
 * Opens the directory `rel` (relative, "/"-separated, "" for the root) of the workspace `root`
 * (canonical absolute path) by the openat walk.
 *
 * @throws ToolError `path_outside_workspace` (reason "parent_symlink", race: true) when a component
 *   is a symbolic link; `not_found` (reason "parent_missing") when one is missing, (reason
 *   "parent_not_directory") when one is a file; `path_invalid` for an empty, "." or ".." component;
 *   `internal` when the system has no /proc (no descriptor-relative names: nothing is placed)
 */
export async function holdDirectory(root: string, rel: string): Promise<HeldDirectory> {
  if (!procFdAvailable) throw new ToolError("internal", "Changes are only applied where /proc/self/fd is available (Linux).");
  const names = rel === "" ? [] : rel.split("/");
  if (names.some((c) => c === "" || c === "." || c === "..")) {
    throw new ToolError("path_invalid", `Invalid change-set path ${JSON.stringify(rel)}.`, { path: rel });
  }
  const handle = await walk(root, names, rel);
  return {
    rel,
    at: (name) => `${PROC_FD}/${handle.fd}/${name}`,
    stat: () => handle.stat(),
    async verify() {
      const again = await walk(root, names, rel);
      try {
        const [held, now] = await Promise.all([handle.stat(), again.stat()]);
        if (held.dev !== now.dev || held.ino !== now.ino) {
          throw new ToolError("write_failed", `The directory ${rel || "."} was replaced while changes were applied; nothing was placed there.`, {
            path: rel,
            reason: "target_changed",
            race: true,
          });
        }
      } finally {
        await again.close().catch(() => undefined);
      }
    },
    close: () => handle.close().catch(() => undefined),
  };
}

async function walk(root: string, names: string[], rel: string): Promise<fs.FileHandle> {
  let handle = await fs.open(/*turbopackIgnore: true*/ root, DIR_FLAGS);
  try {
    for (const name of names) {
      const through = `${PROC_FD}/${handle.fd}/${name}`;
      let next: fs.FileHandle;
      try {
        next = await fs.open(/*turbopackIgnore: true*/ through, DIR_FLAGS);
      } catch (err) {
        throw await walkError(err, through, rel);
      }
      await handle.close();
      handle = next;
    }
    return handle;
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/** What a failed open of one component means: a symbolic link, a file, or nothing there. */
async function walkError(err: unknown, through: string, rel: string): Promise<unknown> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new ToolError("not_found", `The directory ${rel} does not exist.`, { path: rel, reason: "parent_missing" });
  if (code !== "ENOTDIR" && code !== "ELOOP") return err;
  const st = await fs.lstat(/*turbopackIgnore: true*/ through).catch(() => null);
  if (st && !st.isSymbolicLink()) {
    return new ToolError("not_found", `A component of the directory ${rel} is not a directory.`, { path: rel, reason: "parent_not_directory" });
  }
  return new ToolError("path_outside_workspace", `A directory on the path ${rel} is a symbolic link; nothing was placed there.`, {
    path: rel,
    reason: "parent_symlink",
    race: true,
  });
}

/**
 * Opens `abs` (a name in a held directory) without following a symbolic link there and checks
 * that it is the entry `checked` (same device and inode) and of the expected kind, so what is done
 * to the descriptor afterwards lands on the entry that was looked at.
 * @param kind "dir" opens with O_DIRECTORY; "file" opens read-only and non-blocking (a FIFO
 *   swapped in never blocks) and requires a regular file
 * @param checked the lstat taken when the entry was checked; null when this call created it
 * @throws ToolError `conflict` (reason "type_changed") when the name is now a symbolic link or
 *   another entry than the one checked
 */
export async function openChecked(abs: string, kind: "dir" | "file", checked: Stats | null, rel: string): Promise<fs.FileHandle> {
  const flags = kind === "dir" ? DIR_FLAGS : fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(/*turbopackIgnore: true*/ abs, flags);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR" || code === "ENOENT") throw changed(rel);
    throw err;
  }
  try {
    const st = await handle.stat();
    const kindOk = kind === "dir" ? st.isDirectory() : st.isFile();
    if (!kindOk || (checked && (st.dev !== checked.dev || st.ino !== checked.ino))) throw changed(rel);
    return handle;
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Checks that the name `abs` still is the entry open as `handle` (after a change made through the
 * descriptor), so a name swapped meanwhile fails the row instead of passing as applied.
 * @throws ToolError `conflict` (reason "type_changed")
 */
export async function assertStillNamed(abs: string, handle: fs.FileHandle, rel: string): Promise<void> {
  const [held, now] = await Promise.all([handle.stat(), fs.lstat(/*turbopackIgnore: true*/ abs).catch(() => null)]);
  if (!now || now.dev !== held.dev || now.ino !== held.ino) throw changed(rel);
}

function changed(rel: string): ToolError {
  return new ToolError("conflict", `${rel} was replaced while changes were applied; nothing was done to what is there now.`, { path: rel, reason: "type_changed" });
}

/** The directory part and the last component of a "/"-separated relative path ("" for the root). */
export function splitRel(rel: string): { dir: string; name: string } {
  const i = rel.lastIndexOf("/");
  return i < 0 ? { dir: "", name: rel } : { dir: rel.slice(0, i), name: rel.slice(i + 1) };
}
