import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { isInside } from "@/lib/workspace/fence";

/**
 * The environment of every `run_command` child process (field case C21-9): built from an
 * explicit allow-list, never inherited wholesale, so the gateway's own secrets (DATABASE_URL,
 * AGENT_REACH_*, ANTHROPIC_API_KEY, *_TOKEN, *_KEY, *_SECRET, cloud credentials…) are never one
 * `printenv` away from the agent. The policy expands `$VAR` and `~` with this same environment,
 * so `> $HOME/.bashrc` means the same file to the policy and to the shell (C23-3).
 *
 * HOME: a per-workspace directory under the data directory (`<dataDir>/homes/<sha256(root)[:16]>`),
 * not the operator's real home. Programs that read or write dotfiles (git, npm, pip caches) get
 * a private, empty home, and tokens kept in the real home (~/.npmrc, ~/.git-credentials,
 * ~/.aws, ~/.ssh) are not picked up implicitly. The directory is outside the workspace, so
 * `> ~/.bashrc` is a write outside the workspace and is denied. In the sandbox a command sees
 * it fresh, with only its caches and package stores kept and `~/.gitconfig` reduced to inert
 * keys (lib/exec/box-home.ts), so what one command configures there does not run in the next.
 */

/** Variables copied from the gateway's environment when set (names, or prefixes ending in `*`). */
export const CHILD_ENV_ALLOW_LIST: readonly string[] = ["PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "USER", "LOGNAME"];

/** Variables always set to these values. */
export const CHILD_ENV_FIXED: Readonly<Record<string, string>> = {
  /** No terminal: plain output, no colour escapes, no pagers waiting for a key. */
  TERM: "dumb",
  NO_COLOR: "1",
  PAGER: "cat",
  GIT_PAGER: "cat",
  /** stdin is closed; a credential prompt would fail anyway, this makes it fail fast. */
  GIT_TERMINAL_PROMPT: "0",
  SHELL: "/bin/bash",
};

/** Used when the gateway itself has no PATH. */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Overrides for tests and tools; the gateway and run_command both use the defaults. */
export interface ChildEnvOptions {
  /** Directory holding the per-workspace homes (default `<config.dataDir>/homes`). */
  homeRoot?: string;
  /** The environment to copy allow-listed variables from (default `process.env`). */
  base?: Record<string, string | undefined>;
}

/**
 * Builds the child environment for commands run in `workspaceRoot`.
 * @param workspaceRoot canonical workspace root
 * @returns a fresh object: allow-listed variables from `base`, the fixed ones, HOME, and a PATH
 *   without empty, relative or in-workspace entries (a program planted in the workspace must not
 *   shadow `ls`)
 */
export function buildChildEnv(workspaceRoot: string, options: ChildEnvOptions = {}): Record<string, string> {
  const base = options.base ?? process.env;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && allowListed(name)) env[name] = value;
  }
  Object.assign(env, CHILD_ENV_FIXED);
  // A UTF-8 locale unless the operator chose one: output decodes as UTF-8, and bash reads
  // `$'\u00e9'` the way the policy does.
  if (!env.LANG && !env.LC_ALL && !env.LC_CTYPE) env.LANG = "C.UTF-8";
  env.PATH = safePath(base.PATH ?? DEFAULT_PATH, workspaceRoot);
  env.HOME = childHome(workspaceRoot, options.homeRoot);
  Object.assign(env, gitDiscoveryLimits(workspaceRoot));
  return env;
}

/**
 * git's repository search stops at the workspace root: git never moves up into a directory
 * listed in `GIT_CEILING_DIRECTORIES`, so with the root's parent there a repository above the
 * workspace is never used (git(1) "ENVIRONMENT VARIABLES"). And `safe.bareRepository=explicit`
 * (given as command-line configuration through `GIT_CONFIG_COUNT`, which git honours for this
 * protected setting) makes git refuse a bare repository it only found by searching, such as one
 * planted in a subfolder of the workspace. lib/policy/git-repo.ts checks the same before a
 * command runs.
 */
export function gitDiscoveryLimits(workspaceRoot: string): Record<string, string> {
  const parent = path.dirname(workspaceRoot);
  return {
    ...(parent !== workspaceRoot && { GIT_CEILING_DIRECTORIES: parent }),
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "safe.bareRepository",
    GIT_CONFIG_VALUE_0: "explicit",
  };
}

function allowListed(name: string): boolean {
  return CHILD_ENV_ALLOW_LIST.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p));
}

function safePath(value: string, workspaceRoot: string): string {
  const entries = value.split(":").filter((e) => path.isAbsolute(e) && !isInside(workspaceRoot, path.resolve(e)));
  return [...new Set(entries)].join(":") || DEFAULT_PATH;
}

/** The per-workspace HOME directory (not created here; see `ensureChildHome`). */
export function childHome(workspaceRoot: string, homeRoot?: string): string {
  const root = homeRoot ?? path.join(getConfig().dataDir, "homes");
  const key = crypto.createHash("sha256").update(workspaceRoot).digest("hex").slice(0, 16);
  return path.join(root, key);
}

/** Creates `env.HOME` (mode 0700) if it does not exist yet. */
export async function ensureChildHome(env: Record<string, string>): Promise<void> {
  if (env.HOME) await fs.mkdir(env.HOME, { recursive: true, mode: 0o700 });
}
