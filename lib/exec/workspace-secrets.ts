import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { SecretMatcher } from "@/lib/policy/rule-match";

/**
 * Finds a workspace's secret files and directories (the paths the policy's sensitive-path rules
 * name, `secretPathMatcher` in lib/policy/rule-match.ts) so the sandbox can mask each one before
 * a command starts (lib/exec/sandbox.ts): a command sees a secret file empty and read-only, a
 * secret directory (`.ssh`, `.aws`, …) empty and read-only, however it spells the read.
 *
 * Cost: the workspace's directory tree is kept per workspace root (on `globalThis`) and
 * revalidated before every command by one `lstat` per directory: a directory whose inode, mtime
 * or ctime changed (an entry was added, removed or renamed, or its permissions changed) is read
 * again, and a new directory is read whole. A directory modified within RACY_MS of when it was
 * read is read again next time too (a second change within the file system's timestamp
 * granularity would leave its mtime equal). File contents are never read. A regular file with
 * more than one name is noted (its inode) when its directory is read, so a hard link to a secret
 * under a name that is not secret is masked as well.
 *
 * Names that are not valid UTF-8: an entry whose name is not valid UTF-8 counts as secret, file,
 * directory or symlink alike (`WorkspaceSecrets.raw`). The matcher works on strings, and Node
 * decodes such a name with replacement characters that name no file, so `.env\xff` or a directory
 * `.ssh\x80` could not be judged by its name; a person's project has no need for such names,
 * so masking every one of them is the rule that cannot miss a secret. A directory with such a
 * name is masked whole and not descended.
 *
 * Not scanned: `.git` directories (repository internals: the sandbox keeps their hooks and config
 * read-only, and the policy's secret names never occur inside them; a secret committed to the
 * repository is in its object store, which no mask of a name can hide) and `node_modules`
 * (package-manager output: every file in it comes from a published package, not from the person,
 * and it is often hundreds of thousands of entries). A secret placed there is not masked.
 *
 * Fail closed: a workspace with more than `maxEntries` entries, or a scan that has not finished
 * within `maxMs`, throws SecretScanLimitError and the command does not start (what was read is
 * kept, so a slow first scan completes over later commands).
 */

/** Directory names never descended into (see the file comment for why). */
export const UNSCANNED_DIRS: readonly string[] = [".git", "node_modules"];

/** A directory modified this recently (ms) before it was read is read again next time. */
const RACY_MS = 1000;
/** How long one scan may block the event loop before it yields (ms). */
const SLICE_MS = 8;

type Kind = "file" | "dir" | "link" | "other";

/** An entry whose name is not valid UTF-8 (masked whatever it is). */
export interface RawSecret {
  /** Workspace-relative path of its directory ("" for the root; valid UTF-8, "/"-separated). */
  dir: string;
  /** The entry's name, its bytes as on disk. */
  name: Buffer;
  /** The name for people: printable ASCII kept, every other byte as `\xNN`. */
  display: string;
  kind: Kind;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The name as a string when its bytes are valid UTF-8, else null. */
export function utf8Name(name: Buffer): string | null {
  try {
    return strictUtf8.decode(name);
  } catch {
    return null;
  }
}

/** A byte string shown with every byte outside printable ASCII (and `\`) as `\xNN`. */
export function displayBytes(name: Buffer): string {
  let out = "";
  for (const b of name) out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`;
  return out;
}

interface DirNode {
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  /** Read again on the next scan (it was modified too recently to trust its mtime). */
  racy: boolean;
  entries: Array<{ name: string; kind: Kind }>;
  /** Entries whose names are not valid UTF-8 (not in `entries`: no string names them). */
  raw: Array<{ name: Buffer; kind: Kind }>;
  /** Regular files of this directory with more than one name (hard links): name and inode. */
  linked: Array<{ name: string; ino: number }>;
  /** Secret entries of this directory for the matcher `matchKey` (workspace-relative). */
  matchKey: string | null;
  secretFiles: string[];
  secretDirs: string[];
  secretLinks: string[];
}

interface Tree {
  nodes: Map<string, DirNode>;
  /** Sum of entries over all nodes. */
  entries: number;
}

/** A workspace's secret paths, workspace-relative ("/"-separated), as found by `workspaceSecrets`. */
export interface WorkspaceSecrets {
  /** Secret files (and other non-directories), masked by an empty read-only file. */
  files: string[];
  /** Secret directories, masked whole by an empty read-only directory (not descended). */
  dirs: string[];
  /** Symlinks with a secret name: the box masks their target when it lies in the workspace. */
  links: string[];
  /** Secret paths left visible by the operator's exposure globs. */
  exposed: string[];
  /** Entries whose names are not valid UTF-8, all masked (never exposed: no glob names them). */
  raw: RawSecret[];
  /**
   * Workspace-relative git directories and pointers, outside masked directories: each `.git`
   * directory, each `.git` file (`gitdir: …`, a worktree or submodule), and each directory laid out
   * as a bare repository (`HEAD`, `config`, `objects/`, `refs/`; "" when the root is one).
   */
  gitDirs: string[];
  /** Entries in the scanned tree. */
  entries: number;
  /** Directories read during this scan (the rest were unchanged). */
  read: number;
}

/** The scan could not finish within its budget: the command must not start. */
export class SecretScanLimitError extends Error {
  constructor(
    message: string,
    readonly limit: "entries" | "time",
    readonly entries: number,
  ) {
    super(message);
    this.name = "SecretScanLimitError";
  }
}

const globalForSecrets = globalThis as unknown as { agentReachWorkspaceSecrets?: Map<string, Tree> };
function trees(): Map<string, Tree> {
  globalForSecrets.agentReachWorkspaceSecrets ??= new Map();
  return globalForSecrets.agentReachWorkspaceSecrets;
}

/** Forgets every cached workspace tree (tests). */
export function resetWorkspaceSecrets(): void {
  trees().clear();
}

/**
 * The secret paths of the workspace at `root` (canonical), from the cached tree revalidated now.
 * @param isSecret the secret-path predicate (lib/policy/rule-match.ts `secretPathMatcher`)
 * @param options.expose operator globs (picomatch) of secret paths to leave visible
 * @param options.exposeUnder whether an exposure glob may name something inside a directory: a
 *   secret directory is then masked file by file instead of whole
 * @param options.maxEntries most entries the tree may hold
 * @param options.maxMs most time this scan may take (ms)
 * @throws SecretScanLimitError when a limit is passed (nothing may run unmasked)
 */
export async function workspaceSecrets(
  root: string,
  isSecret: SecretMatcher,
  options: { expose?: (relative: string) => boolean; exposeUnder?: (dir: string) => boolean; maxEntries: number; maxMs: number },
): Promise<WorkspaceSecrets> {
  const started = performance.now();
  let sliceStart = started;
  let tree = trees().get(root);
  if (!tree) {
    tree = { nodes: new Map(), entries: 0 };
    trees().set(root, tree);
  }
  const visited = new Set<string>();
  const out: WorkspaceSecrets = { files: [], dirs: [], links: [], exposed: [], raw: [], gitDirs: [], entries: 0, read: 0 };
  const expose = options.expose ?? (() => false);
  const exposeUnder = options.exposeUnder ?? (() => false);
  const stack: string[] = [""];
  // Directories inside a masked secret directory: read (and cached) only for the inodes of their
  // multiply-linked files, whose other names outside must be masked too.
  const insideMasked = new Set<string>();
  const maskedInodes = new Set<number>();
  while (stack.length > 0) {
    const rel = stack.pop()!;
    const abs = rel ? path.join(root, rel) : root;
    const st = fs.lstatSync(/*turbopackIgnore: true*/ abs, { throwIfNoEntry: false });
    if (!st || !st.isDirectory()) continue;
    visited.add(rel);
    let node = tree.nodes.get(rel);
    if (!node || node.racy || node.ino !== st.ino || node.mtimeMs !== st.mtimeMs || node.ctimeMs !== st.ctimeMs) {
      const readAt = Date.now();
      // Names are read as bytes: a name that is not valid UTF-8 must not be decoded into another.
      let dirents: Array<fs.Dirent<Buffer>>;
      try {
        dirents = fs.readdirSync(/*turbopackIgnore: true*/ abs, { withFileTypes: true, encoding: "buffer" });
      } catch (e) {
        // Unreadable (permissions) or gone since the lstat: nothing in it can be shown either way
        // when gone; an unreadable directory is shown unreadable in the box too (same rights).
        if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") continue;
        dirents = [];
      }
      if (node) tree.entries -= node.entries.length + node.raw.length;
      const kindOf = (d: fs.Dirent<Buffer>): Kind => (d.isDirectory() ? "dir" : d.isSymbolicLink() ? "link" : d.isFile() ? "file" : "other");
      const entries: DirNode["entries"] = [];
      const raw: DirNode["raw"] = [];
      for (const d of dirents) {
        const name = utf8Name(d.name);
        if (name === null) raw.push({ name: d.name, kind: kindOf(d) });
        else entries.push({ name, kind: kindOf(d) });
      }
      // A regular file with several names may be a secret under another name (see `linkedNames`).
      const linked: DirNode["linked"] = [];
      for (const e of entries) {
        if (e.kind !== "file") continue;
        const fst = fs.lstatSync(/*turbopackIgnore: true*/ path.join(abs, e.name), { throwIfNoEntry: false });
        if (fst && fst.isFile() && fst.nlink > 1) linked.push({ name: e.name, ino: fst.ino });
      }
      node = {
        ino: st.ino,
        mtimeMs: st.mtimeMs,
        ctimeMs: st.ctimeMs,
        racy: Math.max(st.mtimeMs, st.ctimeMs) >= readAt - RACY_MS,
        entries,
        raw,
        linked,
        matchKey: null,
        secretFiles: [],
        secretDirs: [],
        secretLinks: [],
      };
      tree.nodes.set(rel, node);
      tree.entries += node.entries.length + node.raw.length;
      out.read++;
      if (tree.entries > options.maxEntries) {
        throw new SecretScanLimitError(
          `the workspace holds more than ${options.maxEntries} files and directories to check for secrets (.env, keys) before a command (AGENT_REACH_SANDBOX_SCAN_MAX_ENTRIES; .git and node_modules are not counted)`,
          "entries",
          tree.entries,
        );
      }
    }
    if (insideMasked.has(rel)) {
      for (const l of node.linked) maskedInodes.add(l.ino);
      for (const e of node.entries) {
        if (e.kind !== "dir" || UNSCANNED_DIRS.includes(e.name)) continue;
        const child = `${rel}/${e.name}`;
        insideMasked.add(child);
        stack.push(child);
      }
      continue;
    }
    if (node.matchKey !== isSecret.key) classify(node, rel, isSecret);
    const dotGit = node.entries.find((e) => e.name === ".git" && (e.kind === "dir" || e.kind === "file"));
    if (dotGit) out.gitDirs.push(rel ? `${rel}/.git` : ".git");
    if (looksBare(node)) out.gitDirs.push(rel);
    for (const r of node.raw) out.raw.push({ dir: rel, name: r.name, display: rel ? `${rel}/${displayBytes(r.name)}` : displayBytes(r.name), kind: r.kind });
    for (const f of node.secretFiles) (expose(f) ? out.exposed : out.files).push(f);
    for (const l of node.secretLinks) (expose(l) ? out.exposed : out.links).push(l);
    for (const d of node.secretDirs) {
      // An exposed secret directory is descended: its secret files are masked one by one unless
      // exposed as well.
      if (expose(d) || exposeUnder(d)) {
        if (expose(d)) out.exposed.push(d);
        stack.push(d);
      } else {
        out.dirs.push(d);
        insideMasked.add(d);
        stack.push(d);
      }
    }
    for (const e of node.entries) {
      if (e.kind !== "dir" || UNSCANNED_DIRS.includes(e.name)) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (!node.secretDirs.includes(child)) stack.push(child);
    }
    const now = performance.now();
    if (now - started > options.maxMs) {
      throw new SecretScanLimitError(`checking the workspace for secrets (.env, keys) before a command took more than ${options.maxMs} ms`, "time", tree.entries);
    }
    if (now - sliceStart > SLICE_MS) {
      await new Promise<void>((r) => setImmediate(r));
      sliceStart = performance.now();
    }
  }
  // Directories that are gone (or no longer reached) leave the tree.
  for (const [rel, node] of tree.nodes) {
    if (!visited.has(rel)) {
      tree.entries -= node.entries.length + node.raw.length;
      tree.nodes.delete(rel);
    }
  }
  out.entries = tree.entries;
  out.files.push(...linkedNames(tree, visited, insideMasked, out.files, maskedInodes));
  return out;
}

/**
 * Other names of secret files: a hard link made earlier (by the person, or before a file was
 * renamed to a secret name) under a name that is not secret shows the same bytes. Each
 * directory's multiply-linked files are noted when it is read (one `lstat` per file then), so this
 * costs nothing while no secret has a second name.
 * @param secretInodes inodes of multiply-linked files inside masked secret directories
 */
function linkedNames(tree: Tree, visited: ReadonlySet<string>, masked: ReadonlySet<string>, files: readonly string[], secretInodes: Set<number>): string[] {
  const named = new Set(files);
  for (const rel of files) {
    const slash = rel.lastIndexOf("/");
    const hit = tree.nodes.get(slash < 0 ? "" : rel.slice(0, slash))?.linked.find((l) => l.name === rel.slice(slash + 1));
    if (hit) secretInodes.add(hit.ino);
  }
  if (secretInodes.size === 0) return [];
  const more: string[] = [];
  for (const rel of visited) {
    if (masked.has(rel)) continue;
    for (const l of tree.nodes.get(rel)?.linked ?? []) {
      const p = rel ? `${rel}/${l.name}` : l.name;
      if (secretInodes.has(l.ino) && !named.has(p)) more.push(p);
    }
  }
  return more;
}

/** A directory laid out as a bare git repository. */
function looksBare(node: DirNode): boolean {
  const kind = (name: string) => node.entries.find((e) => e.name === name)?.kind;
  return kind("HEAD") === "file" && kind("config") === "file" && kind("objects") === "dir" && kind("refs") === "dir";
}

/** Fills a node's secret entries for `isSecret`. */
function classify(node: DirNode, rel: string, isSecret: SecretMatcher): void {
  node.secretFiles = [];
  node.secretDirs = [];
  node.secretLinks = [];
  for (const e of node.entries) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.kind === "dir") {
      // A directory everything in which is secret (`.ssh`), or one named like a secret file
      // (`.env/`), is masked whole.
      if (!UNSCANNED_DIRS.includes(e.name) && (isSecretDir(child, isSecret) || isSecret(child))) node.secretDirs.push(child);
    } else if (isSecret(child)) (e.kind === "link" ? node.secretLinks : node.secretFiles).push(child);
  }
  node.matchKey = isSecret.key;
}

/**
 * Whether everything inside the directory `rel` is secret (a rule such as `**\/.ssh/**`): then
 * the directory is masked whole. Probed with names no real file needs to have.
 */
function isSecretDir(rel: string, isSecret: SecretMatcher): boolean {
  return isSecret(`${rel}/agent-reach-probe`) && isSecret(`${rel}/.agent-reach-probe`) && isSecret(`${rel}/agent-reach-probe/x.txt`);
}
