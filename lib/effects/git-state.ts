import crypto from "node:crypto";
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { diffFileBytes } from "@/lib/diff/unified";
import type { ChangeEntry } from "@/lib/effects/read-change-set";
import { BeneathReader } from "@/lib/workspace/read-beneath";

/**
 * What a change set does to git's own state, read semantically: the entries of git's index and
 * the refs (branches, tags, HEAD, the stash, pseudo-refs such as ORIG_HEAD, reflogs). The working
 * tree diff does not show them, yet a later `git checkout -- f`, `git reset --hard`,
 * `git stash pop` or `git reset --hard ORIG_HEAD` by the person writes whatever they name.
 *
 * - The index (`.git/index`, formats 2, 3 and 4, SHA-1 or SHA-256) is parsed here, without git:
 *   each entry's path, stage, mode, blob id and the assume-unchanged, skip-worktree and
 *   intent-to-add flags are compared before and after. A rewrite that only refreshes stat data
 *   (what `git status` does) changes nothing here and is benign.
 * - Staged content is compared with the working tree as the change set leaves it (the blob id of
 *   the file's bytes): `git add` of a file stages what the working tree already shows, and is
 *   ordinary; content that differs is named and shown as a diff.
 * - Ref files, `packed-refs` and reflogs are read before and after; every commit that a changed ref
 *   or a new reflog entry makes reachable and that was not reachable from the refs before is listed
 *   by git (`git log --raw` on a private, empty repository that borrows the objects: no hooks, no
 *   configuration, no attributes of the workspace), with the paths it changes.
 *
 * What holds (under every preset): staged or committed content that differs from the working tree
 * for a path that holds a change set by its path (a file that runs later, a secret: the caller's
 * `holdsByPath`) or that names a `.git` directory; any newly set skip-worktree or assume-unchanged
 * flag (git then hides the file's changes); a replace ref (git then substitutes one object for
 * another everywhere); an index git's format allows but this reader cannot check (a split index);
 * and any history git could not read. Ordinary staging and commits of ordinary files apply at once.
 */

/** What the review found. */
export interface GitStateReview {
  /** The index and ref changes, in words for the reviewer (empty when nothing but stat data changed). */
  lines: string[];
  /** Why the change set must wait for a reviewer (empty: nothing in git's state holds it). */
  holdReasons: string[];
  /** Unified diffs of staged or committed content that differs from the working tree. */
  diff: string;
  /** Changed index files whose entries are unchanged (a stat refresh, as `git status` writes). */
  statOnly: Set<string>;
}

/** One entry of git's index. */
export interface IndexEntry {
  path: string;
  stage: number;
  /** Octal file mode as git stores it: 100644, 100755, 120000 (symlink), 160000 (gitlink). */
  mode: number;
  oid: string;
  assumeUnchanged: boolean;
  skipWorktree: boolean;
  intentToAdd: boolean;
}

/** A parsed index: entries keyed by `path\0stage`, and the object id width (20 SHA-1, 32 SHA-256). */
export type ParsedIndex = { entries: Map<string, IndexEntry>; oidBytes: 20 | 32; extensions: Map<string, Buffer> } | { error: string };

const MAX_LINES = 30;
const MAX_DIFFS = 20;
const DIFF_BLOB_MAX_BYTES = 256 * 1024;
const WORKTREE_HASH_MAX_BYTES = 64 * 1024 * 1024;
const MAX_COMMITS = 1000;
const LOOSE_VERIFY_MAX_BYTES = 256 * 1024 * 1024;
/** Largest index, packed-refs, ref or reflog file read (bytes); a larger one is held unread. */
const GIT_FILE_MAX_BYTES = 256 * 1024 * 1024;
const MAX_LOOSE_REFS = 20_000;
const ZERO = /^0+$/;
/** The usual index modes, as git prints them (octal digits read as a decimal number). */
const MODES = new Map([0o100644, 0o100755, 0o120000, 0o160000, 0o40000].map((m) => [m, Number(m.toString(8))]));

/**
 * Parses git's index file (gitformat-index(5)): versions 2, 3 and 4, SHA-1 or SHA-256 object ids
 * (told apart by the trailing checksum, or by which width parses when the checksum is skipped).
 * A split index (`link` extension) is reported as an error: its entries live partly in another file.
 */
export function parseIndex(buf: Buffer): ParsedIndex {
  if (buf.length < 12 || buf.toString("latin1", 0, 4) !== "DIRC") return { error: "not a git index" };
  const widths: Array<20 | 32> = [];
  if (buf.length >= 32 && crypto.createHash("sha1").update(buf.subarray(0, buf.length - 20)).digest().equals(buf.subarray(buf.length - 20))) widths.push(20);
  else if (buf.length >= 44 && crypto.createHash("sha256").update(buf.subarray(0, buf.length - 32)).digest().equals(buf.subarray(buf.length - 32))) widths.push(32);
  else widths.push(20, 32);
  let last: ParsedIndex = { error: "unreadable index" };
  for (const w of widths) {
    last = parseWith(buf, w);
    if (!("error" in last)) return last;
  }
  return last;
}

function parseWith(buf: Buffer, h: 20 | 32): ParsedIndex {
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return { error: `index version ${version}` };
  const count = buf.readUInt32BE(8);
  const end = buf.length - h;
  const entries = new Map<string, IndexEntry>();
  let p = 12;
  let prev: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = p;
    if (p + 40 + h + 2 > end) return { error: "truncated index" };
    const mode = buf.readUInt32BE(p + 24);
    const oid = buf.toString("hex", p + 40, p + 40 + h);
    const flags = buf.readUInt16BE(p + 40 + h);
    p += 40 + h + 2;
    let ext = 0;
    if (flags & 0x4000) {
      if (version < 3 || p + 2 > end) return { error: "extended flags in a version 2 index" };
      ext = buf.readUInt16BE(p);
      p += 2;
    }
    let name: Buffer;
    if (version === 4) {
      let c = buf[p++];
      let strip = c & 127;
      while (c & 128) {
        if (p >= end) return { error: "truncated index" };
        strip += 1;
        c = buf[p++];
        strip = (strip << 7) + (c & 127);
      }
      if (strip > prev.length) return { error: "bad path compression" };
      const nul = buf.indexOf(0, p);
      if (nul < 0 || nul >= end) return { error: "truncated index" };
      name = Buffer.concat([prev.subarray(0, prev.length - strip), buf.subarray(p, nul)]);
      p = nul + 1;
    } else {
      const nul = buf.indexOf(0, p);
      if (nul < 0 || nul >= end) return { error: "truncated index" };
      name = buf.subarray(p, nul);
      // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
      p = start + ((nul - start + 8) & ~7);
      if (p > end) return { error: "truncated index" };
    }
    prev = name;
    const rel = name.toString("utf8");
    const stage = (flags >> 12) & 3;
    entries.set(`${rel}\0${stage}`, {
      path: rel,
      stage,
      mode: MODES.get(mode) ?? Number.parseInt(mode.toString(8), 10),
      oid,
      assumeUnchanged: (flags & 0x8000) !== 0,
      skipWorktree: (ext & 0x4000) !== 0,
      intentToAdd: (ext & 0x2000) !== 0,
    });
  }
  // Extensions: a 4-byte signature and a 32-bit size each, up to the checksum.
  const extensions = new Map<string, Buffer>();
  while (p + 8 <= end) {
    const sig = buf.toString("latin1", p, p + 4);
    const size = buf.readUInt32BE(p + 4);
    if (sig === "link") return { error: "a split index (core.splitIndex)" };
    if (p + 8 + size > end) return { error: "malformed index extensions" };
    extensions.set(sig, buf.subarray(p + 8, p + 8 + size));
    p += 8 + size;
  }
  if (p !== end) return { error: "malformed index extensions" };
  return { entries, oidBytes: h, extensions };
}

/** The git object id of a blob with `bytes` (`git hash-object`). */
export function blobId(bytes: Buffer, oidBytes: 20 | 32): string {
  return crypto
    .createHash(oidBytes === 32 ? "sha256" : "sha1")
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest("hex");
}

/** A repository directory found in the change set and the paths of it that changed. */
interface RepoChanges {
  /** Workspace-relative git directory: ".git", "sub/.git", ".git/worktrees/w", ".git/modules/m". */
  dir: string;
  /** The work tree (workspace-relative, "" for the root), or null when it is not known here. */
  worktree: string | null;
  /** Workspace-relative objects directory of the repository. */
  objects: string;
  index: ChangeEntry | null;
  refs: ChangeEntry[];
  logs: ChangeEntry[];
  /** Object store files: loose objects, packs and their indexes, commit-graphs, multi-pack indexes. */
  store: ChangeEntry[];
}

const REF_MARKERS = new Set(["index", "HEAD", "refs", "packed-refs", "logs", "objects", "config", "info", "hooks"]);
const PSEUDO_REF = /^(?:HEAD|[A-Z_]+_HEAD|AUTO_MERGE)$/;

/**
 * Files of a repository directory that ordinary agent git work writes (commit, add, stash,
 * checkout -b, merge clean or conflicted, gc, fetch, tag, branch -d, reset, revert, cherry-pick),
 * by path inside it. Each is either reviewed here by content (the index, refs, packed-refs,
 * pseudo-refs, reflogs, the object store), judged by lib/effects/git-danger.ts (config, hooks,
 * attributes, rebase and sequencer plans, worktree and module pointers), or read by git as text
 * only (messages, the description, ignore rules, lock files, gc's log).
 */
const ORDINARY_GIT_FILE = [
  /^index$/,
  /^objects\//,
  /^(?:refs\/.+|packed-refs|logs\/.+)$/,
  /^(?:COMMIT_EDITMSG|MERGE_MSG|MERGE_MODE|SQUASH_MSG|TAG_EDITMSG|NOTES_EDITMSG|EDIT_DESCRIPTION|description|gc\.log|gc\.pid|info\/refs|info\/exclude)$/,
  /\.lock$/,
  /^(?:config|config\.worktree|commondir|gitdir|locked|hooks\/.+|info\/attributes|(?:rebase-merge|rebase-apply|sequencer)\/.+)$/,
];

/** Why a file git reads but ordinary work does not write holds, in words, by its path inside the repository directory. */
function unusualGitFile(inner: string): string {
  if (inner === "info/grafts" || inner === "shallow") return "which git reads to decide the parents of commits: what a later git checkout, revert, reset or rebase writes";
  if (/^BISECT_/.test(inner)) return "which git bisect reads (git bisect reset and the next bisect step check out the commits it names)";
  if (/AUTOSTASH$/.test(inner) || /(?:^|\/)autostash$/.test(inner)) return "which names a stash git applies to the working tree when the operation ends (git commit, git merge --abort)";
  if (inner === "info/sparse-checkout" || inner === "info/sparse-checkout.cone") return "which decides which files a later git checkout writes or leaves out";
  if (inner.startsWith("rr-cache/")) return "a recorded conflict resolution git rerere writes into files when the conflict comes back";
  if (inner.startsWith("branches/") || inner.startsWith("remotes/")) return "which names where a later git fetch or pull takes commits from";
  return "a file of git's directory that ordinary git work does not write; git may read it to decide what a later command writes";
}

/** The repository directory and inner path of a path inside a `.git` directory, or null. */
function locate(rel: string): { dir: string; worktree: string | null; objects: string; inner: string } | null {
  const parts = rel.split("/");
  const at = parts.indexOf(".git");
  if (at === -1) return null;
  const gitRoot = parts.slice(0, at + 1).join("/");
  let pos = at + 1;
  let worktree: string | null = parts.slice(0, at).join("/");
  let objects = `${gitRoot}/objects`;
  if (parts[pos] === "worktrees" && parts.length > pos + 2) {
    pos += 2;
    worktree = null;
  } else if (parts[pos] === "modules") {
    let j = pos + 1;
    while (j < parts.length - 1 && !REF_MARKERS.has(parts[j])) j++;
    if (j === pos + 1 || j >= parts.length) return null;
    pos = j;
    worktree = null;
    objects = `${parts.slice(0, pos).join("/")}/objects`;
  }
  if (pos >= parts.length) return null;
  return { dir: parts.slice(0, pos).join("/"), worktree, objects, inner: parts.slice(pos).join("/") };
}

/** Whether any path of the change set is inside a `.git` directory (the cheap test before any review). */
export function touchesGitDir(entries: readonly ChangeEntry[]): boolean {
  return entries.some((e) => e.path === ".git" || e.path.startsWith(".git/") || e.path.includes("/.git/"));
}

/** Characters HFS+ ignores in a name (git's is_hfs_dotgit): `.g\u200cit` is `.git` there. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** Whether one path component names a `.git` directory in any spelling a file system could take for it. */
function isDotGit(c: string): boolean {
  const plain = c.replace(HFS_IGNORED, "").toLowerCase();
  // NTFS drops trailing dots and spaces, and knows `.git` by its short name `git~1`.
  return plain === ".git" || plain.replace(/[. ]+$/, "") === ".git" || /^git~\d+$/.test(plain);
}

/** Whether a path names a `.git` directory in any case (git refuses to check such a path out, but the index may hold it). */
function namesGitDir(p: string): boolean {
  return p.split("/").some(isDotGit);
}

/**
 * Why git's own path check (verify_path) would refuse an index or tree path, or null when it is a
 * plain relative path. git never writes such an entry, yet reads one from a hand-written index and
 * `git checkout -- .` writes through it: `../x` lands outside the work tree, `src/../package.json`
 * on package.json. Refused: an empty path, a leading or trailing `/` (but a sparse directory entry,
 * mode 040000, ends in `/`), an empty, `.` or `..` component, `.git` in any case or file-system
 * spelling, a backslash (a separator on Windows), a NUL or another control character.
 */
export function badGitPath(p: string, mode?: number): string | null {
  if (p === "") return "an empty path";
  if (p.startsWith("/")) return "an absolute path";
  const body = mode === 40000 && p.endsWith("/") ? p.slice(0, -1) : p;
  if (body.endsWith("/")) return "a path ending in /";
  if (/[\\]/.test(body)) return "a backslash (a directory separator on Windows)";
  if (/[\u0000-\u001f\u007f]/.test(body)) return "a control character";
  for (const c of body.split("/")) {
    if (c === "") return "an empty component (//)";
    if (c === "." || c === "..") return `a "${c}" component (it leaves its directory${c === ".." ? ", possibly the workspace" : ""})`;
    if (isDotGit(c)) return `a component that names git's own directory (${JSON.stringify(c)})`;
  }
  return null;
}

/**
 * Reviews what a change set does to git's index and refs.
 *
 * @param root canonical workspace root (the state before the command)
 * @param upper the overlay's upper layer (the command's changes)
 * @param entries the change set
 * @param holdsByPath whether content for a workspace-relative path holds a change set (runs later, secret)
 * @returns null when no path of the change set is inside a `.git` directory (nothing read, no git run)
 */
export async function reviewGitState(input: { root: string; upper: string; entries: readonly ChangeEntry[]; holdsByPath: (rel: string) => boolean }): Promise<GitStateReview | null> {
  if (!touchesGitDir(input.entries)) return null;
  const review: GitStateReview = { lines: [], holdReasons: [], diff: "", statOnly: new Set() };
  const byPath = new Map(input.entries.map((e) => [e.path, e]));
  const repos = new Map<string, RepoChanges>();
  for (const e of input.entries) {
    if ((e.after ?? e.before)?.type === "dir") continue;
    const loc = locate(e.path);
    if (!loc) continue;
    const repo = repos.get(loc.dir) ?? { dir: loc.dir, worktree: loc.worktree, objects: loc.objects, index: null, refs: [], logs: [], store: [] };
    repos.set(loc.dir, repo);
    // git follows a symlink in its directory (a legacy symbolic HEAD, a ref, the index) wherever it points.
    if (e.after?.type === "symlink" && e.after.link !== e.before?.link) {
      review.lines.push(`makes ${e.path} a symlink to ${JSON.stringify(e.after.link ?? "")}`);
      review.holdReasons.push(`makes ${e.path} a symlink to ${JSON.stringify(e.after.link ?? "")} (git follows it to read its state from there)`);
      continue;
    }
    if (/^sharedindex\./.test(loc.inner) && e.after) {
      review.holdReasons.push(`writes ${e.path}, part of a split index the gateway cannot review (what it stages is not shown)`);
      continue;
    }
    // An allow-list, not a list of the files known to be dangerous: git takes commits and content
    // to write from more files than refs (grafts, shallow, BISECT_START, MERGE_AUTOSTASH, …).
    if (e.after?.type === "file" && !PSEUDO_REF.test(loc.inner) && !ORDINARY_GIT_FILE.some((re) => re.test(loc.inner))) {
      review.lines.push(`changes ${e.path}`);
      review.holdReasons.push(`changes ${e.path}, ${unusualGitFile(loc.inner)}`);
      continue;
    }
    // An index, ref or reflog larger than any real one is not read into memory: it waits for a reviewer.
    const reviewed = loc.inner === "index" || loc.inner === "packed-refs" || loc.inner.startsWith("refs/") || loc.inner.startsWith("logs/") || PSEUDO_REF.test(loc.inner);
    if (reviewed && e.after?.type === "file" && e.after.size > GIT_FILE_MAX_BYTES) {
      review.holdReasons.push(`writes ${e.path} of ${e.after.size} bytes, larger than the gateway reviews (${GIT_FILE_MAX_BYTES / 1024 / 1024} MiB)`);
      continue;
    }
    if (loc.inner === "index") repo.index = e;
    else if (loc.inner.startsWith("objects/")) repo.store.push(e);
    else if (loc.inner === "packed-refs" || loc.inner.startsWith("refs/") || PSEUDO_REF.test(loc.inner)) repo.refs.push(e);
    else if (loc.inner.startsWith("logs/")) repo.logs.push(e);
  }
  const reader = new BeneathReader(input.root);
  try {
    const ctx = new Review(input.root, reader, input.upper, byPath, input.holdsByPath, review);
    for (const repo of repos.values()) {
      if (repo.store.length > 0) await ctx.objectStore(repo);
      if (repo.index) await ctx.index(repo);
      if (repo.refs.length > 0 || repo.logs.length > 0) await ctx.refs(repo);
    }
    await ctx.renderDiffs();
  } finally {
    reader.close();
  }
  if (review.lines.length > MAX_LINES) review.lines = [...review.lines.slice(0, MAX_LINES), `and ${review.lines.length - MAX_LINES} more changes to git's state`];
  return review;
}

/** A diff to show once the blobs are read. */
interface PendingDiff {
  repo: RepoChanges;
  title: string;
  path: string;
  /** The old side: bytes at hand, a blob id to read, or nothing (a new file). */
  before: Buffer | string | null;
  after: Buffer | string | null;
}

class Review {
  private readonly diffs: PendingDiff[] = [];
  private oidBytes: 20 | 32 = 20;

  constructor(
    private readonly root: string,
    /** The workspace, read without following links (a swapped-in link reads as nothing). */
    private readonly lower: BeneathReader,
    private readonly upper: string,
    private readonly byPath: Map<string, ChangeEntry>,
    private readonly holdsByPath: (rel: string) => boolean,
    private readonly out: GitStateReview,
  ) {}

  private hold(reason: string): void {
    if (!this.out.holdReasons.includes(reason)) this.out.holdReasons.push(reason);
  }

  /**
   * The bytes of a workspace path before the command, or null (missing, not a regular file, a
   * link on its path, or not the file the change set recorded there).
   */
  private async lowerBytes(rel: string): Promise<Buffer | null> {
    const before = this.byPath.get(rel)?.before;
    const expected = before?.type === "file" && before.dev !== undefined ? { dev: before.dev, ino: before.ino, size: before.size } : {};
    return this.lower.readFile(rel, expected).catch(() => null);
  }

  /** The bytes of a changed path after the command, or null when it was deleted. */
  private async upperBytes(e: ChangeEntry): Promise<Buffer | null> {
    if (!e.after || e.after.type !== "file") return null;
    return fs.readFile(e.source ?? path.join(this.upper, e.path)).catch(() => null);
  }

  /**
   * The working tree's version of `rel` as the change set leaves it: its blob id (for a symlink,
   * of its target, as git stores it), and its bytes when small; null when there is no file.
   */
  private async worktreeBlob(rel: string): Promise<{ oid: string; bytes: Buffer | null; link: boolean } | null> {
    const e = this.byPath.get(rel);
    if (e) {
      if (!e.after || e.after.type === "dir") return null;
      if (e.after.type === "symlink") {
        const b = Buffer.from(e.after.link ?? "");
        return { oid: blobId(b, this.oidBytes), bytes: b, link: true };
      }
      if (e.after.size > WORKTREE_HASH_MAX_BYTES) return { oid: "", bytes: null, link: false };
      const b = await this.upperBytes(e);
      return b ? { oid: blobId(b, this.oidBytes), bytes: b.length <= DIFF_BLOB_MAX_BYTES ? b : null, link: false } : null;
    }
    const st = quietly(() => this.lower.lstat(rel));
    if (!st) return null;
    if (st.isSymbolicLink()) {
      const target = quietly(() => this.lower.readlink(rel));
      if (target === null) return null;
      const b = Buffer.from(target);
      return { oid: blobId(b, this.oidBytes), bytes: b, link: true };
    }
    if (!st.isFile()) return null;
    if (st.size > WORKTREE_HASH_MAX_BYTES) return { oid: "", bytes: null, link: false };
    const b = await this.lower.readFile(rel, { dev: st.dev, ino: st.ino }).catch(() => null);
    return b ? { oid: blobId(b, this.oidBytes), bytes: b.length <= DIFF_BLOB_MAX_BYTES ? b : null, link: false } : null;
  }

  /** Whether content for `p` (inside the work tree `worktree`) holds the change set. */
  private risky(worktree: string | null, p: string): boolean {
    return namesGitDir(p) || this.holdsByPath(worktree ? `${worktree}/${p}` : p);
  }

  private wsPath(worktree: string | null, p: string): string {
    return worktree ? `${worktree}/${p}` : p;
  }

  /**
   * Verifies what the command wrote into the object store: git finds an object by its id and
   * (for a loose object, a pack index, a commit-graph) trusts the file that claims it, so a
   * rewritten or planted file could give an id the person already has other content. Each new or
   * changed loose object is inflated and hashed; each new pack is checked by `git verify-pack`,
   * each commit-graph by `git commit-graph verify`, a multi-pack index by
   * `git multi-pack-index verify`. Deleted files (gc, prune) take nothing away that can run.
   */
  async objectStore(repo: RepoChanges): Promise<void> {
    let looseBytes = 0;
    const verify: Array<{ what: string; args: string[] }> = [];
    for (const e of repo.store) {
      if (!e.after || e.after.type !== "file") continue;
      const inner = e.path.slice(repo.objects.length + 1);
      const loose = /^([0-9a-f]{2})\/([0-9a-f]{38}|[0-9a-f]{62})$/.exec(inner);
      if (loose) {
        looseBytes += e.after.size;
        if (looseBytes > LOOSE_VERIFY_MAX_BYTES) {
          this.hold(`writes more than ${LOOSE_VERIFY_MAX_BYTES / 1024 / 1024} MiB of git objects in ${repo.objects}: too much to verify here`);
          return;
        }
        const raw = await this.upperBytes(e);
        const id = raw ? looseObjectId(raw, loose[2].length === 62 ? "sha256" : "sha1") : null;
        if (id !== loose[1] + loose[2]) this.hold(`writes the git object ${e.path} with content that does not match its id (git would give that id other content)`);
        continue;
      }
      if (/^pack\/pack-[0-9a-f]+\.idx$/.test(inner)) verify.push({ what: e.path, args: ["verify-pack", path.join(this.upper, e.path)] });
      else if (inner === "info/commit-graph" || inner.startsWith("info/commit-graphs/")) verify.push({ what: `${repo.objects}/info/commit-graph`, args: ["commit-graph", "verify", "--object-dir", path.join(this.upper, repo.objects)] });
      else if (inner === "pack/multi-pack-index") verify.push({ what: e.path, args: ["multi-pack-index", "verify", "--object-dir", path.join(this.upper, repo.objects)] });
      else if (/^pack\/pack-[0-9a-f]+\.pack$/.test(inner)) {
        // Verified with its index; a pack whose index did not change is a rewrite of bytes git never rewrites.
        const idx = e.path.replace(/\.pack$/, ".idx");
        if (!this.byPath.has(idx)) this.hold(`rewrites the git pack ${e.path} without its index (git never rewrites a pack)`);
      }
    }
    const seen = new Set<string>();
    for (const v of verify) {
      if (seen.has(v.what)) continue;
      seen.add(v.what);
      if ((await this.git(repo, v.args, "")) === null) this.hold(`writes ${v.what}, which git's own check rejects (it could give known object ids other content)`);
    }
  }

  /** Compares one repository's index before and after. */
  async index(repo: RepoChanges): Promise<void> {
    const e = repo.index!;
    const label = `${repo.dir}/index`;
    const beforeBuf = e.before?.type === "file" ? await this.lowerBytes(e.path) : null;
    const afterBuf = await this.upperBytes(e);
    if (!afterBuf) {
      if (beforeBuf) this.out.lines.push(`deletes git's index ${label}`);
      return;
    }
    const after = parseIndex(afterBuf);
    if ("error" in after) {
      this.out.lines.push(`rewrites ${label} in a form the gateway cannot read (${after.error})`);
      this.hold(`rewrites git's index ${label} in a form the gateway cannot review (${after.error}): what it stages is not shown`);
      return;
    }
    this.oidBytes = after.oidBytes;
    const before: ParsedIndex = beforeBuf ? parseIndex(beforeBuf) : { entries: new Map<string, IndexEntry>(), oidBytes: after.oidBytes, extensions: new Map() };
    const prior = "error" in before ? new Map<string, IndexEntry>() : before.entries;
    if ("error" in before) this.out.lines.push(`${label} could not be read before the command (${before.error}): every entry is treated as new`);
    let changed = false;
    const quiet: string[] = [];
    for (const [key, a] of after.entries) {
      const b = prior.get(key);
      const ws = this.wsPath(repo.worktree, a.path);
      const same = b !== undefined && b.oid === a.oid && b.mode === a.mode && b.intentToAdd === a.intentToAdd && b.skipWorktree === a.skipWorktree && b.assumeUnchanged === a.assumeUnchanged;
      const bad = same ? null : badGitPath(a.path, a.mode);
      if (bad !== null) {
        // Judged before anything else: the working tree cannot be compared at a path git would write elsewhere.
        changed = true;
        const shown = JSON.stringify(ws);
        this.out.lines.push(`stages ${shown} in ${label}, a path git's own check refuses (${bad})`);
        this.hold(`stages ${shown} in git's index: ${bad}; git never writes such an entry, yet a later git checkout -- . writes it wherever the path leads`);
        this.diffs.push({ repo, title: `git index (${label}): ${shown}, staged`, path: ws, before: null, after: a.mode === 160000 ? null : a.oid });
        continue;
      }
      if (a.skipWorktree !== (b?.skipWorktree ?? false) || a.assumeUnchanged !== (b?.assumeUnchanged ?? false)) {
        for (const [flag, on, was, words] of [
          ["skip-worktree", a.skipWorktree, b?.skipWorktree ?? false, "git will not show its changes, nor let checkout touch it"],
          ["assume-unchanged", a.assumeUnchanged, b?.assumeUnchanged ?? false, "git will not show its changes"],
        ] as const) {
          if (on === was) continue;
          changed = true;
          if (on) {
            this.out.lines.push(`marks ${ws} ${flag} (${words})`);
            this.hold(`marks ${ws} ${flag} in git's index (${words})`);
          } else this.out.lines.push(`clears ${flag} on ${ws}`);
        }
      }
      // An intent-to-add entry still names a blob, and `git checkout -- f` writes it; clearing the
      // flag stages that blob. So a flag change is compared with the working tree like new content,
      // and only the empty blob `git add -N` records stages nothing.
      const itaChanged = a.intentToAdd !== (b?.intentToAdd ?? false);
      if (itaChanged) changed = true;
      if (b && b.oid === a.oid && b.mode === a.mode && !itaChanged) continue;
      changed = true;
      if (a.mode === 160000) {
        this.out.lines.push(`points submodule ${ws} at commit ${a.oid.slice(0, 12)} in the index`);
        continue;
      }
      if (a.intentToAdd && a.oid === blobId(Buffer.alloc(0), this.oidBytes)) {
        quiet.push(`marks ${ws} intent-to-add`);
        continue;
      }
      const wt = repo.worktree === null ? null : await this.worktreeBlob(ws);
      const sameAsWorktree = wt !== null && wt.oid === a.oid && wt.link === (a.mode === 120000);
      const stageWords = (a.stage === 0 ? "" : ` as conflict stage ${a.stage}`) + (a.intentToAdd ? " (marked intent-to-add)" : "");
      if (sameAsWorktree) {
        quiet.push(`stages ${ws}`);
        continue;
      }
      const what = repo.worktree === null ? "content the gateway cannot compare with its work tree" : wt === null ? "content for a file the working tree does not have" : "content different from the working tree";
      this.out.lines.push(`stages ${ws}${stageWords} with ${what} (shown below)`);
      if (this.risky(repo.worktree, path.posix.normalize(a.path))) {
        this.hold(`stages ${ws}${stageWords} in git's index with ${what}: a later git checkout, stash or reset writes it (runs later or sensitive)`);
      }
      this.diffs.push({ repo, title: `git index (${label}): ${ws}${stageWords}, working tree → staged`, path: ws, before: wt?.bytes ?? null, after: a.oid });
    }
    for (const [key, b] of prior) {
      if (after.entries.has(key)) continue;
      changed = true;
      quiet.push(`unstages ${this.wsPath(repo.worktree, b.path)}${b.stage ? ` (stage ${b.stage})` : ""}`);
    }
    if (this.extensions(repo, label, "error" in before ? null : before.extensions, after)) changed = true;
    if (!changed) {
      this.out.statOnly.add(e.path);
      return;
    }
    if (quiet.length > 0) this.out.lines.push(summarise(quiet, label));
  }

  /**
   * Checks the index extensions that carry content: the cache tree (TREE), whose tree ids a later
   * `git commit` reuses without looking at the entries, must match the entries; resolve-undo
   * records (REUC), which `git checkout -m` turns back into conflict stages, must not name a risky
   * path anew. @returns true when something beyond stat data changed.
   */
  private extensions(repo: RepoChanges, label: string, before: Map<string, Buffer> | null, after: { entries: Map<string, IndexEntry>; oidBytes: 20 | 32; extensions: Map<string, Buffer> }): boolean {
    let changed = false;
    const treeAfter = after.extensions.get("TREE");
    const treeBefore = before?.get("TREE");
    if (treeAfter && !(treeBefore && treeBefore.equals(treeAfter))) {
      const nodes = parseCacheTree(treeAfter, after.oidBytes);
      const prior = new Map((treeBefore ? (parseCacheTree(treeBefore, after.oidBytes) ?? []) : []).map((n) => [n.path, n.oid]));
      if (!nodes) {
        changed = true;
        this.out.lines.push(`writes a cache tree in ${label} the gateway cannot read`);
        this.hold(`writes a cache tree in git's index ${label} the gateway cannot read (a later git commit commits the trees it names)`);
      } else {
        const unchanged = new Map(nodes.filter((n) => n.oid !== null && prior.get(n.path) === n.oid).map((n) => [n.path, n.oid!]));
        const treeOf = treeIdsOf(after.entries.values(), after.oidBytes, unchanged);
        const bad = nodes.filter((n) => n.oid !== null && prior.get(n.path) !== n.oid && treeOf(n.path) !== n.oid).map((n) => this.wsPath(repo.worktree, n.path) || "the root");
        if (bad.length > 0) {
          changed = true;
          const where = `${bad.slice(0, 5).join(", ")}${bad.length > 5 ? ` and ${bad.length - 5} more` : ""}`;
          this.out.lines.push(`caches tree ids in ${label} that do not match its entries (${where})`);
          this.hold(`caches tree ids in git's index ${label} that do not match its entries (${where}): a later git commit would commit those trees, unseen`);
        }
      }
    }
    const reucAfter = after.extensions.get("REUC");
    const reucBefore = before?.get("REUC");
    if (reucAfter && !(reucBefore && reucBefore.equals(reucAfter))) {
      const list = parseResolveUndo(reucAfter, after.oidBytes);
      const prior = new Set((reucBefore ? (parseResolveUndo(reucBefore, after.oidBytes) ?? []) : []).map((r) => `${r.path}\0${r.oids.join(",")}`));
      if (!list) {
        changed = true;
        this.hold(`writes resolve-undo records in git's index ${label} the gateway cannot read (git checkout -m recreates conflicts from them)`);
      } else {
        for (const r of list) {
          if (prior.has(`${r.path}\0${r.oids.join(",")}`)) continue;
          changed = true;
          const ws = this.wsPath(repo.worktree, r.path);
          this.out.lines.push(`records resolve-undo content for ${ws} in ${label}`);
          const bad = badGitPath(r.path);
          if (bad) this.hold(`records resolve-undo content for ${JSON.stringify(ws)} in git's index: ${bad} (git checkout -m writes it wherever the path leads)`);
          else if (this.risky(repo.worktree, r.path)) this.hold(`records resolve-undo content for ${ws} in git's index (git checkout -m writes it back)`);
        }
      }
    }
    return changed;
  }

  /** Compares one repository's refs and reflogs before and after, and reads the commits they add. */
  async refs(repo: RepoChanges): Promise<void> {
    const moves: Array<{ ref: string; before: RefValue; after: RefValue }> = [];
    const tips = new Map<string, string>(); // oid → what names it
    const notTips = new Set<string>();
    for (const e of repo.refs) {
      const inner = e.path.slice(repo.dir.length + 1);
      const beforeText = e.before?.type === "file" ? ((await this.lowerBytes(e.path))?.toString("latin1") ?? "") : null;
      const afterBytes = await this.upperBytes(e);
      const afterText = afterBytes ? afterBytes.toString("latin1") : null;
      if (inner === "packed-refs") {
        const b = parsePackedRefs(beforeText ?? "");
        const a = parsePackedRefs(afterText ?? "");
        for (const oid of b.values()) notTips.add(oid);
        for (const name of new Set([...b.keys(), ...a.keys()])) {
          if (b.get(name) === a.get(name)) continue;
          // A ref moved from packed-refs to a loose file (or back) is the same ref: judged by its loose file.
          const loose = this.byPath.get(`${repo.dir}/${name}`);
          const looseNow = loose ? (loose.after?.type === "file" ? parseRefValue(((await this.upperBytes(loose)) ?? Buffer.alloc(0)).toString("latin1")) : null) : await this.currentLoose(repo.dir, name);
          const afterVal = a.has(name) ? { oid: a.get(name)! } : looseNow;
          const beforeVal = b.has(name) ? { oid: b.get(name)! } : null;
          if (!a.has(name) && looseNow && beforeVal && looseNow.oid === beforeVal.oid) continue;
          if (!b.has(name) && afterVal && loose === undefined && looseNow && looseNow.oid === afterVal.oid) continue;
          moves.push({ ref: name, before: beforeVal, after: a.has(name) ? afterVal : looseNow });
        }
        continue;
      }
      const before = beforeText === null ? null : parseRefValue(beforeText);
      let after = afterText === null ? null : parseRefValue(afterText);
      // A loose ref deleted while packed-refs keeps it (git pack-refs) has not moved.
      if (after === null && inner.startsWith("refs/")) after = await this.packedValue(repo.dir, inner);
      for (const oid of allOids(beforeText ?? "")) notTips.add(oid);
      if (sameRef(before, after)) continue;
      moves.push({ ref: inner, before, after });
      for (const oid of allOids(afterText ?? "")) if (!notTips.has(oid)) tips.set(oid, inner);
    }
    for (const m of moves) {
      if (m.after?.oid?.length === 64) this.oidBytes = 32;
      if (m.after?.oid && !tips.has(m.after.oid)) tips.set(m.after.oid, m.ref);
      if (m.before?.oid) notTips.add(m.before.oid);
    }
    for (const e of repo.logs) {
      const beforeText = e.before?.type === "file" ? ((await this.lowerBytes(e.path))?.toString("latin1") ?? "") : "";
      const afterText = ((await this.upperBytes(e)) ?? Buffer.alloc(0)).toString("latin1");
      const old = new Set(allOids(beforeText));
      for (const oid of old) notTips.add(oid);
      const ref = e.path.slice(repo.dir.length + "/logs/".length);
      for (const oid of allOids(afterText)) if (!old.has(oid) && !tips.has(oid)) tips.set(oid, `a reflog entry of ${ref}`);
    }
    for (const m of moves) this.out.lines.push(describeMove(m.ref, m.before, m.after));
    for (const m of moves) {
      if (m.ref.startsWith("refs/replace/") && m.after) {
        this.hold(`creates the replace ref ${m.ref} (git then shows and checks out ${m.after.oid?.slice(0, 12) ?? m.after.symref} in place of ${m.ref.slice("refs/replace/".length, "refs/replace/".length + 12)} everywhere)`);
      }
    }
    for (const oid of ZERO_OIDS) tips.delete(oid);
    if (tips.size === 0) return;
    for (const oid of await this.beforeRefOids(repo.dir)) notTips.add(oid);
    const commits = await this.newCommits(repo, [...tips.keys()], [...notTips].filter((o) => !tips.has(o)));
    // What each new ref names once tags are peeled, and the new commits' messages: one git run.
    const tipList = [...tips.keys()];
    const read = commits === null ? null : await this.batch(repo, [...tipList.map((o) => ({ info: `${o}^{}` })), ...commits.slice(0, 50).map((c) => ({ contents: c.oid }))]);
    if (commits === null || read === null) {
      this.hold(`moves git refs in ${repo.dir} to history the gateway could not read: what a later checkout or reset writes is not shown`);
      return;
    }
    // A ref may name a tree or a blob (directly or through a tag): `git checkout REF -- path` writes
    // from it. Only commits are read as history; anything else new is held.
    tipList.forEach((oid, i) => {
      const type = read[i]?.type ?? "missing";
      if (type === "commit") return;
      const name = tips.get(oid)!;
      this.out.lines.push(`${name} names a ${type} (${oid.slice(0, 12)}), not a commit`);
      // AUTO_MERGE names the tree of a conflicted merge (`git diff AUTO_MERGE` shows it); no command writes from it unasked.
      if (type !== "missing" && !(name === "AUTO_MERGE" && type === "tree")) this.hold(`points ${name} at a ${type}, not a commit (git checkout ${name} -- <path> writes from it; not shown)`);
    });
    if (commits.length > MAX_COMMITS) {
      commits.length = MAX_COMMITS;
      this.hold(`adds more than ${MAX_COMMITS} commits to ${repo.dir}: more history than the gateway reviews (the first ${MAX_COMMITS} are shown)`);
    }
    const subjects = new Map<string, string>();
    commits.slice(0, 50).forEach((c, i) => {
      const body = read[tipList.length + i]?.content;
      if (!body) return;
      const text = body.toString("utf8");
      const at = text.indexOf("\n\n");
      subjects.set(c.oid, at === -1 ? "" : (text.slice(at + 2).split("\n")[0] ?? "").replace(/[\u0000-\u001f\u007f]/g, " "));
    });
    for (const c of commits) {
      const subject = subjects.get(c.oid) ?? "";
      for (const ch of c.changes) {
        const ws = this.wsPath(repo.worktree, ch.path);
        if (ch.newOid === null) continue;
        const wt = repo.worktree === null ? null : await this.worktreeBlob(ws);
        if (wt && wt.oid === ch.newOid && wt.link === (ch.newMode === 120000)) continue;
        if (ch.newMode === 160000) continue;
        const what = repo.worktree === null ? "content the gateway cannot compare with its work tree" : "content different from the working tree";
        this.out.lines.push(`commit ${c.oid.slice(0, 12)} (${JSON.stringify(subject.slice(0, 80))}) holds ${ws} with ${what} (shown below)`);
        const bad = badGitPath(ch.path);
        if (bad) this.hold(`commits ${JSON.stringify(ws)} (commit ${c.oid.slice(0, 12)}): ${bad}; git refuses such a tree path on checkout, a crafted tree is not ordinary work`);
        else if (this.risky(repo.worktree, ch.path)) {
          this.hold(`commits ${ws} (commit ${c.oid.slice(0, 12)} ${JSON.stringify(subject.slice(0, 60))}) with ${what}: a later git checkout, reset or merge writes it (runs later or sensitive)`);
        }
        this.diffs.push({ repo, title: `git commit ${c.oid.slice(0, 12)} ${JSON.stringify(subject.slice(0, 80))}: ${ws}, working tree → committed`, path: ws, before: wt?.bytes ?? null, after: ch.newOid });
      }
    }
    for (const [oid, name] of tips) {
      const list = commits.filter((c) => c.oid === oid);
      if (list.length === 0 && !moves.some((m) => m.after?.oid === oid)) this.out.lines.push(`${name} names ${oid.slice(0, 12)} (no new commits)`);
    }
    if (commits.length > 0) {
      const n = commits.length;
      const head = commits.slice(0, 3).map((c) => `${c.oid.slice(0, 12)} ${JSON.stringify((subjects.get(c.oid) ?? "").slice(0, 60))} (changes ${c.changes.slice(0, 4).map((ch) => this.wsPath(repo.worktree, ch.path)).join(", ") || "nothing"}${c.changes.length > 4 ? ` and ${c.changes.length - 4} more` : ""})`);
      this.out.lines.push(`adds ${n} commit${n === 1 ? "" : "s"} to ${repo.dir}: ${head.join("; ")}${n > 3 ? ` and ${n - 3} more` : ""}`);
    }
  }

  /** The value of a loose ref file in the workspace as the change set leaves it, when it did not change. */
  private async currentLoose(dir: string, ref: string): Promise<RefValue> {
    const b = await this.lowerBytes(`${dir}/${ref}`);
    return b ? parseRefValue(b.toString("latin1")) : null;
  }

  /** A ref's value in packed-refs as the change set leaves it. */
  private async packedValue(dir: string, ref: string): Promise<RefValue> {
    const e = this.byPath.get(`${dir}/packed-refs`);
    const text = e ? ((await this.upperBytes(e)) ?? Buffer.alloc(0)).toString("latin1") : ((await this.lowerBytes(`${dir}/packed-refs`)) ?? Buffer.alloc(0)).toString("latin1");
    const oid = parsePackedRefs(text).get(ref);
    return oid ? { oid } : null;
  }

  /** Every object id the repository's refs named before the command (loose refs, packed-refs, pseudo-refs). */
  private async beforeRefOids(dir: string): Promise<Set<string>> {
    const out = new Set<string>();
    for (const name of ["HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "packed-refs"]) {
      const b = await this.lowerBytes(`${dir}/${name}`);
      if (b) for (const oid of allOids(b.toString("latin1"))) out.add(oid);
    }
    // Worktrees and submodule repositories keep their objects with the main repository; their refs are under it too.
    const refsRoot = `${dir.includes("/worktrees/") ? dir.slice(0, dir.indexOf("/worktrees/")) : dir}/refs`;
    let seen = 0;
    const walk = async (d: string): Promise<void> => {
      const names = quietly(() => this.lower.readdir(d)) ?? [];
      for (const raw of names) {
        if (++seen > MAX_LOOSE_REFS) return;
        const rel = `${d}/${raw.toString("utf8")}`;
        const st = quietly(() => this.lower.lstat(rel));
        if (st?.isDirectory()) await walk(rel);
        else if (st?.isFile()) {
          const b = await this.lowerBytes(rel);
          if (b) for (const oid of allOids(b.toString("latin1"))) out.add(oid);
        }
      }
    };
    await walk(refsRoot);
    return out;
  }

  /** The objects git reads for this repository: the command's new ones first, then the workspace's. */
  private objectDirs(repo: RepoChanges): { upper: string; lower: string | null } | null {
    // A command that plants alternates would make git read objects from wherever they name; that
    // change set is held for the alternates anyway (lib/effects/git-danger.ts), and not read here.
    for (const p of this.byPath.keys()) if (p.startsWith(`${repo.objects}/info/`) && /alternates$/.test(p)) return null;
    const upper = path.join(this.upper, repo.objects);
    // The workspace's objects only when the directory is a real one reached without links: git
    // would read (and the diffs show) the objects of whatever a linked directory names.
    const real = quietly(() => this.lower.lstat(repo.objects))?.isDirectory() === true;
    return { upper, lower: real ? path.join(this.root, repo.objects) : null };
  }

  /**
   * Runs git on a private empty repository that borrows this repository's objects (the command's
   * new objects and the workspace's), so nothing of the workspace's configuration, hooks or
   * attributes is read. @returns stdout, or null when git failed.
   */
  private async git(repo: RepoChanges, args: string[], stdin: string): Promise<Buffer | null> {
    const objects = this.objectDirs(repo);
    if (!objects) return null;
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "agent-reach-gitstate-"));
    try {
      await fs.mkdir(path.join(tmp, "refs"), { recursive: true });
      await fs.mkdir(path.join(tmp, "objects"), { recursive: true });
      await fs.writeFile(path.join(tmp, "HEAD"), "ref: refs/heads/none\n");
      await fs.writeFile(
        path.join(tmp, "config"),
        this.oidBytes === 32 ? "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n" : "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
      );
      const alternates: string[] = [];
      for (const d of [objects.upper, objects.lower]) if (d !== null && (await fs.stat(d).catch(() => null))?.isDirectory()) alternates.push(d);
      const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: "/nonexistent",
        LC_ALL: "C",
        GIT_DIR: tmp,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_CEILING_DIRECTORIES: "/",
        GIT_NO_REPLACE_OBJECTS: "1",
        GIT_TERMINAL_PROMPT: "0",
        GIT_ALTERNATE_OBJECT_DIRECTORIES: alternates.join(":"),
      };
      return await new Promise<Buffer | null>((resolve) => {
        const child = execFile(
          "git",
          ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat", "-c", "log.showSignature=false", ...args],
          { cwd: tmp, env: env as unknown as NodeJS.ProcessEnv, encoding: "buffer", timeout: 15_000, maxBuffer: 64 * 1024 * 1024 },
          (err, stdout) => resolve(err ? null : stdout),
        );
        // A command that reads no input may close its end first: that is not an error here.
        child.stdin?.on("error", () => undefined);
        child.stdin?.end(stdin);
      });
    } finally {
      await fs.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The commits reachable from `tips` and not from `not`, with the paths each changes (first parent). */
  private async newCommits(repo: RepoChanges, tips: string[], not: string[]): Promise<CommitChanges[] | null> {
    const stdin = [...tips, ...not.map((o) => `^${o}`)].join("\n") + "\n";
    const out = await this.git(
      repo,
      ["log", "--stdin", "--ignore-missing", "--no-renames", "--raw", "--no-abbrev", "-z", "--diff-merges=first-parent", `--max-count=${MAX_COMMITS + 1}`, "--format=%x01%H"],
      stdin,
    );
    if (out === null) return null;
    return parseLogRaw(out);
  }

  /**
   * Asks git about objects in one run (`git cat-file --batch-command`): `info` gives the type,
   * `contents` the type and bytes. Names are object ids this module parsed (hex, `^{}` to peel).
   * @returns one answer per request in order (null: missing), or null when git failed
   */
  private async batch(repo: RepoChanges, requests: Array<{ info: string } | { contents: string }>): Promise<Array<{ type: string; content?: Buffer } | null> | null> {
    if (requests.length === 0) return [];
    const stdin = requests.map((r) => ("info" in r ? `info ${r.info}` : `contents ${r.contents}`)).join("\n") + "\n";
    const buf = await this.git(repo, ["cat-file", "--batch-command"], stdin);
    if (!buf) return null;
    const out: Array<{ type: string; content?: Buffer } | null> = [];
    let p = 0;
    for (const r of requests) {
      const nl = buf.indexOf(10, p);
      if (nl < 0) return null;
      const header = buf.toString("latin1", p, nl).split(" ");
      p = nl + 1;
      if (header[header.length - 1] === "missing") {
        out.push(null);
        continue;
      }
      const [, type, sizeText] = header;
      if ("contents" in r) {
        const size = Number(sizeText);
        out.push({ type, content: buf.subarray(p, p + size) });
        p += size + 1;
      } else out.push({ type });
    }
    return out;
  }

  /** Reads objects by id (`git cat-file --batch`); missing ones are left out. */
  private async catFile(repo: RepoChanges, oids: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    if (oids.length === 0) return out;
    const buf = await this.git(repo, ["cat-file", "--batch"], oids.join("\n") + "\n");
    if (!buf) return out;
    let p = 0;
    while (p < buf.length) {
      const nl = buf.indexOf(10, p);
      if (nl < 0) break;
      const header = buf.toString("latin1", p, nl).split(" ");
      p = nl + 1;
      if (header[1] === "missing" || header.length < 3) continue;
      const size = Number(header[2]);
      out.set(header[0], buf.subarray(p, p + size));
      p += size + 1;
    }
    return out;
  }

  /** Reads the blobs of the pending diffs and appends them to the review's diff. */
  async renderDiffs(): Promise<void> {
    if (this.diffs.length === 0) return;
    const shown = this.diffs.slice(0, MAX_DIFFS);
    const parts: string[] = [];
    // Blobs are read from each diff's own repository, one git run per repository.
    const blobs = new Map<string, Buffer>();
    for (const repo of new Set(shown.map((d) => d.repo))) {
      const wanted = shown.filter((d) => d.repo === repo).flatMap((d) => [d.before, d.after]).filter((x): x is string => typeof x === "string" && !ZERO.test(x));
      for (const [oid, b] of await this.catFile(repo, wanted)) blobs.set(oid, b);
    }
    for (const d of shown) {
      const before = typeof d.before === "string" ? (blobs.get(d.before) ?? null) : d.before;
      const after = typeof d.after === "string" ? (blobs.get(d.after) ?? null) : d.after;
      if (after === null) {
        parts.push(`# ${d.title}\ndiff --git a/${d.path} b/${d.path}\nBinary files a/${d.path} and b/${d.path} differ\n`);
        continue;
      }
      if (after.length > DIFF_BLOB_MAX_BYTES || (before && before.length > DIFF_BLOB_MAX_BYTES)) {
        parts.push(`# ${d.title}\ndiff --git a/${d.path} b/${d.path}\nBinary files a/${d.path} and b/${d.path} differ\n`);
        continue;
      }
      const fd = diffFileBytes(d.path, before, after);
      if (fd.diff) parts.push(`# ${d.title}\n${fd.diff}`);
    }
    if (this.diffs.length > MAX_DIFFS) parts.push(`# git: ${this.diffs.length - MAX_DIFFS} more staged or committed files not shown\n`);
    this.out.diff = parts.join("");
  }
}

/** A ref's value: an object id, or the ref a symbolic ref names. */
type RefValue = { oid?: string; symref?: string } | null;

const ZERO_OIDS = ["0".repeat(40), "0".repeat(64)];

function parseRefValue(text: string): RefValue {
  const t = text.trim();
  if (t.startsWith("ref:")) return { symref: t.slice(4).trim() };
  const m = /^([0-9a-f]{64}|[0-9a-f]{40})/.exec(t);
  return m ? { oid: m[1] } : t === "" ? null : { symref: `(unreadable: ${JSON.stringify(t.slice(0, 40))})` };
}

function sameRef(a: RefValue, b: RefValue): boolean {
  return (a?.oid ?? null) === (b?.oid ?? null) && (a?.symref ?? null) === (b?.symref ?? null);
}

function allOids(text: string): string[] {
  return [...text.matchAll(/(?<![0-9a-f])([0-9a-f]{64}|[0-9a-f]{40})(?![0-9a-f])/g)].map((m) => m[1]).filter((o) => !ZERO.test(o));
}

/** packed-refs: `<oid> <refname>` lines (peeled `^<oid>` lines and the header skipped). */
export function parsePackedRefs(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) (\S.*)$/.exec(line.replace(/\r$/, ""));
    if (m) out.set(m[2], m[1]);
  }
  return out;
}

function short(v: RefValue): string {
  return v?.oid ? v.oid.slice(0, 12) : v?.symref ?? "nothing";
}

function describeMove(ref: string, before: RefValue, after: RefValue): string {
  if (after?.symref !== undefined || before?.symref !== undefined) return `points ${ref} at ${short(after)} (was ${short(before)})`;
  if (!before) return `creates ${ref} at ${short(after)}`;
  if (!after) return `deletes ${ref} (was ${short(before)})`;
  return `moves ${ref} from ${short(before)} to ${short(after)}`;
}

function summarise(items: string[], label: string): string {
  const verbs = new Map<string, string[]>();
  for (const it of items) {
    const sp = it.indexOf(" ");
    const verb = it.slice(0, sp);
    verbs.set(verb, [...(verbs.get(verb) ?? []), it.slice(sp + 1)]);
  }
  const parts = [...verbs].map(([verb, list]) => `${verb} ${list.slice(0, 5).join(", ")}${list.length > 5 ? ` and ${list.length - 5} more` : ""}`);
  return `${parts.join("; ")} (${label}; as in the working tree)`;
}

/** One commit of `git log --raw -z` and the paths it changes against its first parent. */
export interface CommitChanges {
  oid: string;
  changes: Array<{ path: string; newOid: string | null; newMode: number }>;
}

/**
 * Parses `git log --raw --no-abbrev -z --no-renames --format=%x01%H`: a `\x01<oid>` token per
 * commit, then pairs of `:<old mode> <new mode> <old oid> <new oid> <status>` and path tokens.
 * Tokens alternate strictly, so a path holding `\x01` cannot pass for a commit.
 */
export function parseLogRaw(out: Buffer): CommitChanges[] {
  const tokens = out.toString("utf8").split("\0");
  const commits: CommitChanges[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i].replace(/^\n/, "");
    const head = /^\x01([0-9a-f]{40}|[0-9a-f]{64})$/.exec(t);
    if (head) {
      commits.push({ oid: head[1], changes: [] });
      continue;
    }
    const meta = /^:(\d+) (\d+) ([0-9a-f]+) ([0-9a-f]+) (\S+)$/.exec(t);
    if (meta && commits.length > 0 && i + 1 < tokens.length) {
      const p = tokens[++i];
      const newOid = ZERO.test(meta[4]) ? null : meta[4];
      commits[commits.length - 1].changes.push({ path: p, newOid, newMode: Number(meta[2]) });
    }
  }
  return commits;
}

/** One node of the index's cache-tree extension (TREE): a directory and its cached tree id (null: invalidated). */
export interface CacheTreeNode {
  path: string;
  oid: string | null;
}

/**
 * Parses the cache-tree extension (gitformat-index(5) "Cache tree"): for each directory, its
 * name, the number of index entries it covers (-1: invalid), its number of subtrees and, when
 * valid, the tree id `git commit` reuses without looking at the entries. @returns null when malformed.
 */
export function parseCacheTree(buf: Buffer, oidBytes: 20 | 32): CacheTreeNode[] | null {
  const out: CacheTreeNode[] = [];
  let p = 0;
  const node = (parent: string | null, depth: number): boolean => {
    if (depth > 4096) return false;
    const nul = buf.indexOf(0, p);
    if (nul < 0) return false;
    const name = buf.toString("utf8", p, nul);
    p = nul + 1;
    const nl = buf.indexOf(10, p);
    if (nl < 0) return false;
    const [countText, subText] = buf.toString("latin1", p, nl).split(" ");
    p = nl + 1;
    const count = Number(countText);
    const subtrees = Number(subText);
    if (!Number.isInteger(count) || !Number.isInteger(subtrees) || subtrees < 0) return false;
    let oid: string | null = null;
    if (count >= 0) {
      if (p + oidBytes > buf.length) return false;
      oid = buf.toString("hex", p, p + oidBytes);
      p += oidBytes;
    }
    const here = parent === null ? "" : parent === "" ? name : `${parent}/${name}`;
    out.push({ path: here, oid });
    for (let i = 0; i < subtrees; i++) if (!node(here, depth + 1)) return false;
    return true;
  };
  if (buf.length === 0) return out;
  if (!node(null, 0) || p !== buf.length) return null;
  return out;
}

/**
 * The tree id git would write for each directory of the index's stage-0 entries (intent-to-add
 * entries left out, as git leaves them out of trees), computed as `git write-tree` does.
 * @param known tree ids to take as they are for directories (a cache-tree node the command did not
 *   change: at worst it names a tree that was already in the repository)
 * @returns a function from a directory path ("" for the root) to its tree id, or null when the
 *   directory has no entries
 */
export function treeIdsOf(entries: Iterable<IndexEntry>, oidBytes: 20 | 32, known: ReadonlyMap<string, string> = new Map()): (dir: string) => string | null {
  const dirs = new Map<string, Array<{ name: string; mode: string; oid: string | null }>>();
  const ensure = (dir: string): void => {
    if (dirs.has(dir)) return;
    dirs.set(dir, []);
    if (dir === "") return;
    const at = dir.lastIndexOf("/");
    const parent = at === -1 ? "" : dir.slice(0, at);
    ensure(parent);
    dirs.get(parent)!.push({ name: dir.slice(at + 1), mode: "40000", oid: null });
  };
  for (const e of entries) {
    if (e.stage !== 0 || e.intentToAdd) continue;
    // A sparse index keeps a directory outside the sparse cone as one entry: its tree, by id.
    const sparseDir = e.path.endsWith("/") && e.mode === 40000;
    const p = sparseDir ? e.path.slice(0, -1) : e.path;
    const at = p.lastIndexOf("/");
    const dir = at === -1 ? "" : p.slice(0, at);
    ensure(dir);
    dirs.get(dir)!.push({ name: p.slice(at + 1), mode: sparseDir ? "40000" : String(e.mode), oid: e.oid });
  }
  const memo = new Map<string, string>();
  const hash = oidBytes === 32 ? "sha256" : "sha1";
  const treeOf = (dir: string): string | null => {
    const list = dirs.get(dir);
    if (!list) return null;
    const done = memo.get(dir) ?? known.get(dir);
    if (done) return done;
    // git sorts tree entries by name bytes, a directory's name compared as if it ended in "/".
    const sorted = list.map((x) => ({ x, key: Buffer.from(x.mode === "40000" ? `${x.name}/` : x.name) })).sort((a, b) => Buffer.compare(a.key, b.key)).map((k) => k.x);
    const parts: Buffer[] = [];
    for (const x of sorted) {
      const oid = x.oid ?? treeOf(dir === "" ? x.name : `${dir}/${x.name}`);
      if (!oid) continue;
      parts.push(Buffer.from(`${x.mode} ${x.name}\0`), Buffer.from(oid, "hex"));
    }
    const body = Buffer.concat(parts);
    const id = crypto.createHash(hash).update(`tree ${body.length}\0`).update(body).digest("hex");
    memo.set(dir, id);
    return id;
  };
  return treeOf;
}

/** Paths of the resolve-undo extension (REUC): conflicts `git checkout -m` can recreate, with their blob ids. */
export function parseResolveUndo(buf: Buffer, oidBytes: 20 | 32): Array<{ path: string; oids: string[] }> | null {
  const out: Array<{ path: string; oids: string[] }> = [];
  let p = 0;
  while (p < buf.length) {
    const nul = buf.indexOf(0, p);
    if (nul < 0) return null;
    const name = buf.toString("utf8", p, nul);
    p = nul + 1;
    const modes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const z = buf.indexOf(0, p);
      if (z < 0) return null;
      modes.push(Number.parseInt(buf.toString("latin1", p, z), 8));
      p = z + 1;
    }
    const oids: string[] = [];
    for (const m of modes) {
      if (!m) continue;
      if (p + oidBytes > buf.length) return null;
      oids.push(buf.toString("hex", p, p + oidBytes));
      p += oidBytes;
    }
    out.push({ path: name, oids });
  }
  return out;
}

/** The id of a loose object file's content (inflated, header included), or null when it does not inflate. */
export function looseObjectId(raw: Buffer, algorithm: "sha1" | "sha256"): string | null {
  try {
    const body = zlib.inflateSync(raw, { maxOutputLength: 256 * 1024 * 1024 });
    const nul = body.indexOf(0);
    const header = nul > 0 ? body.toString("latin1", 0, nul) : "";
    const m = /^(blob|tree|commit|tag) (\d+)$/.exec(header);
    if (!m || Number(m[2]) !== body.length - nul - 1) return null;
    return crypto.createHash(algorithm).update(body).digest("hex");
  } catch {
    return null;
  }
}

/** `fn()`, or null when it throws (a path that vanished or changed reads as nothing). */
function quietly<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}
