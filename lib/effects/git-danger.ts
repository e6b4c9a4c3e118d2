import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readGitConfig, riskyKeys } from "@/lib/policy/git-repo";

/**
 * Why a changed path inside the workspace can make git run code later, in words a reviewer reads,
 * or null. Covers every file through which git finds configuration or programs: a repository's
 * `config`, `config.worktree`, `commondir`, hooks, `info/attributes`, alternates, the same files
 * of linked worktrees (`.git/worktrees/*`) and submodules (`.git/modules/**`), a `.git` file
 * (it names the repository git uses), and a bare repository planted anywhere (its `config` beside
 * `HEAD`). Any of them can make a plain `git status` by the person run a program.
 *
 * @param rel workspace-relative path with `/` separators
 * @param afterText the file's new content when it is a small pointer file (`commondir`, `.git`), else null
 * @param changed every path in the same change set (a planted repository's HEAD is among them)
 */
export function gitDanger(rel: string, afterText: string | null, changed: ReadonlySet<string>): string | null {
  const parts = rel.split("/");
  const name = parts[parts.length - 1];
  const gitAt = parts.lastIndexOf(".git");
  const pointer = afterText === null ? "" : afterText.replace(/[\r\n]+$/, "").slice(0, 120);
  if (name === ".git") {
    return `${rel} names the repository git uses in ${path.posix.dirname(rel)}/${pointer ? ` (${JSON.stringify(pointer)})` : ""}: its config runs code when anyone runs git there`;
  }
  const inGit = gitAt !== -1 ? parts.slice(gitAt + 1) : null;
  if (inGit) {
    const inner = inGit.join("/");
    if (name === "commondir") return `${rel} makes git read its config and hooks from ${pointer ? JSON.stringify(pointer) : "another directory"} (runs code when anyone runs git)`;
    if (name === "gitdir" && inGit[0] === "worktrees") return `${rel} redirects a linked worktree's repository (git reads config through it)`;
    if (name === "config" || name === "config.worktree") return `${rel} changes git's configuration (core.fsmonitor, hooksPath, aliases… run code when anyone runs git)`;
    // git runs a hook only under its exact name: the `*.sample` files of `git init` never run.
    if (inGit.includes("hooks") && name.endsWith(".sample")) return null;
    if (inGit.includes("hooks")) return `${rel} installs a git hook (runs code on the next commit, checkout or push)`;
    if (inner === "info/attributes" || inner.endsWith("/info/attributes")) return `${rel} names git filters or diff drivers for files (run code on checkout, add or diff)`;
    if (inGit[0] === "rebase-merge" || inGit[0] === "rebase-apply" || inGit[0] === "sequencer") return `${rel} is a rebase or cherry-pick plan: its exec lines run when anyone continues it (git rebase --continue)`;
    if (name === "alternates" || name === "http-alternates") return `${rel} makes git read objects from ${pointer ? JSON.stringify(pointer) : "elsewhere"}`;
    return null;
  }
  // A repository planted outside any .git directory: git uses a directory with HEAD, objects/ and refs/ as a bare repository.
  if (name === "config" || name === "commondir") {
    const dir = path.posix.dirname(rel);
    const head = dir === "." ? "HEAD" : `${dir}/HEAD`;
    if (changed.has(head)) return `${rel} is the config of a repository planted at ${dir}/ (runs code when anyone runs git there)`;
  }
  return null;
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
