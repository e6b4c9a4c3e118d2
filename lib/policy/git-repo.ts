import fs from "node:fs/promises";
import { execFile } from "node:child_process";
import path from "node:path";
import { diskView, hasGitDirShape } from "@/lib/policy/git-shape";
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
 *   and its `config` trusted, but only while nothing sends git elsewhere: a `commondir` file
 *   (git would read the configuration of that directory instead) or a `config.worktree` with keys
 *   that are not inert makes it untrusted too;
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

/**
 * A directory that git may take for a repository by itself (a bare layout), by the shape the
 * change sets and write_file are judged by too (lib/policy/git-shape.ts): a `HEAD` that is not a
 * directory, with `objects` and `refs` of any type, or with a `commondir` or `gitdir` file.
 */
async function looksLikeGitDir(dir: string): Promise<boolean> {
  return hasGitDirShape("", diskView(dir));
}

/** One configuration entry as git reads it: the key (section and name lower case) and its value. */
export interface ConfigEntry {
  key: string;
  value: string | null;
}

/**
 * Parses the output of `git config --null --list`: each entry is `key\nvalue\0`, or `key\0` for
 * a key given without `=` (git-config(1) "--null").
 */
export function parseNullList(out: string): ConfigEntry[] {
  return out
    .split("\0")
    .filter((e) => e !== "")
    .map((e) => {
      const nl = e.indexOf("\n");
      return nl === -1 ? { key: e, value: null } : { key: e.slice(0, nl), value: e.slice(nl + 1) };
    });
}

/** Parsed configuration files, keyed by path, modification time and size. */
const configCache: Map<string, ConfigEntry[] | null> = ((globalThis as { __agentReachGitConfigCache?: Map<string, ConfigEntry[] | null> }).__agentReachGitConfigCache ??= new Map());

/**
 * The entries of one git configuration file exactly as git reads it, asked of git itself
 * (`git config --file F --no-includes --null --list`, with no system or global configuration):
 * comment lines, continuation lines, quoting, escapes and case are then git's own. Includes are not
 * followed (an `include.*` / `includeIf.*` key is itself reported, and is not inert).
 * @returns the entries, `[]` when the file does not exist, or null when git cannot read it (then
 * the repository is not trusted)
 */
export async function readGitConfig(file: string): Promise<ConfigEntry[] | null> {
  const st = await fs.stat(file).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? ("missing" as const) : null));
  if (st === "missing") return [];
  if (st === null || !st.isFile()) return null;
  const cacheKey = `${file}\0${st.mtimeMs}\0${st.size}\0${st.ino}`;
  if (configCache.has(cacheKey)) return configCache.get(cacheKey)!;
  const entries = await new Promise<ConfigEntry[] | null>((resolve) => {
    execFile(
      "git",
      ["config", "--file", file, "--no-includes", "--null", "--list"],
      {
        cwd: "/",
        encoding: "utf8",
        timeout: 5000,
        maxBuffer: 4 * 1024 * 1024,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent", LC_ALL: "C", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CEILING_DIRECTORIES: "/" } as unknown as NodeJS.ProcessEnv,
      },
      (err: Error | null, stdout: string) => resolve(err ? null : parseNullList(stdout)),
    );
  });
  if (configCache.size > 500) configCache.clear();
  configCache.set(cacheKey, entries);
  return entries;
}

/** The key's pattern in INERT_KEYS: a subsection (anything between the first and last dot) becomes `*`. */
function keyPattern(key: string): string {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  return first === last ? key : `${key.slice(0, first)}.*${key.slice(last)}`;
}

/** Whether a configuration key (any case) is known to be inert (INERT_KEYS). */
export function inertConfigKey(key: string): boolean {
  return INERT_KEYS.has(keyPattern(key.toLowerCase()));
}

/**
 * The keys among `entries` that are not inert (deduplicated, in order). `core.worktree` is inert
 * when `workTreeCheck` accepts its value.
 */
export function riskyKeys(entries: ConfigEntry[], workTreeCheck: (value: string) => boolean): string[] {
  const risky = new Set<string>();
  for (const { key, value } of entries) {
    const k = key.toLowerCase();
    if (k === "core.worktree" && value !== null && workTreeCheck(value)) continue;
    if (!INERT_KEYS.has(keyPattern(k))) risky.add(k);
  }
  return [...risky];
}

/**
 * The text of a pointer file git reads (`commondir`, a `.git` file's `gitdir:` line) as git
 * reads it: trailing CR/LF removed, nothing else. Null when it is not exactly one line.
 */
function pointerValue(text: string): string | null {
  const v = text.replace(/[\r\n]+$/, "");
  return v === "" || /[\r\n]/.test(v) ? null : v;
}

/**
 * Why a repository's own files make it untrusted, or null when they do not.
 * @param configTrusted the configuration files of this directory are the operator's (the workspace
 * root's own `.git`): their keys are not checked, but pointers to other directories still are
 */
async function untrustedBecause(gitDir: string, workTree: string, workspaceRoot: string, configTrusted = false, depth = 0): Promise<string | null> {
  if (depth > 4) return "its common directory chain is too long";
  const insideWs = (v: string) => isInside(workspaceRoot, path.resolve(gitDir, v));
  for (const name of configTrusted ? ["config.worktree"] : ["config", "config.worktree"]) {
    const entries = await readGitConfig(path.join(gitDir, name));
    if (entries === null) return `its ${name} cannot be read by git`;
    const risky = riskyKeys(entries, insideWs);
    if (risky.length) return `its ${name} sets ${risky.slice(0, 4).join(", ")}`;
  }
  const commondirText = await readText(path.join(gitDir, "commondir"));
  if (commondirText !== null) {
    const value = pointerValue(commondirText);
    if (value === null || value.trim() !== value) return `its commondir file (${JSON.stringify(commondirText.slice(0, 80))}) is not one plain path`;
    const common = path.resolve(gitDir, value);
    const rootGitDir = path.join(workspaceRoot, ".git");
    if (configTrusted) return `its commondir makes git read its configuration from ${common}`;
    if (!isInside(workspaceRoot, common)) return `its common directory ${common} is outside the workspace`;
    const why = await untrustedBecause(common, workTree, workspaceRoot, common === rootGitDir, depth + 1);
    if (why) return why;
  } else if ((await fs.lstat(path.join(gitDir, "commondir")).catch(() => null)) !== null) {
    return "its commondir file cannot be read by the policy";
  }
  const hooks = await fs.readdir(path.join(gitDir, "hooks")).catch(() => [] as string[]);
  const installed = hooks.filter((h) => !h.endsWith(".sample"));
  if (installed.length && !configTrusted) return `it has hooks installed (${installed.slice(0, 3).join(", ")})`;
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
    if (d === rootGitDir && (await isDir(d))) return rootTrust(workspaceRoot);
    const dotGit = path.join(d, ".git");
    const st = await fs.lstat(dotGit).catch(() => null);
    if (st) {
      if (d === workspaceRoot && st.isDirectory()) return rootTrust(workspaceRoot);
      let gitDir = dotGit;
      if (st.isSymbolicLink()) return { trusted: false, why: `git would use the repository at ${rel(dotGit)}, a symlink` };
      if (st.isFile()) {
        const text = (await readText(dotGit)) ?? "";
        const line = pointerValue(text);
        const m = line === null ? null : /^gitdir: (.+)$/.exec(line);
        if (!m || m[1].trim() !== m[1]) return { trusted: false, why: `git would read ${rel(dotGit)}, which the policy cannot follow` };
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
 * The verdict on the workspace root's own `.git` directory: its `config` is the operator's, but
 * nothing in it may send git elsewhere (a `commondir`) or add keys that run programs (a
 * `config.worktree` with anything but inert keys).
 */
async function rootTrust(workspaceRoot: string): Promise<RepoTrust> {
  const why = (await untrustedBecause(path.join(workspaceRoot, ".git"), workspaceRoot, workspaceRoot, true)) ?? (await includedFromWorkspace(workspaceRoot));
  return why ? { trusted: false, why: `the workspace's own repository is not as the operator left it: ${why}` } : { trusted: true, repo: workspaceRoot };
}

/**
 * Why the root repository's `config` is not the operator's alone, or null: it includes
 * (`include.path`, `includeIf.*.path`, followed five levels deep) a file inside the workspace —
 * one the agent can write — that git cannot read or that sets keys that are not inert.
 */
async function includedFromWorkspace(workspaceRoot: string): Promise<string | null> {
  const queue = [{ file: path.join(workspaceRoot, ".git", "config"), depth: 0 }];
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < 50) {
    const { file, depth } = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const entries = await readGitConfig(file);
    const inside = depth > 0 && isInside(workspaceRoot, file);
    if (entries === null) {
      if (inside) return `its config includes ${path.relative(workspaceRoot, file)}, a file in the workspace that git cannot read`;
      continue;
    }
    if (inside) {
      const risky = riskyKeys(entries, () => false).filter((k) => k !== "include.path" && !/^includeif\..*\.path$/.test(k));
      if (risky.length) return `its config includes ${path.relative(workspaceRoot, file)}, a file in the workspace, which sets ${risky.slice(0, 4).join(", ")}`;
    }
    if (depth >= 5) continue;
    for (const { key, value } of entries) {
      const k = key.toLowerCase();
      if (value === null || (k !== "include.path" && !/^includeif\..*\.path$/.test(k))) continue;
      if (value.startsWith("~")) {
        if (!value.startsWith("~/")) continue;
        queue.push({ file: path.join(/*turbopackIgnore: true*/ process.env.HOME ?? "/nonexistent", value.slice(2)), depth: depth + 1 });
      } else queue.push({ file: path.resolve(/*turbopackIgnore: true*/ path.dirname(file), value), depth: depth + 1 });
    }
  }
  return null;
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
