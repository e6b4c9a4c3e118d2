import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import picomatch from "picomatch";
import { inertConfigKey, readGitConfig, type ConfigEntry } from "@/lib/policy/git-repo";
import { GLOB_OPTIONS } from "@/lib/policy/rule-match";
import { isInside } from "@/lib/workspace/fence";

/**
 * Workspace paths the person's own git configuration runs or reads as configuration: what git
 * does with them happens outside the sandbox, with the person's rights, the next time they run
 * git in the workspace. So they are runs-later paths like `.git/hooks`: a write_file or edit_file
 * to one asks (lib/policy/decide.ts), and a command's change set that touches one is held
 * (lib/effects/stage.ts).
 *
 * The configuration is what the person's git reads in the workspace's own repository: the system
 * file, the global ones (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`), the repository's
 * `config` and `config.worktree`, and every file they include (`include.path`,
 * `includeIf.<condition>.path`, whatever the condition, five levels deep). From each key that is
 * not inert (lib/policy/git-repo.ts):
 * - a path-valued key names a path: `core.hooksPath` (the hooks directory and all below it), the
 *   included files themselves, `core.attributesFile` (it names filter drivers);
 * - any other key's value is read as a command line (`core.fsmonitor`, `core.sshCommand`,
 *   `core.pager`, `filter.*.clean`, `diff.*.textconv`, `gpg.program`, `!` aliases, …): each word
 *   that names a file is protected — a word with a `/` (below every directory), and after the
 *   program name every bare word, existing or not, as the program would look it up from the top
 *   of the worktree: `word`, `word.*` and `word/**` (`sh pagerx`, `python3 -m mod` → `mod.py`,
 *   `mod/__init__.py`), the first part of a module name the same way (`perl -MFoo::Bar` →
 *   `Foo/Bar.pm`, `python3 -m pkg.sub`), a module flag's joined value (`-mmod`, `-rx`,
 *   `--require=x`), and for node-like programs `node_modules/word/**`. The arguments of a `git`
 *   in such a line (`!git log -- src/`) are git's, not programs, and are left out.
 * A plain relative path is protected below every directory (a glob starting with `**`): git runs
 * hooks and programs from the top of the worktree, or from the directory it was started in.
 *
 * Repositories nested in the workspace are not read here: their own config and hooks are git
 * internals (lib/effects/git-danger.ts), and git commands in them ask when they set anything that
 * is not inert (lib/policy/git-repo.ts).
 *
 * Cost: the answer is cached per workspace and rebuilt only when one of the files it read (or
 * looked for) changes its modification time, size or inode; a check is one `stat` per file.
 */

/** Keys whose value is one path (lower case; `*` is any subsection). */
const PATH_KEYS = new Set(["core.hookspath", "core.attributesfile", "include.path", "includeif.*.path"]);

/** How deep includes are followed (as lib/exec/box-git-config.ts follows them for the box). */
const INCLUDE_DEPTH = 5;
/** Most configuration files read for one workspace. */
const MAX_FILES = 50;

/**
 * The protected paths of one workspace: `why(rel)` says, naming `rel` and the key, why a change
 * to `rel` runs later ("githooks/pre-commit is below githooks, which is the hooks directory …"), or null.
 */
export interface GitConfigPaths {
  why(rel: string): string | null;
  /** The globs protected, each with its reason (for tests and the policy page). */
  globs: ReadonlyArray<{ glob: string; why: string }>;
}

interface Cached {
  /** Every file read or looked for, with its stat signature when read. */
  files: Array<{ file: string; sig: string }>;
  result: GitConfigPaths;
}

const cache: Map<string, Cached> = ((globalThis as { agentReachGitConfigPaths?: Map<string, Cached> }).agentReachGitConfigPaths ??= new Map());

/** A file's stat signature (modification time, size, inode), or "missing". */
function signature(file: string): string {
  const st = fs.statSync(/*turbopackIgnore: true*/ file, { throwIfNoEntry: false });
  return st ? `${st.mtimeMs}:${st.size}:${st.ino}` : "missing";
}

/** The configuration files git reads before includes, for the repository at the workspace root. */
function startFiles(workspaceRoot: string): string[] {
  const env = process.env;
  const home = env.HOME ?? os.homedir();
  const files: string[] = [];
  if (!env.GIT_CONFIG_NOSYSTEM) files.push(env.GIT_CONFIG_SYSTEM || "/etc/gitconfig");
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  else files.push(path.join(/*turbopackIgnore: true*/ env.XDG_CONFIG_HOME || path.join(/*turbopackIgnore: true*/ home, ".config"), "git", "config"), path.join(/*turbopackIgnore: true*/ home, ".gitconfig"));
  const gitDir = rootGitDir(workspaceRoot);
  if (gitDir) {
    const common = commonDir(gitDir);
    files.push(path.join(/*turbopackIgnore: true*/ common, "config"), path.join(/*turbopackIgnore: true*/ gitDir, "config.worktree"));
  }
  return files.filter((f) => f !== "/dev/null");
}

/** The root repository's git directory: `.git` itself, or the directory a `.git` file names; null when none. */
function rootGitDir(workspaceRoot: string): string | null {
  const dotGit = path.join(/*turbopackIgnore: true*/ workspaceRoot, ".git");
  const st = fs.statSync(/*turbopackIgnore: true*/ dotGit, { throwIfNoEntry: false });
  if (st?.isDirectory()) return dotGit;
  if (!st?.isFile() || st.size > 4096) return null;
  const m = /^gitdir: *(.+?)[\r\n]*$/.exec(fs.readFileSync(/*turbopackIgnore: true*/ dotGit, "utf8").split("\n")[0] ?? "");
  return m ? path.resolve(/*turbopackIgnore: true*/ workspaceRoot, m[1]) : null;
}

/** The common directory of a git directory (its `commondir` file's target, or itself). */
function commonDir(gitDir: string): string {
  try {
    const text = fs.readFileSync(/*turbopackIgnore: true*/ path.join(/*turbopackIgnore: true*/ gitDir, "commondir"), "utf8").replace(/[\r\n]+$/, "");
    return text ? path.resolve(/*turbopackIgnore: true*/ gitDir, text) : gitDir;
  } catch {
    return gitDir;
  }
}

/** The key's pattern: a subsection (anything between the first and last dot) becomes `*`. */
function keyPattern(key: string): string {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  return first === last ? key : `${key.slice(0, first)}.*${key.slice(last)}`;
}

/**
 * The words of a command line as a shell would split it, quotes removed (no expansion); shell
 * operators end a word and start the next command, whose program name comes first again.
 * @returns each word with whether it is in a program's place
 */
export function commandWords(line: string): Array<{ word: string; program: boolean }> {
  const out: Array<{ word: string; program: boolean }> = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  let program = true;
  const end = () => {
    if (inWord) out.push({ word, program });
    if (inWord) program = false;
    word = "";
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) end();
    else if (";|&()<>`".includes(c)) {
      end();
      program = c !== "<" && c !== ">";
    } else {
      word += c;
      inWord = true;
    }
  }
  end();
  return out;
}

/**
 * The workspace-relative path a configuration value names, or null when it is outside the
 * workspace or not a plain path (`~` is the gateway's home, as git expands it; a relative path is
 * taken from `base`).
 */
function workspacePath(workspaceRoot: string, value: string, base: string): { rel: string; anywhere: boolean } | null {
  if (value === "" || value.includes("\0")) return null;
  const home = process.env.HOME ?? os.homedir();
  const expanded = value === "~" ? home : value.startsWith("~/") ? path.join(/*turbopackIgnore: true*/ home, value.slice(2)) : value;
  if (expanded.startsWith("~")) return null;
  const abs = path.resolve(/*turbopackIgnore: true*/ base, expanded);
  if (!isInside(workspaceRoot, abs) || abs === workspaceRoot) return null;
  const rel = path.relative(workspaceRoot, abs).split(path.sep).join("/");
  // A plain relative path (no `..`, not absolute) may be taken from any directory git runs in.
  const anywhere = !path.isAbsolute(expanded) && !expanded.split("/").includes("..");
  return { rel, anywhere };
}

/** The paths one entry names, each with its reason. */
function namedBy(workspaceRoot: string, entry: ConfigEntry, file: string): Array<{ rel: string; anywhere: boolean; why: string; include: string | null; stem?: boolean }> {
  const key = entry.key.toLowerCase();
  if (entry.value === null || inertConfigKey(key)) return [];
  const where = `${key} in ${displayFile(workspaceRoot, file)}`;
  const pattern = keyPattern(key);
  if (PATH_KEYS.has(pattern)) {
    const include = pattern === "include.path" || pattern === "includeif.*.path";
    // Includes are relative to the including file; other paths to the top of the worktree.
    const base = include ? path.dirname(file) : workspaceRoot;
    const home = process.env.HOME ?? os.homedir();
    const target = include ? path.resolve(/*turbopackIgnore: true*/ base, entry.value.startsWith("~/") ? path.join(/*turbopackIgnore: true*/ home, entry.value.slice(2)) : entry.value) : null;
    const p = workspacePath(workspaceRoot, entry.value, base);
    const why = include
      ? `is a configuration file that ${where} includes: its keys (core.fsmonitor, aliases, filters…) run programs when anyone runs git`
      : key === "core.hookspath"
        ? `is the hooks directory (${where}): its hooks run on the next commit, checkout or push`
        : `is named by ${where}: git reads it when anyone runs git (attributes name filter programs)`;
    return p ? [{ ...p, anywhere: p.anywhere && !include, why, include: target }] : target ? [{ rel: "", anywhere: false, why, include: target }] : [];
  }
  const value = key.startsWith("alias.") ? (entry.value.startsWith("!") ? entry.value.slice(1) : null) : entry.value;
  if (value === null || /^(true|false|yes|no|on|off|1|0|)$/i.test(value.trim())) return [];
  const out: Array<{ rel: string; anywhere: boolean; why: string; include: null; stem?: boolean }> = [];
  const why = `is a program or script that ${where} runs when anyone runs git`;
  let gitArgs = false;
  let node = false;
  for (const { word: raw, program } of commandWords(value)) {
    // The arguments of a git command (`!git log -- src/`) are not programs: the alias runs git.
    if (program) {
      gitArgs = raw === "git";
      node = NODE_PROGRAMS.has(path.posix.basename(raw));
    } else if (gitArgs) continue;
    const word = program ? raw : moduleFlagValue(raw);
    if (word === null || word.includes("$") || word.includes("://") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    if (word.includes("/")) {
      const p = workspacePath(workspaceRoot, word, workspaceRoot);
      if (p) out.push({ ...p, why, include: null });
      continue;
    }
    // A program found by a bare name comes from PATH, not the workspace; colours and log formats
    // (`color.diff.meta = yellow bold`, `pretty.x = %h %s`) are words git reads, not programs.
    if (program || DISPLAY_KEY.test(key)) continue;
    // A bare word after the program names a file through the program's own lookup, whether or
    // not it exists now: `sh pagerx` reads ./pagerx, `python3 -m mod` ./mod.py or ./mod/__init__.py,
    // `perl -MFoo::Bar` ./Foo/Bar.pm, `ruby -rx` ./x.rb, `node x` ./x.js or ./x/index.js — from the
    // top of the worktree, where git runs programs. So the word, the word with any extension and
    // all below the word are protected, and the same for the first part of a module name.
    for (const name of new Set([word, word.split(/::|\./)[0]])) {
      if (name === "" || name === "." || name === ".." || name.includes("\0")) continue;
      out.push({ rel: name, anywhere: false, why, include: null, stem: true });
      // Node's bare `node -r x`, `node --import x` load ./node_modules/x.
      if (node) out.push({ rel: `node_modules/${name}`, anywhere: false, why, include: null });
    }
  }
  return out;
}

/** Keys whose values git reads as display settings, never as a program's arguments. */
const DISPLAY_KEY = /^(color|pretty)\./;

/** Programs that load a bare module name from node_modules. */
const NODE_PROGRAMS = new Set(["node", "nodejs", "bun", "deno", "tsx", "ts-node"]);

/**
 * The word a command-line argument names as a file or module, or null for an option that names
 * none: a plain word is itself; an interpreter's module or include flag with its value joined
 * (`-mmod`, `-MFoo::Bar`, `-rx`, `-I./lib`, `--require=x`, `--import=x`, `--loader=x`) is its
 * value; any other option (`-R`, `--dark`, `-F`) is null. A module flag's value in the next word
 * is a plain word.
 */
function moduleFlagValue(word: string): string | null {
  if (!word.startsWith("-")) return word;
  const joined = /^-[mMrI](.+)$/.exec(word);
  if (joined) return joined[1].startsWith("=") ? joined[1].slice(1) || null : joined[1];
  const long = /^--(?:require|import|loader|experimental-loader|module|include)=(.+)$/.exec(word);
  return long ? long[1] : null;
}

function displayFile(workspaceRoot: string, file: string): string {
  return isInside(workspaceRoot, file) ? path.relative(workspaceRoot, file).split(path.sep).join("/") : file;
}

/** Escapes picomatch's special characters in a literal path. */
function literal(rel: string): string {
  return rel.replace(/[\\*?[\]{}()!+@]/g, (c) => `\\${c}`);
}

/** Reads the configuration afresh: every file, its includes, the protected globs. */
async function build(workspaceRoot: string): Promise<Cached> {
  const files: Cached["files"] = [];
  const globs: Array<{ glob: string; why: string }> = [];
  const prefixed = new Set<number>();
  const queue = startFiles(workspaceRoot).map((file) => ({ file, depth: 0 }));
  const seen = new Set<string>();
  while (queue.length > 0 && files.length < MAX_FILES) {
    const { file, depth } = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const sig = signature(file);
    files.push({ file, sig });
    if (sig === "missing") continue;
    const entries = (await readGitConfig(file)) ?? [];
    for (const entry of entries) {
      for (const n of namedBy(workspaceRoot, entry, file)) {
        if (n.include && depth < INCLUDE_DEPTH) queue.push({ file: n.include, depth: depth + 1 });
        if (n.rel === "") continue;
        const rel = literal(n.rel);
        globs.push({ glob: n.anywhere ? `**/${rel}` : rel, why: `${n.rel} ${n.why}` }, { glob: n.anywhere ? `**/${rel}/**` : `${rel}/**`, why: `below ${n.rel}, which ${n.why}` });
        prefixed.add(globs.length - 1);
        // A bare name: the same name with any extension (`mod.py`, `x.js`) is what the program loads.
        if (n.stem) prefixed.add(globs.push({ glob: `${rel}.*`, why: `named ${n.rel} with an extension, which ${n.why}` }) - 1);
      }
    }
  }
  // A glob of a tree or of extensions says "<rel> is below …"; a glob of one path names it already.
  const matchers = globs.map((g, i) => ({ test: picomatch(g.glob, GLOB_OPTIONS), why: g.why, prefix: prefixed.has(i) }));
  const why = (rel: string) => {
    const hit = matchers.find((m) => m.test(rel));
    return hit ? (hit.prefix ? `${rel} is ${hit.why}` : hit.why) : null;
  };
  return { files, result: { globs, why } };
}

/**
 * The workspace paths the person's git configuration runs or reads as configuration (see the
 * module comment), cached until one of the configuration files changes.
 * @param workspaceRoot canonical workspace root
 */
export async function gitConfigPaths(workspaceRoot: string): Promise<GitConfigPaths> {
  const hit = cache.get(workspaceRoot);
  const starts = startFiles(workspaceRoot);
  if (hit && starts.every((f) => hit.files.some((h) => h.file === f)) && hit.files.every((f) => signature(f.file) === f.sig)) return hit.result;
  const built = await build(workspaceRoot);
  if (cache.size > 100) cache.clear();
  cache.set(workspaceRoot, built);
  return built.result;
}
