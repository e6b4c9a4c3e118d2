import crypto from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { MAX_CONFIG_BYTES, MAX_LEGACY_REMOTE_BYTES, sanitizeLegacyRemote, sanitizeRepositoryConfig } from "@/lib/exec/git-config-sanitize";
import { isInside } from "@/lib/workspace/fence";

/**
 * The workspace's git configuration as the box shows it: every repository's `config` and
 * `config.worktree` (the root's and nested clones'), each submodule's (`.git/modules/…/config`)
 * and linked worktree's (`.git/worktrees/<name>/config.worktree`), and every file inside the
 * workspace that one of them includes (`include.path`, `includeIf.<condition>.path`, followed
 * five levels deep), is replaced in the box by a sanitized copy without credentials
 * (lib/exec/git-config-sanitize.ts), bound read-only over it. `git remote -v`, `cat .git/config`
 * or `git config --list` then show remotes without tokens and no `http.extraHeader` or credential
 * helper, and git works as before. A file the sanitizer cannot rewrite safely is masked whole (an
 * empty file: git sees no configuration there). Files that need no change are left as they are.
 * The legacy remote files git still reads (`.git/remotes/<name>`, `.git/branches/<name>`, which
 * can hold `URL: https://user:token@host/…`) are shown the same way, without credentials.
 *
 * Cost per command: one `realpath`, `lstat` and read per configuration file, and a hash; git
 * parses a file only when its content is new (results are cached by content).
 */

/** Most repository directories searched below `.git/modules` (submodules of submodules). */
const MODULE_DEPTH = 6;
/** Most configuration files handled per command (a repository with more gets the first ones). */
const MAX_FILES = 500;
/** How deep includes are followed. */
const INCLUDE_DEPTH = 5;

/**
 * The bwrap options that show the workspace's git configuration without credentials.
 * @param ws canonical workspace root
 * @param gitDirs workspace-relative git directories, `.git` files (`gitdir: …` pointers) and bare
 *   repositories (lib/exec/workspace-secrets.ts `gitDirs`)
 * @param hidden gateway paths hidden in the box (nothing is bound inside them)
 * @returns `--ro-bind SANITIZED FILE` pairs, to follow the read-only binds of `.git` and precede
 *   the secret masks
 */
export async function gitConfigArgs(ws: string, gitDirs: readonly string[], hidden: readonly string[]): Promise<string[]> {
  const queue: Array<{ file: string; depth: number }> = [];
  const legacy: string[] = [];
  for (const rel of gitDirs) {
    const gitDir = resolveGitDir(path.join(ws, rel));
    if (!gitDir) continue;
    // `config`, and its copies beside it (`config.bak`, `config~`, `config.orig`: editors and
    // people leave them, with the same credentials), `config.worktree`, worktrees, submodules.
    const own = readdirOrEmpty(gitDir).filter((n) => n.startsWith("config")).map((n) => path.join(/*turbopackIgnore: true*/ gitDir, n));
    for (const file of [...own, ...worktreeConfigs(gitDir), ...moduleConfigs(path.join(gitDir, "modules"), 0)]) {
      queue.push({ file, depth: 0 });
    }
    for (const dir of ["remotes", "branches"]) legacy.push(...readdirOrEmpty(path.join(/*turbopackIgnore: true*/ gitDir, dir)).map((n) => path.join(/*turbopackIgnore: true*/ gitDir, dir, n)));
  }
  const args: string[] = [];
  const done = new Set<string>();
  let handled = 0;
  for (const file of legacy) {
    if (handled >= MAX_FILES) break;
    const real = inWorkspaceFile(ws, file, hidden, done);
    if (!real) continue;
    handled++;
    const size = fs.lstatSync(/*turbopackIgnore: true*/ real, { throwIfNoEntry: false })?.size ?? 0;
    const bytes = size > MAX_LEGACY_REMOTE_BYTES ? null : await fsp.readFile(/*turbopackIgnore: true*/ real).catch(() => null);
    const clean = bytes === null ? null : sanitizeLegacyRemote(bytes);
    if (clean === null) args.push("--ro-bind", await storedCopy(""), real);
    else if (clean.changed) args.push("--ro-bind", await storedCopy(clean.text), real);
  }
  while (queue.length > 0 && handled < MAX_FILES) {
    const { file, depth } = queue.shift()!;
    let real: string;
    try {
      real = fs.realpathSync(/*turbopackIgnore: true*/ file);
    } catch {
      continue; // absent
    }
    // Outside the workspace the file is not in the box, or is a system file shown as it is.
    if (real === ws || !isInside(ws, real) || done.has(real) || hidden.some((h) => isInside(h, real) && !isInside(h, ws))) continue;
    done.add(real);
    const st = fs.lstatSync(/*turbopackIgnore: true*/ real, { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    handled++;
    const bytes = st.size > MAX_CONFIG_BYTES ? null : await fsp.readFile(/*turbopackIgnore: true*/ real).catch(() => null);
    const clean = bytes === null ? null : await sanitizeRepositoryConfig(bytes);
    if (clean === null) {
      args.push("--ro-bind", await storedCopy(""), real);
      continue;
    }
    if (clean.changed.length > 0) args.push("--ro-bind", await storedCopy(clean.text), real);
    if (depth < INCLUDE_DEPTH) {
      for (const inc of clean.includes) {
        // `~/…` is in the box HOME, fresh for every command; relative paths are relative to the
        // including file, as git reads them.
        if (inc.startsWith("~")) continue;
        queue.push({ file: path.resolve(path.dirname(file), inc), depth: depth + 1 });
      }
    }
  }
  return args;
}

/**
 * The canonical path of `file` when it is a regular file inside the workspace, not in a hidden
 * gateway path and not handled yet (it is then marked handled); else null.
 */
function inWorkspaceFile(ws: string, file: string, hidden: readonly string[], done: Set<string>): string | null {
  let real: string;
  try {
    real = fs.realpathSync(/*turbopackIgnore: true*/ file);
  } catch {
    return null;
  }
  if (real === ws || !isInside(ws, real) || done.has(real) || hidden.some((h) => isInside(h, real) && !isInside(h, ws))) return null;
  done.add(real);
  return fs.lstatSync(/*turbopackIgnore: true*/ real, { throwIfNoEntry: false })?.isFile() ? real : null;
}

/**
 * The git directory `p` names: itself when a directory, the target of a `gitdir: …` file (relative
 * to the file's directory, as git reads it), or null.
 */
function resolveGitDir(p: string): string | null {
  const st = fs.lstatSync(/*turbopackIgnore: true*/ p, { throwIfNoEntry: false });
  if (st?.isDirectory()) return p;
  if (!st?.isFile() || st.size > 4096) return null;
  const m = /^gitdir: *(.+?)[\r\n]*$/.exec(fs.readFileSync(/*turbopackIgnore: true*/ p, "utf8").split("\n")[0] ?? "");
  return m ? path.resolve(path.dirname(p), m[1]) : null;
}

/** `config.worktree` of each linked worktree (`.git/worktrees/<name>/`). */
function worktreeConfigs(gitDir: string): string[] {
  const dir = path.join(gitDir, "worktrees");
  return readdirOrEmpty(dir).map((name) => path.join(dir, name, "config.worktree"));
}

/**
 * Configuration files of submodule repositories below `dir` (`.git/modules`): a directory with
 * `HEAD` and `config` is a repository (its `config`, `config.worktree`, and its own `modules`);
 * any other directory is part of a submodule's name (`modules/libs/a`) and is searched below.
 */
function moduleConfigs(dir: string, depth: number): string[] {
  if (depth > MODULE_DEPTH) return [];
  const out: string[] = [];
  for (const name of readdirOrEmpty(dir)) {
    const sub = path.join(dir, name);
    if (!fs.lstatSync(/*turbopackIgnore: true*/ sub, { throwIfNoEntry: false })?.isDirectory()) continue;
    const inside = readdirOrEmpty(sub);
    if (inside.includes("HEAD") && inside.includes("config")) {
      out.push(path.join(sub, "config"), path.join(sub, "config.worktree"), ...worktreeConfigs(sub), ...moduleConfigs(path.join(sub, "modules"), depth + 1));
    } else out.push(...moduleConfigs(sub, depth + 1));
  }
  return out;
}

function readdirOrEmpty(dir: string): string[] {
  try {
    return fs.readdirSync(/*turbopackIgnore: true*/ dir);
  } catch {
    return [];
  }
}

/** A read-only file holding `text` (latin1 bytes) under the data directory, named by its hash. */
async function storedCopy(text: string): Promise<string> {
  const bytes = Buffer.from(text, "latin1");
  const dir = path.join(getConfig().dataDir, "sandbox", "gitconfig");
  const file = path.join(dir, crypto.createHash("sha256").update(bytes).digest("hex"));
  if (!fs.existsSync(/*turbopackIgnore: true*/ file)) {
    await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
    await fsp.writeFile(tmp, bytes, { mode: 0o444 });
    await fsp.rename(tmp, file);
  }
  return file;
}
