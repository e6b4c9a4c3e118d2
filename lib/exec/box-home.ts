import crypto from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { execFileSync } from "node:child_process";
import { MAX_CONFIG_BYTES, sanitizeGlobalConfig } from "@/lib/exec/git-config-sanitize";

/**
 * The box HOME: fresh for every command, with caches and package stores kept.
 *
 * Each workspace has a HOME directory of its own (lib/exec/child-env.ts `childHome`). If a
 * command saw it as it is, what one command writes there would steer the next: git reads
 * `~/.gitconfig` (core.fsmonitor, core.hooksPath, aliases, pagers, filters and includes run
 * programs even for `git status`), npm `~/.npmrc` (node-options, script-shell), cargo
 * `~/.cargo/config.toml` (rustc-wrapper), pip `~/.config/pip/pip.conf`, curl `~/.curlrc`, go
 * `~/.config/go/env` (GOFLAGS=-toolexec), ssh `~/.ssh/config` (ProxyCommand), shells their rc
 * files. So a command sees, at HOME's path:
 * - a scratch directory of its own (under the data directory), empty but for `~/.gitconfig`,
 *   and deleted when the command ends: dotfiles and `~/.config` start fresh every time, and two
 *   commands at once do not see each other's;
 * - the persistent directories of `HOME_PERSISTENT_DIRS` (caches and package stores: `~/.cache`,
 *   `~/.npm`, `~/.local` for `pip install --user`, cargo's registry, Go's module cache, …) bound
 *   read-write from the workspace's HOME, so installs and downloads are not repeated;
 * - `~/.gitconfig` seeded from the workspace's HOME reduced to inert keys (user.name, user.email,
 *   init.defaultBranch, …: lib/exec/git-config-sanitize.ts), and written back the same way when
 *   the command changed it: `git config --global user.email …` lasts, `core.fsmonitor` does not.
 *
 * Why not fresh with nothing kept: `npm install`, `pip install --user` and `cargo build` would
 * download everything again in every command. Why not kept whole: its dotfiles are configuration
 * that runs programs. What the kept directories hold is trusted like the workspace's own
 * `node_modules` or `.venv`: a package installed with `pip install --user` runs in later Python
 * commands (its `.pth` files too), and a cache one command altered feeds later ones (docs/SECURITY.md).
 */

/** HOME-relative directories that persist between commands: caches and package stores, never configuration. */
export const HOME_PERSISTENT_DIRS: readonly string[] = [
  ".cache", // XDG cache: pip, go-build, yarn, node-gyp, deno, pre-commit, …
  ".npm", // npm's content-addressed cache (and npx packages)
  ".local", // pip install --user, pipx, pnpm's store, XDG data
  ".cargo/registry",
  ".cargo/git",
  ".cargo/bin",
  "go", // GOPATH: module cache and go install
  ".m2/repository",
  ".gradle/caches",
  ".gradle/wrapper",
  ".yarn/berry",
  ".pnpm-store",
  ".bun/install",
  ".nuget/packages",
  ".ivy2/cache",
];

/** Scratch HOMEs older than this (ms) are left-overs of a gateway that stopped mid-command. */
const STALE_MS = 24 * 60 * 60_000;

const globalForHome = globalThis as unknown as { agentReachHomeSwept?: boolean };

/** One command's HOME: the bwrap options that build it, and what to do when the command ended. */
export interface BoxHome {
  args: string[];
  /** Carries `~/.gitconfig` (inert keys) back to the workspace's HOME and deletes the scratch directory. Never throws. */
  release(): Promise<void>;
}

/**
 * Prepares the HOME of one boxed command (see the file comment).
 * @param home the workspace's HOME directory (absolute; created by `ensureChildHome`), also the
 *   path HOME has inside the box
 */
export async function boxHome(home: string): Promise<BoxHome> {
  const root = path.join(getConfig().dataDir, "sandbox", "homes");
  await fsp.mkdir(root, { recursive: true, mode: 0o700 });
  if (!globalForHome.agentReachHomeSwept) {
    globalForHome.agentReachHomeSwept = true;
    void sweepStale(root);
  }
  const scratch = await fsp.mkdtemp(path.join(root, "h-"));
  await fsp.chmod(scratch, 0o700);
  const persisted = path.join(home, ".gitconfig");
  const seed = withIdentity((await readGlobal(persisted)) ?? "");
  if (seed) await fsp.writeFile(path.join(scratch, ".gitconfig"), Buffer.from(seed, "latin1"), { mode: 0o644 });
  const args = ["--bind", scratch, home];
  for (const rel of HOME_PERSISTENT_DIRS) {
    // Only a real directory of the workspace's HOME, reached without symlinks: a link left there
    // (by a command run unboxed) would otherwise bind whatever it names into the box.
    const dir = plainDirBelow(home, rel);
    if (dir) args.push("--bind", dir, dir);
  }
  return {
    args,
    release: async () => {
      try {
        const now = await readGlobal(path.join(scratch, ".gitconfig"));
        const written = fs.lstatSync(/*turbopackIgnore: true*/ path.join(scratch, ".gitconfig"), { throwIfNoEntry: false });
        if (!written && seed) await fsp.rm(persisted, { force: true });
        else if (now !== null && now !== seed) {
          const tmp = `${persisted}.${crypto.randomBytes(4).toString("hex")}`;
          await fsp.writeFile(tmp, Buffer.from(now, "latin1"), { mode: 0o644 });
          await fsp.rename(tmp, persisted);
        }
      } catch {
        // The global configuration stays as it was.
      }
      await fsp.rm(scratch, { recursive: true, force: true }).catch(() => {});
    },
  };
}

/** Used when the person running the gateway has no git identity of their own. */
export const FALLBACK_GIT_IDENTITY = { name: "Agent Reach agent", email: "agent@agent-reach.invalid" };

const globalForIdentity = globalThis as unknown as { agentReachGitIdentity?: { name: string; email: string } };

/**
 * The git identity commits in the box are made with when the box's own `~/.gitconfig` names
 * none: the identity of the person running the gateway (their global git configuration, read
 * once with `git config --global --get`, which runs nothing), as their own commits outside the
 * box have, else FALLBACK_GIT_IDENTITY. Without one, `git commit` in the box fails ("Author
 * identity unknown"), and the repository's own config is read-only there.
 */
export function gitIdentity(): { name: string; email: string } {
  if (globalForIdentity.agentReachGitIdentity) return globalForIdentity.agentReachGitIdentity;
  const read = (key: string): string | null => {
    try {
      const value = execFileSync("git", ["config", "--global", "--get", key], { encoding: "utf8", timeout: 2000, stdio: ["ignore", "pipe", "ignore"] }).trim();
      // One line of printable text: nothing that could break the config file it goes into.
      return value && value.length <= 200 && !/[\x00-\x1f\x7f"\\]/.test(value) ? value : null;
    } catch {
      return null;
    }
  };
  const name = read("user.name");
  const email = read("user.email");
  globalForIdentity.agentReachGitIdentity = name && email ? { name, email } : FALLBACK_GIT_IDENTITY;
  return globalForIdentity.agentReachGitIdentity;
}

/** `config` with a [user] section naming `gitIdentity()` appended when it names no user.name or user.email. */
function withIdentity(config: string): string {
  const hasName = /^\s*name\s*=/im.test(userSections(config));
  const hasEmail = /^\s*email\s*=/im.test(userSections(config));
  if (hasName && hasEmail) return config;
  const id = gitIdentity();
  const lines = [...(hasName ? [] : [`\tname = ${id.name}`]), ...(hasEmail ? [] : [`\temail = ${id.email}`])];
  return `${config}${config && !config.endsWith("\n") ? "\n" : ""}[user]\n${lines.join("\n")}\n`;
}

/** The bodies of a config's `[user]` sections. */
function userSections(config: string): string {
  return [...config.matchAll(/^\s*\[\s*user\s*\]([^[]*)/gim)].map((m) => m[1]).join("\n");
}

/** A global git configuration file reduced to inert keys, or null when absent, not a plain file, or unreadable. */
async function readGlobal(file: string): Promise<string | null> {
  const st = fs.lstatSync(/*turbopackIgnore: true*/ file, { throwIfNoEntry: false });
  if (!st || !st.isFile() || st.size > MAX_CONFIG_BYTES) return null;
  let bytes: Buffer;
  try {
    const fd = fs.openSync(/*turbopackIgnore: true*/ file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      bytes = fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  return (await sanitizeGlobalConfig(bytes))?.text ?? null;
}

/**
 * `base/rel`, made when missing, when every component below `base` is a directory and none a
 * symlink (nothing is made through a link); else null.
 */
function plainDirBelow(base: string, rel: string): string | null {
  let current = base;
  for (const segment of rel.split("/")) {
    current = path.join(current, segment);
    let st = fs.lstatSync(/*turbopackIgnore: true*/ current, { throwIfNoEntry: false });
    if (!st) {
      try {
        fs.mkdirSync(/*turbopackIgnore: true*/ current, { mode: 0o755 });
      } catch {
        // made meanwhile (another command), or not possible: judged below
      }
      st = fs.lstatSync(/*turbopackIgnore: true*/ current, { throwIfNoEntry: false });
    }
    if (!st || st.isSymbolicLink() || !st.isDirectory()) return null;
  }
  return current;
}

/** Removes scratch HOMEs left by a gateway that stopped while commands ran. */
async function sweepStale(root: string): Promise<void> {
  const names = await fsp.readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    const p = path.join(root, name);
    const st = await fsp.lstat(p).catch(() => null);
    if (st?.isDirectory() && Date.now() - st.mtimeMs > STALE_MS) await fsp.rm(p, { recursive: true, force: true }).catch(() => {});
  }
}
