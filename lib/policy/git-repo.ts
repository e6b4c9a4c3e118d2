import fs from "node:fs/promises";
import path from "node:path";
import { isInside } from "@/lib/workspace/fence";

/**
 * Which repository a git command will use, and whether the policy can trust it.
 *
 * git looks for a repository from its working directory upwards (git(1) "GIT_DIR",
 * gitrepository-layout(5)): a `.git` directory or `gitdir:` file, or a directory that is itself a
 * bare repository (HEAD, objects/, refs/). What it finds decides which configuration it reads,
 * and a repository's configuration can make even `git status` run programs (`core.fsmonitor`,
 * `core.hooksPath`, `diff.external`, filters, aliases, `core.pager`…). So:
 * - the workspace's own repository (a `.git` directory at the workspace root) is the operator's
 *   and trusted;
 * - any other repository inside the workspace (a nested clone, a planted bare repository, a
 *   `.git` file pointing elsewhere) is trusted only when its configuration holds nothing but keys
 *   known to be inert and no hooks are installed; otherwise git commands in it ask;
 * - a repository above the workspace is never used: the search must stop at the workspace root,
 *   which `GIT_CEILING_DIRECTORIES` (set by lib/exec/child-env.ts to the root's parent) makes git
 *   do. Without that ceiling (the hook door: another program runs the command) a command that
 *   finds no repository inside the workspace asks when there is one above it.
 */

/** The verdict on one directory git runs in. */
export type RepoTrust =
  | { trusted: true; repo: string | null }
  | { trusted: false; why: string };

/**
 * Configuration keys that never run a program, open a file outside the repository or change
 * which files git reads (lower case; `*` is any subsection). Anything else makes a nested
 * repository untrusted.
 */
const INERT_KEYS = new Set([
  "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates", "core.ignorecase",
  "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol", "core.safecrlf", "core.quotepath",
  "core.abbrev", "core.compression", "core.checkstat", "core.trustctime", "core.untrackedcache", "core.splitindex",
  "core.sparsecheckout", "core.sparsecheckoutcone", "core.commentchar", "core.whitespace", "core.preloadindex",
  "core.multipackindex", "core.commitgraph", "core.longpaths",
  "remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push", "remote.*.tagopt", "remote.*.prune", "remote.*.mirror",
  "remote.*.promisor", "remote.*.partialclonefilter",
  "branch.*.remote", "branch.*.merge", "branch.*.rebase", "branch.*.pushremote", "branch.*.description",
  "user.name", "user.email", "init.defaultbranch", "submodule.*.url", "submodule.*.active", "submodule.*.path",
  "submodule.*.branch", "extensions.objectformat", "extensions.worktreeconfig", "extensions.partialclone",
  "gc.auto", "pull.rebase", "pull.ff", "push.default", "fetch.prune", "column.ui", "diff.renames", "diff.algorithm",
  "diff.mnemonicprefix", "merge.conflictstyle", "rerere.enabled", "status.showuntrackedfiles", "log.date",
  "index.version", "lfs.repositoryformatversion",
]);

/** Reads `path` as text, or null when it does not exist or cannot be read. */
async function readText(p: string): Promise<string | null> {
  try {
    return await fs.readFile(p, "utf8");
  } catch {
    return null;
  }
}

async function isDir(p: string): Promise<boolean> {
  return (await fs.lstat(p).catch(() => null))?.isDirectory() ?? false;
}

/** A directory that git accepts as a repository by itself (bare layout): HEAD, objects/, refs/. */
async function looksLikeGitDir(dir: string): Promise<boolean> {
  const head = await fs.lstat(path.join(dir, "HEAD")).catch(() => null);
  return head !== null && !head.isDirectory() && (await isDir(path.join(dir, "objects"))) && (await isDir(path.join(dir, "refs")));
}

/**
 * The keys of a git configuration file that are not inert, or null when the file cannot be read
 * as plain `[section "sub"]` / `key = value` lines (then the repository is not trusted).
 */
export function riskyConfigKeys(text: string, workTreeCheck: (value: string) => boolean): string[] | null {
  const risky: string[] = [];
  let section: string | null = null;
  const lines = text.replace(/\\\r?\n/g, " ").split(/\r?\n/);
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (head) {
      const [, name, sub, rest] = head;
      const dot = name.indexOf(".");
      section = (dot === -1 ? name : name.slice(0, dot)).toLowerCase() + (sub !== undefined || dot !== -1 ? ".*" : "");
      if (rest.trim() && !/^[#;]/.test(rest.trim())) return null; // `[core] key = v` on one line: not read here
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv || section === null) return null;
    const key = `${section}.${kv[1].toLowerCase()}`;
    if (key === "core.worktree" && kv[2] !== undefined && workTreeCheck(kv[2].replace(/^"|"$/g, ""))) continue;
    if (!INERT_KEYS.has(key)) risky.push(key);
  }
  return risky;
}

/** Why a repository's own files make it untrusted, or null when they do not. */
async function untrustedBecause(gitDir: string, workTree: string, workspaceRoot: string): Promise<string | null> {
  const insideWs = (v: string) => isInside(workspaceRoot, path.resolve(gitDir, v));
  for (const name of ["config", "config.worktree"]) {
    const text = await readText(path.join(gitDir, name));
    if (text === null) continue;
    const risky = riskyConfigKeys(text, insideWs);
    if (risky === null) return `its ${name} cannot be read by the policy`;
    if (risky.length) return `its configuration sets ${[...new Set(risky)].slice(0, 4).join(", ")}`;
  }
  const commondir = await readText(path.join(gitDir, "commondir"));
  if (commondir !== null) {
    const common = path.resolve(gitDir, commondir.trim());
    if (!isInside(workspaceRoot, common)) return `its common directory ${common} is outside the workspace`;
    const why = await untrustedBecause(common, workTree, workspaceRoot);
    if (why) return why;
  }
  const hooks = await fs.readdir(path.join(gitDir, "hooks")).catch(() => [] as string[]);
  const installed = hooks.filter((h) => !h.endsWith(".sample"));
  if (installed.length) return `it has hooks installed (${installed.slice(0, 3).join(", ")})`;
  return null;
}

/**
 * Decides which repository git run in `dir` (absolute, physical, inside the workspace) would use
 * and whether it is trusted.
 * @param env the child environment (its `GIT_CEILING_DIRECTORIES` is honoured as git does)
 */
export async function repositoryTrust(dir: string, workspaceRoot: string, env: Record<string, string>): Promise<RepoTrust> {
  const rel = (p: string) => path.relative(workspaceRoot, p) || ".";
  const rootGitDir = path.join(workspaceRoot, ".git");
  for (let d = dir; ; d = path.dirname(d)) {
    if (!isInside(workspaceRoot, d)) break;
    // Inside the root's own .git directory git uses that directory: the workspace's repository.
    if (d === rootGitDir && (await isDir(d))) return { trusted: true, repo: workspaceRoot };
    const dotGit = path.join(d, ".git");
    const st = await fs.lstat(dotGit).catch(() => null);
    if (st) {
      if (d === workspaceRoot && st.isDirectory()) return { trusted: true, repo: workspaceRoot };
      let gitDir = dotGit;
      if (st.isSymbolicLink()) return { trusted: false, why: `git would use the repository at ${rel(dotGit)}, a symlink` };
      if (st.isFile()) {
        const text = (await readText(dotGit)) ?? "";
        const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
        if (!m) return { trusted: false, why: `git would read ${rel(dotGit)}, which the policy cannot follow` };
        gitDir = path.resolve(d, m[1]);
        if (!isInside(workspaceRoot, gitDir)) return { trusted: false, why: `${rel(dotGit)} points to a repository outside the workspace (${gitDir})` };
      }
      const why = await untrustedBecause(gitDir, d, workspaceRoot);
      if (why) return { trusted: false, why: `git would use the repository at ${rel(d)}, which is not the workspace's own and ${why}` };
      return { trusted: true, repo: d };
    }
    if (await looksLikeGitDir(d)) {
      return { trusted: false, why: `git would use ${rel(d)} as a bare repository planted in the workspace (its configuration can run programs)` };
    }
    if (d === workspaceRoot) break;
  }
  if (!ceilingStopsAt(workspaceRoot, env)) {
    // Nothing stops git at the root: any repository above the workspace would be used.
    for (let d = path.dirname(workspaceRoot); ; d = path.dirname(d)) {
      if ((await fs.lstat(path.join(d, ".git")).catch(() => null)) || (await looksLikeGitDir(d))) {
        return { trusted: false, why: `no repository in the workspace: git would use the one at ${d}, above the workspace root` };
      }
      if (d === path.dirname(d)) break;
    }
  }
  return { trusted: true, repo: null };
}

/**
 * True when `GIT_CEILING_DIRECTORIES` in `env` keeps git from going above `workspaceRoot`: it
 * must list the root's parent (git never moves up into a ceiling directory).
 */
export function ceilingStopsAt(workspaceRoot: string, env: Record<string, string>): boolean {
  const parent = path.dirname(workspaceRoot);
  if (parent === workspaceRoot) return true; // the root of the file system has nothing above it
  return (env.GIT_CEILING_DIRECTORIES ?? "").split(":").some((c) => c !== "" && path.resolve(c) === parent);
}
