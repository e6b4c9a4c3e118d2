import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readGitConfig, riskyKeys } from "@/lib/policy/git-repo";
import { hasGitDirShape, type TypeOf } from "@/lib/policy/git-shape";

/**
 * Why a changed path inside the workspace can make git run code later, in words a reviewer reads,
 * or null. Covers every file through which git finds configuration or programs: a repository's
 * `config`, `config.worktree`, `commondir`, hooks, `info/attributes`, alternates, the same files
 * of linked worktrees (`.git/worktrees/*`) and submodules (`.git/modules/**`), and a `.git` file
 * (it names the repository git uses). A repository is any `.git` directory, and any directory
 * that has the shape of one as the change set leaves it (`gitDirs`: a bare repository planted
 * anywhere, whatever its name, lib/policy/git-shape.ts); its files are judged the same way. Any of
 * them can make a plain `git status` by the person run a program.
 *
 * @param rel workspace-relative path with `/` separators
 * @param afterText the file's new content when it is a small pointer file (`commondir`, `.git`), else null
 * @param gitDirs the ancestors of `rel` that have a git directory's shape after the change set
 *   (lib/policy/git-shape.ts `gitDirsAbove`), nearest first
 */
export function gitDanger(rel: string, afterText: string | null, gitDirs: readonly string[]): string | null {
  const parts = rel.split("/");
  const name = parts[parts.length - 1];
  const pointer = afterText === null ? "" : afterText.replace(/[\r\n]+$/, "").slice(0, 120);
  if (name === ".git") {
    return `${rel} names the repository git uses in ${path.posix.dirname(rel)}/${pointer ? ` (${JSON.stringify(pointer)})` : ""}: its config runs code when anyone runs git there`;
  }
  const gitAt = parts.lastIndexOf(".git");
  if (gitAt !== -1) {
    const why = dangerInside(rel, parts.slice(gitAt + 1), pointer, null);
    if (why) return why;
  }
  for (const dir of gitDirs) {
    const inner = (dir === "" ? parts : parts.slice(dir.split("/").length)).filter(Boolean);
    const why = dangerInside(rel, inner, pointer, dir);
    if (why) return why;
  }
  return null;
}

/**
 * The danger of the file `rel` at `inGit` below a git directory (`planted`: that directory when
 * it was found by its shape, not by a `.git` name), or null.
 */
function dangerInside(rel: string, inGit: string[], pointer: string, planted: string | null): string | null {
  if (inGit.length === 0) return null;
  const name = inGit[inGit.length - 1];
  const inner = inGit.join("/");
  const where = planted === null ? "" : ` (${planted || "the workspace root"} has the shape of a git repository: git uses it when anyone runs git there)`;
  if (name === "commondir") return `${rel} makes git read its config and hooks from ${pointer ? JSON.stringify(pointer) : "another directory"} (runs code when anyone runs git)${where}`;
  if (name === "gitdir" && inGit[0] === "worktrees") return `${rel} redirects a linked worktree's repository (git reads config through it)${where}`;
  if (name === "config" || name === "config.worktree") {
    return planted === null || inGit.length > 1
      ? `${rel} changes git's configuration (core.fsmonitor, hooksPath, aliases… run code when anyone runs git)${where}`
      : `${rel} is the config of a repository planted at ${planted || "the workspace root"}/ (runs code when anyone runs git there)`;
  }
  // git runs a hook only under its exact name: the `*.sample` files of `git init` never run.
  if (inGit.includes("hooks") && name.endsWith(".sample")) return null;
  if (inGit.includes("hooks")) return `${rel} installs a git hook (runs code on the next commit, checkout or push)${where}`;
  if (inner === "info/attributes" || inner.endsWith("/info/attributes")) return `${rel} names git filters or diff drivers for files (run code on checkout, add or diff)${where}`;
  if (inGit[0] === "rebase-merge" || inGit[0] === "rebase-apply" || inGit[0] === "sequencer") return `${rel} is a rebase or cherry-pick plan: its exec lines run when anyone continues it (git rebase --continue)${where}`;
  if (name === "alternates" || name === "http-alternates") return `${rel} makes git read objects from ${pointer ? JSON.stringify(pointer) : "elsewhere"}${where}`;
  return null;
}

/** The files of a git directory that name configuration or programs, judged when the directory gets its shape. */
const SHAPE_FILES = ["config", "config.worktree", "commondir", "info/attributes", "objects/info/alternates", "objects/info/http-alternates"] as const;

/**
 * Dangers of a change set that completes a git directory's shape around files that were already
 * there: `dir` had no git directory's shape before (`before`) and has it after (`after`), so git
 * starts to read the `config`, hooks, `info/attributes`, `commondir` and alternates it already
 * holds (written by an earlier change set as ordinary files). A config of inert keys only
 * (`configIsInert`) and hook samples are not dangers. Paths the change set itself writes are
 * judged by `gitDanger`; here only the ones it leaves as they are.
 *
 * @param root canonical workspace root
 * @param dirs candidate directories (those where the change set wrote `HEAD`, `objects`, `refs`, `commondir` or `gitdir`)
 * @param changed every path the change set writes or deletes
 * @returns reasons for the reviewer, one per dangerous file
 */
export async function completedShapeDangers(
  root: string,
  dirs: Iterable<string>,
  before: TypeOf,
  after: TypeOf,
  changed: ReadonlySet<string>,
): Promise<string[]> {
  const out: string[] = [];
  for (const dir of new Set(dirs)) {
    if (!hasGitDirShape(dir, after) || hasGitDirShape(dir, before)) continue;
    const rel = (name: string) => (dir === "" ? name : `${dir}/${name}`);
    const shape = `${dir || "the workspace root"} now has the shape of a git repository (HEAD, objects, refs)`;
    for (const name of SHAPE_FILES) {
      const file = rel(name);
      if (changed.has(file) || after(file) === null) continue;
      if ((name === "config" || name === "config.worktree") && after(file) === "file") {
        const bytes = await fs.readFile(/*turbopackIgnore: true*/ path.join(root, file)).catch(() => null);
        if (bytes !== null && (await configIsInert(bytes))) continue;
      }
      out.push(`${file} was already there and ${shape}: git reads it when anyone runs git in ${dir || "the workspace root"} (config, filters and alternates run code)`);
    }
    const hooks = rel("hooks");
    if (after(hooks) !== null) {
      const installed = await fs.readdir(/*turbopackIgnore: true*/ path.join(root, hooks)).catch(() => [] as string[]);
      const live = installed.filter((h) => !h.endsWith(".sample") && !changed.has(`${hooks}/${h}`));
      if (live.length > 0 || after(hooks) === "symlink") {
        out.push(`${hooks}/${live.length > 0 ? ` (${live.slice(0, 3).join(", ")})` : ""} was already there and ${shape}: its hooks run on the next commit, checkout or push`);
      }
    }
  }
  return out;
}

/**
 * True when `bytes`, read as a git configuration file by git itself (no includes followed), sets
 * only keys known to be inert (lib/policy/git-repo.ts: format, file modes, remotes, user, …): such
 * a `config` cannot make git run anything, as in a fresh `git init`. False when git cannot read
 * it or any other key is set (`core.fsmonitor`, aliases, filters, `include.path`, …).
 */
export async function configIsInert(bytes: Buffer): Promise<boolean> {
  if (bytes.length > 256 * 1024) return false;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "agent-reach-config-"));
  try {
    const file = path.join(dir, "config");
    await fs.writeFile(file, bytes, { mode: 0o600 });
    const entries = await readGitConfig(file);
    return entries !== null && riskyKeys(entries, () => false).length === 0;
  } finally {
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
