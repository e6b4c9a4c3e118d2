import fsSync, { constants as fsConstants, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@/lib/errors";
import { FencedFile } from "@/lib/workspace/fenced-file";
import type { Workspace } from "@/lib/workspace/types";

/**
 * The workspace fence: every path an agent sends goes through `resolveInWorkspace` before any
 * file is opened, and files are opened with `openForRead` (or checked with `assertHandleIsFenced`)
 * so that what is used is byte-for-byte what was checked.
 *
 * Rules (docs/field-cases.md C01, C02, C03, C05):
 * - the string is validated first (`validatePathString`): no NUL, control characters,
 *   backslashes, Windows drives/UNC, NTFS streams, lone surrogates; nothing is decoded,
 *   expanded (`~`, `$HOME`) or Unicode-normalized;
 * - relative paths resolve against the canonical workspace root, absolute paths are accepted
 *   only when they lie under the canonical or the configured root; `..` is applied lexically
 *   and a lexical escape is refused with reason "lexical";
 * - the lexical path is then resolved physically, component by component, following every
 *   symlink (absolute, relative, chained, dangling) like the kernel would; the resulting
 *   canonical path (realpath of the nearest existing ancestor + the missing tail) must lie
 *   inside the root, by path components, never by string prefix.
 *
 * The walk and the checks of an opened file use synchronous `lstat`/`readlink`/`stat`/`realpath`
 * calls: each is a lookup in the kernel's name cache, about a microsecond, where the same call
 * through the thread pool (`fs/promises`) costs about 25 µs of CPU and a round trip of the event
 * loop; a small read makes about a dozen of them. A workspace on a network file system that
 * stops answering stalls these calls either way (the thread pool has four threads).
 *
 * Reasons of `path_outside_workspace` (C01, C02, C03): "lexical" when the path leaves the root
 * before any symlink is looked at; "symlink" when the file itself, or the existing directory it is
 * (or would be created) in, resolves outside through a symlink (C02 1-5, a dangling final link
 * C03-1); "parent_symlink" when the file's parent directory does not exist yet and its nearest
 * existing ancestor resolves outside, i.e. creating the missing directories would create them
 * outside (C03-2).
 */

/** A path argument after the fence accepted it. */
export interface FencedPath {
  /** The argument as sent. */
  raw: string;
  /** Canonical workspace-relative path, "/"-separated, "" for the root itself. */
  relative: string;
  /**
   * Canonical absolute path that will be opened: realpath of the nearest existing ancestor +
   * the missing tail. When the final component is a symlink whose target stays inside, this is
   * the target (C13-4: writing current.txt -> releases/v2.txt writes releases/v2.txt).
   */
  absolute: string;
  exists: boolean;
  kind: "file" | "directory" | "other" | "missing";
  /** Some component (or the final one) was a symlink. */
  viaSymlink: boolean;
  /** How many trailing components do not exist yet (0 when `exists`). */
  missingDepth: number;
}

/** Why the fence refused a path (`error.detail.reason` of `path_outside_workspace`). */
export type OutsideReason = "lexical" | "symlink" | "parent_symlink";

/** Why a path string is malformed (`error.detail.reason` of `path_invalid`). */
export type InvalidReason =
  | "empty"
  | "nul_byte"
  | "control_char"
  | "backslash"
  | "windows_drive_or_unc"
  | "ads_stream"
  | "invalid_unicode"
  | "too_long"
  | "symlink_loop";

/** Longest accepted path argument (bytes of UTF-8) and path component (bytes), as on Linux. */
const MAX_PATH_BYTES = 4096;
const MAX_COMPONENT_BYTES = 255;
/** Symlinks followed while resolving one path before it counts as a loop (Linux MAXSYMLINKS). */
const MAX_SYMLINK_HOPS = 40;

// C0 controls, DEL, C1 controls, line/paragraph separators and bidi overrides/isolates: any of
// them can forge a log line or disguise a name on the dashboard (C05-5).
const CONTROL_CHARS = /[\u0001-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const WINDOWS_DRIVE_OR_UNC = /^(?:[A-Za-z]:|\\\\|\/\/(?!\/))/;
// An NTFS stream type suffix (`name::$DATA`, `name:s:$DATA`) is never a real POSIX name; a plain
// `name:stream` is refused only on Windows, where it addresses a stream (C05-8).
const ADS_TYPE_SUFFIX = /:\$[A-Za-z_]+$/;

function invalid(reason: InvalidReason, message: string, raw: string): ToolError {
  return new ToolError("path_invalid", message, { reason, path_raw: raw });
}

/**
 * Checks a raw path argument before anything touches the file system (field case C05).
 *
 * @param raw the path exactly as the agent sent it
 * @param platform host platform deciding the NTFS stream rule (default `process.platform`);
 *   every other rule is the same on every host
 * @throws ToolError `path_invalid` with `detail.reason` one of "empty", "nul_byte",
 *   "control_char", "backslash", "windows_drive_or_unc", "ads_stream", "invalid_unicode",
 *   "too_long", and `detail.path_raw`
 */
export function validatePathString(raw: string, platform: NodeJS.Platform = process.platform): void {
  if (raw.length === 0) throw invalid("empty", "The path is empty; use \".\" for the workspace root.", raw);
  if (raw.includes("\u0000")) throw invalid("nul_byte", "The path contains a NUL byte.", raw);
  if (CONTROL_CHARS.test(raw)) throw invalid("control_char", "The path contains a control character.", raw);
  if (!raw.isWellFormed()) throw invalid("invalid_unicode", "The path contains an unpaired UTF-16 surrogate.", raw);
  if (WINDOWS_DRIVE_OR_UNC.test(raw)) {
    throw invalid("windows_drive_or_unc", "Windows drive letters and UNC paths are not accepted; use a workspace-relative path with \"/\".", raw);
  }
  if (raw.includes("\\")) throw invalid("backslash", "Backslashes are not accepted in paths; use \"/\" as the separator.", raw);
  const components = raw.split("/");
  if (components.some((c) => ADS_TYPE_SUFFIX.test(c) || (platform === "win32" && c.includes(":")))) {
    throw invalid("ads_stream", "Alternate data stream names (\"file:stream\") are not accepted.", raw);
  }
  if (Buffer.byteLength(raw) > MAX_PATH_BYTES || components.some((c) => Buffer.byteLength(c) > MAX_COMPONENT_BYTES)) {
    throw invalid("too_long", `The path is longer than ${MAX_PATH_BYTES} bytes or has a component longer than ${MAX_COMPONENT_BYTES} bytes.`, raw);
  }
}

/**
 * True when `candidate` is `root` or lies under it, compared by path components (never by string
 * prefix: `/a/proj-out` is not inside `/a/proj`, C01). Both must be absolute and normalized.
 */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The canonical workspace root: `fs.realpath` of the configured root (a root reached through a
 * symlink is allowed, C03-4).
 *
 * @throws ToolError `not_found` when the root does not exist, `path_invalid`
 *   (reason "not_a_directory") when it is not a directory
 */
export async function canonicalRoot(configuredRoot: string): Promise<string> {
  let real: string;
  try {
    real = await fs.realpath(path.resolve(configuredRoot));
  } catch (err) {
    throw new ToolError("not_found", "The workspace root does not exist.", { path_raw: configuredRoot }, { cause: err });
  }
  if (!(await fs.stat(real)).isDirectory()) {
    throw new ToolError("path_invalid", "The workspace root is not a directory.", { reason: "not_a_directory", path_raw: configuredRoot });
  }
  return real;
}

/** Result of a physical walk: the canonical path and how much of it exists. */
interface Walk {
  absolute: string;
  exists: boolean;
  missingDepth: number;
  viaSymlink: boolean;
}

/** Shared state of one resolution: symlink hops so far (loop guard) and the raw path for errors. */
interface WalkState {
  hops: number;
  raw: string;
}

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/**
 * Resolves `parts` physically starting at the canonical directory `start`, following symlinks
 * like the kernel does (`..` in a link target applies to the link's physical directory). The
 * first component that does not exist ends the walk; the rest is joined as the missing tail.
 */
function walk(start: string, parts: string[], state: WalkState): Walk {
  let cur = start;
  let viaSymlink = false;
  for (let i = 0; i < parts.length; i++) {
    const comp = parts[i];
    if (comp === "" || comp === ".") continue;
    if (comp === "..") {
      cur = path.dirname(cur);
      continue;
    }
    const next = path.join(cur, comp);
    let st;
    try {
      st = fsSync.lstatSync(next);
    } catch (err) {
      if (errnoOf(err) === "ENOENT") return missingTail(cur, parts.slice(i), viaSymlink, state);
      if (errnoOf(err) === "ENOTDIR") {
        throw new ToolError("not_found", "A parent component of the path is a file, not a directory.", {
          reason: "parent_not_directory",
          path_raw: state.raw,
        });
      }
      throw err;
    }
    if (!st.isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (++state.hops > MAX_SYMLINK_HOPS) {
      throw invalid("symlink_loop", "Too many levels of symbolic links (a symlink loop).", state.raw);
    }
    const target = fsSync.readlinkSync(next);
    const rest = [...target.split("/"), ...parts.slice(i + 1)];
    const sub = walk(path.isAbsolute(target) ? "/" : cur, rest, state);
    return { ...sub, viaSymlink: true };
  }
  return { absolute: cur, exists: true, missingDepth: 0, viaSymlink };
}

/**
 * The walk hit a missing component under the existing canonical directory `cur`. Without `..` the
 * tail is simply appended; a `..` after a missing name (only possible from a link target) is
 * applied lexically and the result is walked again from `/`, so the returned path is canonical.
 */
function missingTail(cur: string, tail: string[], viaSymlink: boolean, state: WalkState): Walk {
  const names = tail.filter((c) => c !== "" && c !== ".");
  if (names.includes("..")) {
    const again = walk("/", path.resolve(cur, ...names).split("/"), state);
    return { ...again, viaSymlink: viaSymlink || again.viaSymlink };
  }
  return { absolute: path.join(cur, ...names), exists: false, missingDepth: names.length, viaSymlink };
}

function outside(reason: OutsideReason, raw: string, resolved: string, ws: Workspace): ToolError {
  const what = {
    lexical: "The path leaves the workspace root.",
    symlink: "The path is a symlink that leads outside the workspace root.",
    parent_symlink: "A directory in the path is a symlink that leads outside the workspace root.",
  }[reason];
  return new ToolError("path_outside_workspace", what, {
    reason,
    path_raw: raw,
    path_resolved: resolved,
    workspace_root: ws.root,
  });
}

/**
 * The lexical absolute path of `raw` (no file system access), and the workspace-relative path it
 * names, or null when it leaves the root. Absolute arguments are accepted under the canonical root
 * and under the configured root (which may be a symlink to it).
 */
function lexicalRelative(ws: Workspace, raw: string): { lexical: string; relative: string | null } {
  if (!path.isAbsolute(raw)) {
    const lexical = path.resolve(ws.root, raw);
    return { lexical, relative: isInside(ws.root, lexical) ? path.relative(ws.root, lexical) : null };
  }
  const lexical = path.resolve(raw);
  for (const root of [ws.root, path.resolve(ws.configuredRoot)]) {
    if (isInside(root, lexical)) return { lexical, relative: path.relative(root, lexical) };
  }
  return { lexical, relative: null };
}

function kindOf(absolute: string): FencedPath["kind"] {
  const st = fsSync.statSync(absolute);
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  return "other";
}

/**
 * Fences a path argument to the workspace (field cases C01, C02, C03, C05). Does not create,
 * open or modify anything; only `lstat`/`readlink`/`stat` inside the path's own chain.
 *
 * @param ws the workspace (`ws.root` canonical)
 * @param raw the path exactly as sent: relative to the root, or absolute inside it
 * @returns the canonical path that must be opened, whether it exists, its kind, and how many
 *   trailing components are missing (for writes that create directories)
 * @throws ToolError `path_invalid` (see `validatePathString`; also reason "symlink_loop"),
 *   `path_outside_workspace` with `detail: {reason: "lexical"|"symlink"|"parent_symlink",
 *   path_raw, path_resolved}`, `not_found` (reason "parent_not_directory") when a parent is a file,
 *   (reason "changed_during_call") when a component was removed or replaced during the walk
 */
export async function resolveInWorkspace(ws: Workspace, raw: string): Promise<FencedPath> {
  validatePathString(raw);
  const { lexical, relative } = lexicalRelative(ws, raw);
  if (relative === null) throw outside("lexical", raw, lexical, ws);

  const parts = relative === "" ? [] : relative.split(path.sep);
  const state: WalkState = { hops: 0, raw };
  try {
    const parent = walk(ws.root, parts.slice(0, -1), state);
    if (!isInside(ws.root, parent.absolute)) {
      const reason = parent.exists ? "symlink" : "parent_symlink";
      throw outside(reason, raw, path.join(parent.absolute, ...parts.slice(-1)), ws);
    }
    const full = parts.length === 0 ? parent : finish(parent, parts[parts.length - 1], state);
    if (!isInside(ws.root, full.absolute)) throw outside("symlink", raw, full.absolute, ws);
    return {
      raw,
      relative: path.relative(ws.root, full.absolute).split(path.sep).join("/"),
      absolute: full.absolute,
      exists: full.exists,
      kind: full.exists ? kindOf(full.absolute) : "missing",
      viaSymlink: full.viaSymlink,
      missingDepth: full.missingDepth,
    };
  } catch (err) {
    if (errnoOf(err) === "ELOOP") throw invalid("symlink_loop", "Too many levels of symbolic links (a symlink loop).", raw);
    if (errnoOf(err) === "ENAMETOOLONG") throw invalid("too_long", "The resolved path is too long.", raw);
    // A component changed between two steps of the walk (removed after its lstat, or no longer a
    // symlink when read): the path moved under the call; answered, never a server error.
    const code = errnoOf(err);
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EINVAL") {
      throw new ToolError("not_found", `The path ${raw} changed while it was being resolved (a directory was removed or replaced); nothing was done.`, {
        reason: "changed_during_call",
        path_raw: raw,
      });
    }
    throw err;
  }
}

/** `fn()`, or null when it throws (a path that vanished or changed is judged by the caller). */
function quiet<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

/** Resolves the last component from its (already resolved) parent. */
function finish(parent: Walk, last: string, state: WalkState): Walk {
  if (!parent.exists) {
    return { ...parent, absolute: path.join(parent.absolute, last), missingDepth: parent.missingDepth + 1 };
  }
  const leaf = walk(parent.absolute, [last], state);
  return { ...leaf, viaSymlink: parent.viaSymlink || leaf.viaSymlink };
}

/**
 * Verifies that an open handle is the fenced file and nothing else: the handle's (dev, ino) must
 * equal those of `fenced.absolute` as it is now, which must still be a non-symlink whose realpath
 * is itself. Catches a file or directory swapped for a symlink between the check and the open.
 *
 * @returns the handle's own stat (the opened file's)
 * @throws ToolError `path_outside_workspace` (reason "symlink", `detail.race: true`) on mismatch
 */
export async function assertHandleIsFenced(ws: Workspace, fenced: FencedPath, handle: FencedFile): Promise<Stats> {
  const opened = handle.statNow();
  const now = quiet(() => fsSync.lstatSync(fenced.absolute));
  const real = quiet(() => fsSync.realpathSync.native(fenced.absolute));
  const same = now !== null && !now.isSymbolicLink() && now.dev === opened.dev && now.ino === opened.ino;
  if (!same || real !== fenced.absolute || !isInside(ws.root, real)) {
    throw new ToolError("path_outside_workspace", "The path changed (a symlink was swapped in) while it was being opened.", {
      reason: "symlink",
      race: true,
      path_raw: fenced.raw,
      path_resolved: real ?? fenced.absolute,
      workspace_root: ws.root,
    });
  }
  return opened;
}

/**
 * Opens a fenced path for reading with `O_NOFOLLOW | O_NONBLOCK` (a symlink swapped in as the
 * final component fails instead of being followed; a FIFO does not block), then verifies the
 * handle with `assertHandleIsFenced`. The caller closes the handle (`FencedFile.close`).
 *
 * @throws ToolError `not_found` (missing), `is_directory`, `path_invalid` (reason "not_regular_file"
 *   for devices, sockets, FIFOs), `path_outside_workspace` (reason "symlink", race)
 */
export async function openForRead(ws: Workspace, fenced: FencedPath): Promise<FencedFile> {
  if (!fenced.exists) throw new ToolError("not_found", `No such file: ${fenced.relative}`, { path: fenced.relative });
  let handle: FencedFile;
  try {
    // O_NONBLOCK: the open itself never waits (a FIFO), so it can be a synchronous call.
    handle = new FencedFile(fsSync.openSync(fenced.absolute, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK));
  } catch (err) {
    const code = errnoOf(err);
    if (code === "ENOENT") throw new ToolError("not_found", `No such file: ${fenced.relative}`, { path: fenced.relative });
    if (code === "ELOOP") {
      throw new ToolError("path_outside_workspace", "The file was replaced by a symlink while it was being opened.", {
        reason: "symlink",
        race: true,
        path_raw: fenced.raw,
        path_resolved: fenced.absolute,
        workspace_root: ws.root,
      });
    }
    throw err;
  }
  try {
    const st = await assertHandleIsFenced(ws, fenced, handle);
    if (st.isDirectory()) throw new ToolError("is_directory", `${fenced.relative || "."} is a directory.`, { path: fenced.relative });
    if (!st.isFile()) {
      throw new ToolError("path_invalid", `${fenced.relative} is not a regular file.`, { reason: "not_regular_file", path: fenced.relative });
    }
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
