import { execFile } from "node:child_process";
import crypto from "node:crypto";
import { constants as fsConstants, createReadStream, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { displayBytes } from "@/lib/exec/workspace-secrets";
import { BeneathReader, WorkspaceChanged } from "@/lib/workspace/read-beneath";

/**
 * Reads the change set a command left in an overlayfs upper layer, compared with the real
 * workspace (the lower layer). The upper layer holds exactly what the command changed:
 * - a regular file, symlink or directory that is not in the lower layer: created;
 * - a regular file that is in the lower layer: modified (or only its mode changed; a copy-up
 *   with equal bytes and mode, e.g. after `touch`, is no change);
 * - a whiteout (a 0/0 character device): the lower entry was deleted (a directory with all its
 *   contents);
 * - an opaque directory (xattr `trusted.overlay.opaque=y`; a `user.overlay.opaque` the command set
 *   itself is not a marker, see `readOverlayXattrs`): the directory was replaced, so every lower
 *   entry below it that the upper layer does not hold again was deleted.
 * A rename shows as a delete and a create. Other special files (FIFOs, sockets, devices) are not
 * applied and come back in `skipped`.
 *
 * The workspace side is read through a `BeneathReader` (lib/workspace/read-beneath.ts): no
 * symbolic link on a path is followed, and each before-state records the device and inode it was
 * read from, so that later steps (stage.ts's backups) can check they read the same file.
 */

const execFileAsync = promisify(execFile);

/** What a path is: a regular file, a symlink or a directory; null when it does not exist. */
export type EntryType = "file" | "symlink" | "dir";

/** One side (before or after) of a changed path. */
export interface EntryState {
  type: EntryType;
  /** Permission bits (files and directories; 0o777 for symlinks). */
  mode: number;
  /** Size in bytes (files). */
  size: number;
  /** Link target (symlinks). */
  link?: string;
  /**
   * Device and inode of the workspace entry (before-states read from the workspace): whoever
   * reads its bytes later checks, on the open descriptor, that it is still this file.
   */
  dev?: number;
  ino?: number;
  /**
   * sha256 (hex) the entry's bytes must have (before-states known from a journal, e.g. an undo's
   * "now" state): checked on the bytes read like `dev`/`ino`.
   */
  sha256?: string | null;
}

/** How a path changed (the word the call's `changes.files[].kind` uses). */
export type ChangeKind = "created" | "modified" | "deleted" | "mode" | "symlink" | "dir_created" | "dir_deleted";

/** One changed path of a change set. */
export interface ChangeEntry {
  /** Workspace-relative, "/"-separated. */
  path: string;
  kind: ChangeKind;
  before: EntryState | null;
  after: EntryState | null;
  /** Absolute path of the new content in the upper layer (files and symlinks created or changed). */
  source?: string;
}

/** The result of reading an upper layer. */
export interface ReadResult {
  entries: ChangeEntry[];
  /** Paths left out, with why (special files the workspace cannot take). */
  skipped: Array<{ path: string; reason: string }>;
}

/**
 * Compares the upper layer `upper` with the workspace `root` and lists every change.
 *
 * @param upper absolute path of the overlay's upper directory
 * @param root canonical workspace root (the overlay's lower directory)
 * @returns entries sorted by path (a directory before what is inside it)
 * @throws Error when the upper layer holds overlay features this reader does not apply
 *   (redirected directories, metacopy-only files): the mount must use redirect_dir=off, metacopy=off
 */
export async function readChangeSet(upper: string, root: string): Promise<ReadResult> {
  const out: ReadResult = { entries: [], skipped: [] };
  const candidates: Array<{ rel: string }> = [];
  const lower = new BeneathReader(root);
  try {
    // Pass 1: which directories present in both layers might be opaque (one xattr read for all).
    await collectMergedDirs(upper, lower, "", candidates);
    const opaque = await opaqueDirs(upper, candidates.map((c) => c.rel));
    await walk(upper, lower, "", opaque, out);
  } finally {
    lower.close();
  }
  out.entries.sort((a, b) => comparePaths(a.path, b.path));
  return out;
}

/** Orders paths so that a directory comes right before its contents. */
export function comparePaths(a: string, b: string): number {
  const pa = a.split("/");
  const pb = b.split("/");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A directory entry's name as text, or null when its bytes are not valid UTF-8. */
function utf8Name(name: Buffer): string | null {
  try {
    return strictUtf8.decode(name);
  } catch {
    return null;
  }
}


/**
 * Why an entry whose name is not UTF-8 is left out: every later step (diff, audit rows, apply,
 * revert) names files as text, and such a name cannot be written back exactly from text. It is
 * listed among the change set's skipped entries, so the person sees it, and nothing else in the
 * change set depends on it.
 */
const NOT_UTF8_CREATED = "its name is not valid UTF-8: not applied to the workspace";
const NOT_UTF8_KEPT = "its name is not valid UTF-8: left in the workspace, not deleted";

/**
 * The names in `dir` (an upper-layer path, or the raw names of a workspace directory) that are
 * valid UTF-8. The others are listed in `out.skipped` under `rel` with `reason` (when given).
 * @returns the valid names, and how many were left out
 */
async function namesIn(dir: string | Buffer[], rel: string, out: ReadResult, reason: string | null): Promise<{ names: string[]; left: number }> {
  const names: string[] = [];
  let left = 0;
  for (const raw of typeof dir === "string" ? await fs.readdir(dir, { encoding: "buffer" }) : dir) {
    const name = utf8Name(raw);
    if (name !== null) {
      names.push(name);
      continue;
    }
    left++;
    if (reason) out.skipped.push({ path: rel ? `${rel}/${displayBytes(raw)}` : displayBytes(raw), reason });
  }
  return { names, left };
}

async function collectMergedDirs(upper: string, lower: BeneathReader, rel: string, out: Array<{ rel: string }>): Promise<void> {
  const dirents = await fs.readdir(path.join(upper, rel), { withFileTypes: true, encoding: "buffer" });
  for (const d of dirents) {
    const name = utf8Name(d.name);
    if (!d.isDirectory() || name === null) continue;
    const p = rel ? `${rel}/${name}` : name;
    if (lower.lstat(p)?.isDirectory()) {
      out.push({ rel: p });
      await collectMergedDirs(upper, lower, p, out);
    }
  }
}

/**
 * The subset of `rels` (directories of the upper layer) marked opaque. Reads the xattrs with
 * getfattr (package attr) in batches; python3 when getfattr is missing.
 */
async function opaqueDirs(upper: string, rels: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (rels.length === 0) return found;
  for (let i = 0; i < rels.length; i += 500) {
    const batch = rels.slice(i, i + 500);
    const abs = batch.map((r) => path.join(upper, r));
    const marked = await readOverlayXattrs(abs);
    for (const [file, names] of marked) {
      if (names.has("redirect")) throw new Error(`overlay upper layer has a redirected directory (${file}); mount with redirect_dir=off`);
      if (names.has("opaque")) found.add(path.relative(upper, file).split(path.sep).join("/"));
    }
  }
  return found;
}

/**
 * overlay xattrs (`trusted.overlay.*`) present on each of `files`. Only the `trusted.` namespace
 * counts: the gateway mounts its overlays as root without `userxattr`, so overlayfs writes its
 * markers there, where a command in the box (without CAP_SYS_ADMIN) cannot. A `user.overlay.*`
 * attribute in the upper layer was set by the command itself (plain user xattrs pass through the
 * overlay) and is data, not a marker: trusting it would let a command "delete" whatever lies below
 * a directory it marks, read-only paths included.
 */
async function readOverlayXattrs(files: string[]): Promise<Map<string, Set<string>>> {
  const result = new Map<string, Set<string>>();
  const add = (file: string, name: string) => {
    const short = name.replace(/^trusted\.overlay\./, "");
    if (!result.has(file)) result.set(file, new Set());
    result.get(file)!.add(short);
  };
  try {
    const { stdout } = await execFileAsync("getfattr", ["--absolute-names", "-h", "-d", "-m", "^trusted\\.overlay\\.", "--", ...files], {
      maxBuffer: 64 << 20,
    });
    let current = "";
    for (const line of stdout.split("\n")) {
      if (line.startsWith("# file: ")) current = unescapeGetfattr(line.slice(8));
      else if (line && !line.startsWith("#")) {
        const [name, value] = splitOnce(line, "=");
        // opaque="y" marks an opaque directory; "x" (newer kernels) only flags a directory that
        // holds whiteouts, which are read as such.
        if (name.endsWith(".opaque") && value !== '"y"') continue;
        add(current, name);
      }
    }
    return result;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const script =
    "import os,sys,json\nout={}\nfor f in sys.argv[1:]:\n  names=[]\n  for n in os.listxattr(f,follow_symlinks=False):\n    if n.startswith('trusted.overlay.'):\n      if n.endswith('.opaque') and os.getxattr(f,n,follow_symlinks=False)!=b'y': continue\n      names.append(n)\n  out[f]=names\nprint(json.dumps(out))";
  const { stdout } = await execFileAsync("python3", ["-c", script, ...files], { maxBuffer: 64 << 20 });
  for (const [file, names] of Object.entries(JSON.parse(stdout) as Record<string, string[]>)) for (const n of names) add(file, n);
  return result;
}

/** getfattr escapes unusual bytes in file names as octal (`\012`). */
function unescapeGetfattr(s: string): string {
  return Buffer.from(
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))),
    "latin1",
  ).toString("utf8");
}

function splitOnce(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + 1)];
}

function isWhiteout(st: Stats): boolean {
  return st.isCharacterDevice() && st.rdev === 0;
}

/**
 * The mode a file or directory of the upper layer is applied with: its permission bits and the
 * sticky bit, never setuid or setgid. The command ran as root in the box, so a set-id bit it set
 * would make the file run as root (or its group) for whoever starts it on the host.
 */
export function appliedMode(mode: number): number {
  return mode & 0o1777;
}

/** The state of an upper-layer entry as it will be applied (see `appliedMode`). */
function afterOf(st: Stats, link?: string): EntryState {
  const state = stateOf(st, link);
  return state.type === "symlink" ? state : { ...state, mode: appliedMode(state.mode) };
}

function stateOf(st: Stats, link?: string): EntryState {
  if (st.isSymbolicLink()) return { type: "symlink", mode: 0o777, size: 0, link };
  if (st.isDirectory()) return { type: "dir", mode: st.mode & 0o7777, size: 0 };
  return { type: "file", mode: st.mode & 0o7777, size: st.size };
}

/** The state of a workspace entry, with the device and inode it was read from. */
function lowerStateOf(st: Stats, link?: string): EntryState {
  return { ...stateOf(st, link), dev: st.dev, ino: st.ino };
}

async function walk(upper: string, lower: BeneathReader, rel: string, opaque: Set<string>, out: ReadResult): Promise<void> {
  const { names: dirents } = await namesIn(path.join(upper, rel), rel, out, NOT_UTF8_CREATED);
  // The upper layer's entries are looked up in parallel (file-system latency, not CPU, is the
  // cost); the workspace's one by one, each a direct system call through a directory handle.
  const stats = await statAll(dirents, (name) => fs.lstat(path.join(upper, rel ? `${rel}/${name}` : name)));
  for (const [i, name] of dirents.entries()) {
    const p = rel ? `${rel}/${name}` : name;
    const up = stats[i];
    const low = lower.lstat(p);
    if (isWhiteout(up)) {
      if (low) await deleteLower(lower, p, low, out);
      continue;
    }
    if (up.isDirectory()) {
      if (low?.isDirectory()) {
        if ((low.mode & 0o7777) !== appliedMode(up.mode)) {
          out.entries.push({ path: p, kind: "mode", before: stateOf(low), after: afterOf(up) });
        }
        await walk(upper, lower, p, opaque, out);
        if (opaque.has(p)) await deleteHiddenBelow(upper, lower, p, out);
      } else {
        if (low) await deleteLower(lower, p, low, out);
        out.entries.push({ path: p, kind: "dir_created", before: null, after: afterOf(up) });
        await walkCreated(upper, p, out);
      }
      continue;
    }
    if (up.isSymbolicLink()) {
      const link = await fs.readlink(path.join(upper, p));
      const lowLink = low?.isSymbolicLink() ? lower.readlink(p) : undefined;
      if (lowLink === link) continue;
      if (low?.isDirectory()) await deleteLower(lower, p, low, out);
      const before = low && !low.isDirectory() ? lowerStateOf(low, lowLink) : null;
      out.entries.push({ path: p, kind: "symlink", before, after: afterOf(up, link), source: path.join(upper, p) });
      continue;
    }
    if (up.isFile()) {
      const source = path.join(upper, p);
      if (low?.isFile()) {
        const sameMode = (low.mode & 0o7777) === appliedMode(up.mode);
        const sameBytes = low.size === up.size && (await sameContent(lower, p, low, source));
        if (sameBytes && sameMode) continue;
        out.entries.push({ path: p, kind: sameBytes ? "mode" : "modified", before: lowerStateOf(low), after: afterOf(up), source });
        continue;
      }
      if (low?.isDirectory()) await deleteLower(lower, p, low, out);
      const before = low?.isSymbolicLink() ? lowerStateOf(low, lower.readlink(p)) : null;
      out.entries.push({ path: p, kind: before ? "modified" : "created", before, after: afterOf(up), source });
      continue;
    }
    out.skipped.push({ path: p, reason: "special file (FIFO, socket or device): not applied to the workspace" });
  }
}

/** Everything below a directory the command created (no lower counterpart). */
async function walkCreated(upper: string, rel: string, out: ReadResult): Promise<void> {
  const { names } = await namesIn(path.join(upper, rel), rel, out, NOT_UTF8_CREATED);
  const stats = await statAll(names, (name) => fs.lstat(path.join(upper, `${rel}/${name}`)));
  for (const [i, name] of names.entries()) {
    const p = `${rel}/${name}`;
    const abs = path.join(upper, p);
    const st = stats[i];
    if (isWhiteout(st)) continue;
    if (st.isDirectory()) {
      out.entries.push({ path: p, kind: "dir_created", before: null, after: afterOf(st) });
      await walkCreated(upper, p, out);
    } else if (st.isSymbolicLink()) {
      out.entries.push({ path: p, kind: "symlink", before: null, after: afterOf(st, await fs.readlink(abs)), source: abs });
    } else if (st.isFile()) {
      out.entries.push({ path: p, kind: "created", before: null, after: afterOf(st), source: abs });
    } else {
      out.skipped.push({ path: p, reason: "special file (FIFO, socket or device): not applied to the workspace" });
    }
  }
}

/** A lower entry (and, for a directory, everything below it) was deleted. */
async function deleteLower(lower: BeneathReader, rel: string, low: Stats, out: ReadResult): Promise<void> {
  if (low.isDirectory()) {
    const raw = lower.readdir(rel);
    if (raw === null) throw new WorkspaceChanged(rel, "the directory is gone");
    const { names, left } = await namesIn(raw, rel, out, NOT_UTF8_KEPT);
    const skippedBefore = out.skipped.length;
    for (const name of names) {
      const p = `${rel}/${name}`;
      const st = lower.lstat(p);
      if (st) await deleteLower(lower, p, st, out);
    }
    // A directory that keeps an entry cannot be removed: it stays, and says why.
    if (left > 0 || out.skipped.length > skippedBefore) {
      out.skipped.push({ path: rel, reason: "holds an entry that is left in place: the directory is kept" });
      return;
    }
    out.entries.push({ path: rel, kind: "dir_deleted", before: lowerStateOf(low), after: null });
    return;
  }
  const link = low.isSymbolicLink() ? lower.readlink(rel) : undefined;
  out.entries.push({ path: rel, kind: "deleted", before: lowerStateOf(low, link), after: null });
}

/** An opaque directory: lower entries the upper layer does not hold again were deleted. */
async function deleteHiddenBelow(upper: string, lower: BeneathReader, rel: string, out: ReadResult): Promise<void> {
  // Compared as bytes (latin1 keeps each byte); names that are not UTF-8 are reported by the walk of the upper layer.
  const upperNames = new Set((await fs.readdir(path.join(upper, rel), { encoding: "buffer" })).map((b) => b.toString("latin1")));
  const lowerNames = lower.readdir(rel);
  if (lowerNames === null) throw new WorkspaceChanged(rel, "the directory is gone");
  for (const raw of lowerNames) {
    if (upperNames.has(raw.toString("latin1"))) continue;
    const name = utf8Name(raw);
    if (name === null) {
      out.skipped.push({ path: `${rel}/${displayBytes(raw)}`, reason: NOT_UTF8_KEPT });
      continue;
    }
    const p = `${rel}/${name}`;
    const st = lower.lstat(p);
    if (st) await deleteLower(lower, p, st, out);
  }
}

/** `fn` over every name with at most 16 in flight; results in input order. */
async function statAll<T>(names: string[], fn: (name: string) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const i = next++;
      out[i] = await fn(names[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, names.length) }, worker));
  return out;
}

/**
 * True when the workspace file `rel` (still the file `low` describes: same device, inode and
 * size) holds the same bytes as the upper-layer file `upperFile` (compared by sha256, streaming).
 */
async function sameContent(lower: BeneathReader, rel: string, low: Stats, upperFile: string): Promise<boolean> {
  const [ha, hb] = await Promise.all([lower.hash(rel, { dev: low.dev, ino: low.ino, size: low.size }), hashFile(upperFile)]);
  if (ha === null) throw new WorkspaceChanged(rel, "it is gone");
  return ha === hb;
}

/** sha256 (hex) of a file's bytes, streaming; O_NOFOLLOW so a symlink is never followed. */
export async function hashFile(abs: string): Promise<string> {
  const handle = await fs.open(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const hash = crypto.createHash("sha256");
    for await (const chunk of createReadStream("", { fd: handle.fd, autoClose: false })) hash.update(chunk as Buffer);
    return hash.digest("hex");
  } finally {
    await handle.close();
  }
}
