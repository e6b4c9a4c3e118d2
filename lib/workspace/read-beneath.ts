import crypto from "node:crypto";
import fs, { constants as fsConstants, type Stats } from "node:fs";
import path from "node:path";
import { ToolError } from "@/lib/errors";
import { FencedFile } from "@/lib/workspace/fenced-file";

/**
 * Reading the workspace the way the gateway's own bookkeeping must: never by a path that was
 * checked earlier. A change set is read (lstat), staged (its before-bytes backed up) and applied
 * at different moments; in between, another process could swap a file, or a directory above it,
 * for a symbolic link, and a plain `readFile(root + rel)` would then read whatever the link names
 * (a secret in the workspace, a host file) and keep it as the "before" bytes of `rel`.
 *
 * A `BeneathReader` reaches every path from a handle on the workspace root one component at a
 * time, each directory opened through its parent's handle with `O_NOFOLLOW | O_DIRECTORY` (the
 * openat walk Node lacks, through Linux's `/proc/self/fd/N/name`), and the last component with
 * `O_NOFOLLOW`: a symbolic link anywhere on the path is never followed. A file is then checked on
 * its open descriptor (`fstat`): a regular file, and, when the caller recorded one, the same
 * device, inode and size (or sha256) as before; the bytes come from that descriptor only.
 *
 * A mismatch is `WorkspaceChanged` (a `conflict` with reason "changed_during_call"): the workspace
 * changed under the call, and the caller keeps nothing it read.
 */

/** What a caller recorded about a file earlier; every member given must still hold. */
export interface ExpectedFile {
  /** Device and inode of the file (its lstat when the change set was read). */
  dev?: number;
  ino?: number;
  /** Size in bytes. */
  size?: number;
  /** sha256 (hex) of the bytes; checked on the bytes read. */
  sha256?: string | null;
}

/** The workspace changed between a check and a read: a `conflict` (reason "changed_during_call"). */
export class WorkspaceChanged extends ToolError<"conflict"> {
  constructor(rel: string, what: string) {
    super("conflict", `${rel} changed while the call was reading it (${what}); nothing was applied. Retry the call.`, {
      reason: "changed_during_call",
      path: rel,
    });
  }
}

const PROC_FD = "/proc/self/fd";
const procFdAvailable = (() => {
  try {
    return fs.statSync(/*turbopackIgnore: true*/ PROC_FD).isDirectory();
  } catch {
    return false;
  }
})();

const DIR_FLAGS = fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW;
/** O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused after the fstat). */
const FILE_FLAGS = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;
/** Largest single read while hashing (bytes). */
const HASH_CHUNK = 1 << 20;
/** Directory handles kept open by one reader (the most recently used ones). */
const DIR_CACHE_MAX = 32;

function errnoOf(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Splits a workspace-relative "/"-path; "" is the root. @throws on "." / ".." / empty components. */
function components(rel: string): string[] {
  if (rel === "") return [];
  const parts = rel.split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) throw new ToolError("path_invalid", `Invalid workspace path ${JSON.stringify(rel)}.`, { path: rel });
  return parts;
}

/**
 * Reads paths below one workspace root without following symbolic links on any component. Holds
 * a few directory handles while in use: `close()` it when done (or use `withBeneathReader`).
 * Every method is synchronous except reading a file's bytes (large reads go through the thread
 * pool): each step is one system call on a local file system.
 */
export class BeneathReader {
  readonly #root: string;
  readonly #dirs = new Map<string, number>();

  /** @param root canonical absolute path of the workspace root */
  constructor(root: string) {
    this.#root = root;
  }

  /** The root this reader reads below. */
  get root(): string {
    return this.#root;
  }

  /**
   * A handle on the directory `rel` (a cached one when possible), reached without following a
   * link. @returns null when a component is missing or not a directory (ENOENT, ENOTDIR)
   * @throws WorkspaceChanged when a component is a symbolic link (ELOOP)
   */
  #dir(rel: string): number | null {
    const cached = this.#dirs.get(rel);
    if (cached !== undefined) {
      // Most recently used last, so the oldest is evicted first.
      this.#dirs.delete(rel);
      this.#dirs.set(rel, cached);
      return cached;
    }
    const parts = components(rel);
    let fd: number;
    try {
      if (parts.length === 0) fd = fs.openSync(/*turbopackIgnore: true*/ this.#root, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
      else {
        const parent = this.#dir(parts.slice(0, -1).join("/"));
        if (parent === null) return null;
        fd = fs.openSync(/*turbopackIgnore: true*/ this.#at(parent, parts.slice(0, -1).join("/"), parts[parts.length - 1]), DIR_FLAGS);
      }
    } catch (err) {
      const code = errnoOf(err);
      // O_DIRECTORY | O_NOFOLLOW on a link answers ENOTDIR (or ELOOP): a link is told from a file by its lstat.
      if (code === "ENOTDIR" && parts.length > 0 && this.lstat(rel)?.isSymbolicLink()) this.#linkOnPath(rel);
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      if (code === "ELOOP") this.#linkOnPath(rel);
      throw err;
    }
    this.#dirs.set(rel, fd);
    if (this.#dirs.size > DIR_CACHE_MAX) {
      for (const [key, old] of this.#dirs) {
        if (key === rel || rel.startsWith(`${key}/`)) continue;
        this.#dirs.delete(key);
        fs.closeSync(old);
        break;
      }
    }
    return fd;
  }

  #linkOnPath(rel: string): never {
    throw new WorkspaceChanged(rel, "a directory on its path is a symbolic link");
  }

  /**
   * The path by which `name` inside the directory open as `fd` is reached. With /proc it goes
   * through the handle; without, it is the plain path, and `#checkPlain` verifies the directory.
   */
  #at(fd: number, dirRel: string, name: string): string {
    if (procFdAvailable) return `${PROC_FD}/${fd}/${name}`;
    this.#checkPlain(fd, dirRel);
    return path.join(/*turbopackIgnore: true*/ this.#root, dirRel, name);
  }

  /** Without /proc: the directory at the plain path must be the one held open, reached without links. */
  #checkPlain(fd: number, dirRel: string): void {
    const abs = path.join(/*turbopackIgnore: true*/ this.#root, dirRel);
    const held = fs.fstatSync(fd);
    const now = fs.lstatSync(/*turbopackIgnore: true*/ abs);
    if (now.dev !== held.dev || now.ino !== held.ino || fs.realpathSync.native(/*turbopackIgnore: true*/ abs) !== abs) {
      throw new WorkspaceChanged(dirRel || ".", "a directory on its path moved");
    }
  }

  /** Splits `rel` into its directory handle and last name; null when the directory is missing. */
  #parentOf(rel: string): { fd: number; dir: string; name: string } | null {
    const parts = components(rel);
    if (parts.length === 0) throw new ToolError("path_invalid", "The workspace root has no parent here.", { path: rel });
    const dir = parts.slice(0, -1).join("/");
    const fd = this.#dir(dir);
    return fd === null ? null : { fd, dir, name: parts[parts.length - 1] };
  }

  /**
   * lstat of `rel` (the last component itself, never what a link names), every directory above
   * it reached without following links.
   * @returns null when it does not exist (or a component above it is not a directory)
   * @throws WorkspaceChanged when a directory above it is a symbolic link
   */
  lstat(rel: string): Stats | null {
    if (rel === "") return fs.lstatSync(/*turbopackIgnore: true*/ this.#root);
    const p = this.#parentOf(rel);
    if (!p) return null;
    try {
      return fs.lstatSync(/*turbopackIgnore: true*/ this.#at(p.fd, p.dir, p.name));
    } catch (err) {
      const code = errnoOf(err);
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      throw err;
    }
  }

  /** The target of the symbolic link `rel`. @throws errno errors (EINVAL: not a link; ENOENT) */
  readlink(rel: string): string {
    const p = this.#parentOf(rel);
    if (!p) throw Object.assign(new Error(`ENOENT: ${rel}`), { code: "ENOENT" });
    return fs.readlinkSync(/*turbopackIgnore: true*/ this.#at(p.fd, p.dir, p.name));
  }

  /**
   * The names in directory `rel`, as bytes (names need not be UTF-8).
   * @returns null when it is missing or not a directory
   * @throws WorkspaceChanged when it, or a directory above it, is a symbolic link
   */
  readdir(rel: string): Buffer[] | null {
    const fd = this.#dir(rel);
    if (fd === null) return null;
    const at = procFdAvailable ? `${PROC_FD}/${fd}` : path.join(/*turbopackIgnore: true*/ this.#root, rel);
    if (!procFdAvailable) this.#checkPlain(fd, rel);
    return fs.readdirSync(/*turbopackIgnore: true*/ at, { encoding: "buffer" });
  }

  /**
   * Opens the regular file `rel` and checks the descriptor: a regular file, with the device,
   * inode and size `expected` names (each only when given). The caller closes it.
   * @returns null when `rel` does not exist
   * @throws WorkspaceChanged when it is a symbolic link (or one is on its path), not a regular
   *   file, or not the file `expected` describes
   */
  open(rel: string, expected: ExpectedFile = {}): FencedFile | null {
    const p = this.#parentOf(rel);
    if (!p) return null;
    let file: FencedFile;
    try {
      file = new FencedFile(fs.openSync(/*turbopackIgnore: true*/ this.#at(p.fd, p.dir, p.name), FILE_FLAGS));
    } catch (err) {
      const code = errnoOf(err);
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      if (code === "ELOOP") throw new WorkspaceChanged(rel, "it is a symbolic link now");
      if (code === "EISDIR") throw new WorkspaceChanged(rel, "it is a directory now");
      // A unix socket cannot be opened (ENXIO): not a regular file either.
      if (code === "ENXIO") throw new WorkspaceChanged(rel, "it is not a regular file now");
      throw err;
    }
    try {
      const st = file.statNow();
      if (!st.isFile()) throw new WorkspaceChanged(rel, "it is not a regular file now");
      if (expected.dev !== undefined && st.dev !== expected.dev) throw new WorkspaceChanged(rel, "another file is at its path now");
      if (expected.ino !== undefined && st.ino !== expected.ino) throw new WorkspaceChanged(rel, "another file is at its path now");
      if (expected.size !== undefined && st.size !== expected.size) throw new WorkspaceChanged(rel, "its size changed");
      return file;
    } catch (err) {
      void file.close();
      throw err;
    }
  }

  /**
   * The bytes of the regular file `rel`, read from the descriptor `open` checked; with
   * `expected.sha256`, the bytes must hash to it, and with `expected.size` the file must not have
   * grown or shrunk while it was read.
   * @returns null when `rel` does not exist
   * @throws WorkspaceChanged as `open`, or when the bytes are not the expected ones
   */
  async readFile(rel: string, expected: ExpectedFile = {}): Promise<Buffer | null> {
    const file = this.open(rel, expected);
    if (!file) return null;
    try {
      const bytes = await file.readFile();
      if (expected.size !== undefined && bytes.length !== expected.size) throw new WorkspaceChanged(rel, "its size changed");
      if (expected.sha256 && sha256(bytes) !== expected.sha256) throw new WorkspaceChanged(rel, "its content changed");
      return bytes;
    } finally {
      await file.close();
    }
  }

  /**
   * sha256 (hex) of the regular file `rel`, streamed from the checked descriptor.
   * @returns null when `rel` does not exist
   * @throws WorkspaceChanged as `open`
   */
  async hash(rel: string, expected: ExpectedFile = {}): Promise<string | null> {
    const file = this.open(rel, expected);
    if (!file) return null;
    try {
      const hash = crypto.createHash("sha256");
      // Sized to the file (one byte more, to see its end in one read), at most 1 MiB per read.
      const buf = Buffer.allocUnsafe(Math.min(file.statNow().size + 1, HASH_CHUNK));
      let pos = 0;
      for (;;) {
        const { bytesRead } = await file.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        hash.update(buf.subarray(0, bytesRead));
        pos += bytesRead;
      }
      return hash.digest("hex");
    } finally {
      await file.close();
    }
  }

  /**
   * Sets the permission bits of the file or directory `rel` through a descriptor opened without
   * following links (`fchmod`), after checking it is the entry `expected` names (device, inode).
   * @throws WorkspaceChanged when it is a link now, is gone, or is another entry
   */
  chmod(rel: string, mode: number, expected: ExpectedFile = {}): void {
    let fd: number | null = null;
    try {
      const st = this.lstat(rel);
      if (!st) throw new WorkspaceChanged(rel, "it is gone");
      if (st.isSymbolicLink()) throw new WorkspaceChanged(rel, "it is a symbolic link now");
      if (st.isDirectory()) {
        fd = this.#dir(rel);
        if (fd === null) throw new WorkspaceChanged(rel, "it is gone");
        const held = fs.fstatSync(fd);
        if ((expected.dev !== undefined && held.dev !== expected.dev) || (expected.ino !== undefined && held.ino !== expected.ino)) {
          throw new WorkspaceChanged(rel, "another directory is at its path now");
        }
        fs.fchmodSync(fd, mode);
        fd = null; // cached by #dir: closed with the reader
        return;
      }
      const file = this.open(rel, { ...(expected.dev !== undefined && { dev: expected.dev }), ...(expected.ino !== undefined && { ino: expected.ino }) });
      if (!file) throw new WorkspaceChanged(rel, "it is gone");
      try {
        fs.fchmodSync(file.fd, mode);
      } finally {
        void file.close();
      }
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
  }

  /** Closes every directory handle this reader holds; it can be used again afterwards. */
  close(): void {
    for (const fd of this.#dirs.values()) fs.closeSync(fd);
    this.#dirs.clear();
  }
}

/** Runs `fn` with a reader on `root` and closes the reader when `fn` settles. */
export async function withBeneathReader<T>(root: string, fn: (reader: BeneathReader) => Promise<T>): Promise<T> {
  const reader = new BeneathReader(root);
  try {
    return await fn(reader);
  } finally {
    reader.close();
  }
}

function sha256(bytes: Buffer): string {
  return crypto.createHash("sha256").update(bytes).digest("hex");
}
