import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import crypto from "node:crypto";
import { getConfig } from "@/lib/config";
import { ToolError } from "@/lib/errors";
import { boxHome } from "@/lib/exec/box-home";
import { gitConfigArgs } from "@/lib/exec/box-git-config";
import { displayBytes, resetWorkspaceSecrets, utf8Name, workspaceSecrets, SecretScanLimitError } from "@/lib/exec/workspace-secrets";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { readGitConfig, riskyKeys } from "@/lib/policy/git-repo";
import { GLOB_OPTIONS, secretPathMatcher } from "@/lib/policy/rule-match";
import type { PolicyRuleData } from "@/lib/policy/types";
import { isInside } from "@/lib/workspace/fence";

/**
 * The command sandbox: every `run_command` runs inside a bubblewrap (`bwrap`) box built here.
 *
 * The box's file system is an allow-list, never the host's root with holes punched in it:
 * - the system directories (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, `/opt`) read-only, with
 *   every file or directory in them that is not world-readable masked (an empty file, an empty
 *   read-only directory): the gateway usually runs as root, and root inside the box is the same
 *   user as outside, so file permissions alone would not keep `/etc/shadow`, SSH host keys or
 *   `/etc/ssl/private` from a command (no capabilities are left, but the owner's read bit is);
 * - the workspace read-write at its own path; the per-workspace HOME read-write at its own path;
 *   a private `/tmp`, its own `/dev` and `/proc`;
 * - nothing else: the gateway's data directory (database, audit key, other workspaces' homes),
 *   the repository it runs from, `/root`, `/home`, `/var`, `/srv`, `/mnt`, `/run`, `/sys` are
 *   absent (and hidden again if one of them lies inside a directory that is exposed);
 * - files that later run with the person's own rights stay read-only: `.git/hooks`,
 *   `.git/config`, `.git/worktrees`, `.git/modules`, an existing `.git/commondir`, `.git/info/attributes`,
 *   `.git/config.worktree` or alternates file, a `.git` file (worktrees, submodules), plus the operator's list
 *   (AGENT_REACH_SANDBOX_READONLY). One that does not exist yet is blocked at its first missing
 *   component (an empty read-only directory is mounted there for the duration of the command),
 *   so it cannot be created either; each directory between the workspace root and a protected
 *   path is bound onto itself, so it cannot be renamed away to plant a fresh copy;
 * - the workspace's own secrets are masked, under every preset: each file a sensitive-path rule
 *   of the policy names (`.env`, `.env.local`, `id_rsa`, `*.pem`, `.npmrc`, …; the one definition
 *   is lib/policy/rule-match.ts `secretPathMatcher`) is an empty read-only file in the box, and
 *   a directory whose whole content is secret (`.ssh`, `.aws`, …) an empty read-only directory.
 *   `cat`, `rev`, `base32`, an interpreter computing the name, a symlink, `cp`, `tar` or `git add`
 *   all read the empty file; `ln` cannot cross the mount and a write fails (read-only). Only the
 *   operator can leave named secrets visible (AGENT_REACH_SANDBOX_EXPOSE). The secrets are found
 *   by a cached scan of the workspace (lib/exec/workspace-secrets.ts) revalidated before each box.
 *
 * Namespaces: user, PID (its own `/proc`, read-only, with host-wide files such as `timer_list`
 * and `kcore` hidden; other processes, the gateway's environment and `/proc/1/root` are out of
 * sight; `/proc/sys` cannot be written, which root inside could otherwise do), network (none at all unless granted: not even the host's
 * loopback), IPC, UTS and cgroup. `--new-session` (no terminal injection), `--die-with-parent`
 * and the PID namespace end every process of the command when it ends, `--cap-drop ALL` leaves
 * no capability, bwrap sets no-new-privileges, and `--disable-userns` keeps commands from
 * creating user namespaces of their own (where this bwrap supports it).
 *
 * Fail closed: `sandboxStatus()` probes once (bwrap present, namespaces permitted, a real trial
 * run) and caches the answer; when the box cannot be built the gateway asks a reviewer for every
 * command (lib/gateway/contexts.ts) and says why in health and self-check.
 */

/** What the gateway knows about the sandbox on this machine. */
export interface SandboxStatus {
  /** True when commands run boxed. */
  available: boolean;
  /** "bwrap": the box is on (or meant to be); "off": the operator turned it off (AGENT_REACH_SANDBOX=off). */
  mode: "bwrap" | "off";
  /** Why the box is not available, or what it lacks, for an operator. */
  problems: string[];
  /** How to fix the first problem ("" when there is none). */
  fix: string;
  /** The bwrap executable used (null when none was found). */
  bwrap: string | null;
  /** `bwrap --version`, e.g. "bubblewrap 0.8.0" (null when not run). */
  version: string | null;
}

/** One command's box (see `prepareBox`). */
export interface SandboxSpec {
  /** Canonical workspace root (read-write inside, at the same path). */
  workspaceRoot: string;
  /** The working directory inside the box (absolute, inside the workspace). */
  cwd: string;
  /** The command's HOME (read-write inside at its path), or null. */
  home: string | null;
  /** Share the host's network (only when a policy rule or a reviewed call grants it). */
  network: boolean;
  /** Workspace-relative paths or globs kept read-only besides the built-in ones. */
  readOnly?: string[];
  /**
   * Where the workspace's contents come from when not the workspace itself (the overlay view of
   * capture mode, mounted by the runner before bwrap starts). Protected paths then read from the
   * real workspace (the lower layer, unchanged by design).
   */
  workspaceSource?: string;
  /**
   * Where a mount point for a missing protected path ends up on disk: the workspace itself, or
   * the overlay's upper directory in capture mode (so the real workspace is never touched).
   */
  mountpointRoot?: string;
  /**
   * The policy rules whose sensitive-path globs name the workspace's secrets (the rules in force,
   * lib/policy/rule-store.ts `loadRules`); default: the built-in rules. Never empty of meaning: a
   * secret is masked unless a rule set without it is passed or the operator exposes it.
   */
  secretRules?: readonly PolicyRuleData[];
  /** Workspace-relative globs of secrets left visible; default: the operator's AGENT_REACH_SANDBOX_EXPOSE. */
  expose?: readonly string[];
}

/** A box ready to run: the argv prefix and what to undo afterwards. */
export interface BoxPlan {
  /** `bwrap …options… --`; append the program and its arguments. */
  argv: string[];
  /** Workspace-relative paths kept read-only (for the call's record). */
  readOnly: string[];
  /** Workspace-relative secret paths shown empty and read-only (masked) in the box. */
  masked: string[];
  /** Workspace-relative secret paths left visible by the operator's exposure globs. */
  exposed: string[];
  /**
   * More bwrap options as raw bytes (NUL-separated), or null: `argv` then holds
   * `--args BOX_ARGS_FD`, and whoever starts bwrap must give it these bytes on that descriptor
   * (a pipe or file open for reading; bwrap reads it to the end and closes it before the command
   * starts). They mask names that are not valid UTF-8, which no string argument can spell.
   */
  argsData: Buffer | null;
  /**
   * After the command: removes the mount points created for missing protected paths and, when the
   * command ran directly on the workspace (no capture), moves out of it every git file that
   * redirects git which the command created (see `prepareBox`). Never throws.
   * @returns what was moved out, workspace-relative, with why
   */
  release(): Promise<RemovedEntry[]>;
}

/** A file a command created that the gateway moved out of the workspace afterwards. */
export interface RemovedEntry {
  /** Workspace-relative path. */
  path: string;
  /** Why, in words a reviewer reads. */
  why: string;
}

/** The descriptor on which bwrap reads `BoxPlan.argsData` (after stdin, stdout, stderr and fds 3-4 of the runner). */
export const BOX_ARGS_FD = 5;

/** Directories of the host exposed read-only (the ones that exist). */
export const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"] as const;

/**
 * Paths in the workspace that are always read-only inside the box: every place from which git
 * later takes configuration or code to run with the person's rights. `hooks` and `config` run
 * programs directly; `worktrees` holds each linked worktree's `commondir`, `gitdir` and
 * `config.worktree`; `modules` holds each submodule's own config and hooks. A missing one is
 * blocked (an empty read-only directory), so `git worktree add` and a first
 * `git submodule update` cannot run in the box. (`.git/info` stays writable: git writes
 * `info/refs` on `gc` and `info/sparse-checkout`; its `attributes` file is protected on its own.)
 */
export const BUILTIN_READONLY = [".git/hooks", ".git/config", ".git/worktrees", ".git/modules"] as const;

/**
 * Files git reads when present that redirect it: `commondir` (git reads config, hooks and objects
 * from the directory it names), `config.worktree` (more configuration), `objects/info/alternates`
 * and `http-alternates` (objects from elsewhere), `info/attributes` (names filter and diff drivers
 * for files). Read-only when they exist. A missing one cannot
 * be blocked with an empty directory (git refuses a directory named `commondir`) nor with a mount
 * point in the real workspace (an empty `commondir` breaks git). So, when missing:
 * - on the overlay view (capture), a harmless read-only placeholder is mounted there, its mount
 *   point made in the overlay's upper directory and removed afterwards: `commondir` holding `.`
 *   (the repository itself), the others empty (no configuration, no alternates);
 * - directly on the workspace (capture off), the gateway moves any such file the command created
 *   out of the workspace when the command ends (`BoxPlan.release`), before anyone else's git can
 *   read it at rest; while the command runs, git outside the box could see it.
 */
export const BUILTIN_READONLY_IF_PRESENT = [".git/commondir", ".git/config.worktree", ".git/objects/info/alternates", ".git/objects/info/http-alternates", ".git/info/attributes"] as const;

/**
 * How often every exposed system directory is scanned again for secret (not world-readable)
 * files, in the background. A secret that appears outside the watched directories is masked in
 * every command that starts at most this long (plus the scan's own few seconds) after it appeared.
 */
export const MASK_RESCAN_MS = 5 * 60_000;
/** A scan older than this is not used at all: the next command waits for a fresh one. */
const MASK_MAX_AGE_MS = 2 * MASK_RESCAN_MS;
/**
 * System directories watched with inotify (every directory below them): any entry created,
 * removed, renamed or re-permissioned there marks the directory changed, and the next command
 * rescans it first (about 10 ms for /etc), so a secret appearing there is masked before the next
 * command. /etc is where secrets live (shadow, SSH host keys, TLS keys, sudoers, database
 * configuration); watching /usr as well would need tens of thousands of watches.
 */
export const WATCHED_SYSTEM_DIRS = ["/etc"] as const;

const TRIAL_TIMEOUT_MS = 15_000;

/**
 * Most time (ms) the check of a workspace for secrets may take before one command; past it the
 * command does not start (what was read is kept: the next command carries on from there).
 */
export const SECRET_SCAN_MAX_MS = 10_000;

/** The secret system files and directories masked in every box. */
interface MaskScan {
  files: string[];
  dirs: string[];
  /** When the oldest part of this scan started (ms since the epoch). */
  at: number;
  error: string | null;
}

/** One scanned system directory's secrets (and, for a watched one, every directory below it). */
interface RootScan {
  files: string[];
  dirs: string[];
  /** Readable directories below a watched root (what to watch). */
  watch: string[];
  at: number;
  error: string | null;
}

interface SandboxState {
  status: Map<string, SandboxStatus>;
  masks: MaskScan | null;
  /** Per scanned root: its part of `masks`. */
  roots: Map<string, RootScan>;
  scanning: Promise<MaskScan> | null;
  /** Watched roots whose contents changed since their last scan. */
  dirty: Set<string>;
  /** inotify watchers per watched root. */
  watchers: Map<string, Map<string, fs.FSWatcher>>;
  /** The background full rescan (unref'd). */
  timer: NodeJS.Timeout | null;
  /** Mount points created for missing protected paths, with how many running boxes use each. */
  mountpoints: Map<string, number>;
}

const globalForSandbox = globalThis as unknown as { agentReachSandbox?: SandboxState };
function state(): SandboxState {
  globalForSandbox.agentReachSandbox ??= { status: new Map(), masks: null, roots: new Map(), scanning: null, dirty: new Set(), watchers: new Map(), timer: null, mountpoints: new Map() };
  return globalForSandbox.agentReachSandbox;
}

/**
 * The sandbox's status under the current configuration, probed on first use (about 20 ms: one
 * trial box) and cached for the life of the process.
 */
export function sandboxStatus(): SandboxStatus {
  const config = getConfig();
  const key = `${config.sandbox}\u0000${config.bwrapPath ?? ""}`;
  const cache = state().status;
  let status = cache.get(key);
  if (!status) {
    status = probeSandbox({ mode: config.sandbox, bwrap: config.bwrapPath });
    cache.set(key, status);
    if (status.mode === "off") console.warn("[agent-reach] the command sandbox is turned off (AGENT_REACH_SANDBOX=off): commands run with the gateway's own rights.");
    else if (!status.available) console.warn(`[agent-reach] the command sandbox is unavailable: ${status.problems.join("; ")}. Every command will ask a reviewer. Fix: ${status.fix}`);
  }
  return status;
}

/** Forgets the cached status and secret scans, system and workspace (tests, or after the operator fixed the machine). */
export function resetSandboxStatus(): void {
  const s = state();
  s.status.clear();
  s.masks = null;
  s.roots.clear();
  resetWorkspaceSecrets();
}

/** Ways a machine can fail to run a box, and what fixes each. */
const FIXES = {
  off: "Unset AGENT_REACH_SANDBOX (or set it to auto) and restart the gateway to run commands in the sandbox.",
  missing: "Install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap), or point AGENT_REACH_BWRAP at bwrap, then restart the gateway.",
  namespaces:
    "Allow user namespaces: sysctl -w kernel.unprivileged_userns_clone=1 (Debian), sysctl -w user.max_user_namespaces=15000, and on Ubuntu 23.10+ sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile allowing bwrap 'userns'); in a container, allow unshare/mount (e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined, or --privileged). Then restart the gateway.",
  other: "Run the trial command shown in the problem by hand to see what bwrap needs, fix it, and restart the gateway.",
} as const;

/**
 * Probes the sandbox without caching: is bwrap there, and does a real box (every namespace and
 * mount the gateway uses) start and run `/bin/sh -c 'echo ok'`?
 */
export function probeSandbox(options: { mode: "auto" | "off"; bwrap: string | null }): SandboxStatus {
  if (options.mode === "off") {
    return { available: false, mode: "off", problems: ["turned off by the operator (AGENT_REACH_SANDBOX=off): commands run unboxed with the gateway's own rights"], fix: FIXES.off, bwrap: options.bwrap, version: null };
  }
  const bwrap = options.bwrap;
  if (!bwrap || !isExecutable(bwrap)) {
    return { available: false, mode: "bwrap", problems: [`bubblewrap (bwrap) not found${bwrap ? ` at ${bwrap}` : " on PATH"}`], fix: FIXES.missing, bwrap, version: null };
  }
  const versionRun = spawnSync(bwrap, ["--version"], { encoding: "utf8", timeout: TRIAL_TIMEOUT_MS });
  const version = versionRun.status === 0 ? versionRun.stdout.trim() : null;
  const trial = (extra: string[]) =>
    spawnSync(bwrap, [...namespaceArgs(false, extra), ...systemArgs(), "--proc", "/proc", ...procMasks(), "--dev", "/dev", "--tmpfs", "/tmp", "--remount-ro", "/proc", "--", "/bin/sh", "-c", "echo agent-reach-box-ok"], {
      encoding: "utf8",
      timeout: TRIAL_TIMEOUT_MS,
      env: { PATH: "/usr/bin:/bin" } as unknown as NodeJS.ProcessEnv,
    });
  let run = trial(["--disable-userns"]);
  const problems: string[] = [];
  if (!ok(run)) {
    const without = trial([]);
    if (ok(without)) {
      disableUserns = false;
      problems.push("this bwrap cannot --disable-userns: commands may create user namespaces of their own (still confined to the box)");
      run = without;
    }
  } else {
    disableUserns = true;
  }
  if (!ok(run)) {
    const message = (run.error?.message ?? run.stderr ?? "").trim().split("\n").slice(-2).join(" ") || `exit ${run.status}`;
    const namespaces = /namespace|uid map|permission|operation not permitted|setting up/i.test(message);
    return { available: false, mode: "bwrap", problems: [`a trial box failed: ${message}`], fix: namespaces ? FIXES.namespaces : FIXES.other, bwrap, version };
  }
  return { available: true, mode: "bwrap", problems, fix: "", bwrap, version };
}

/** Whether the probe found `--disable-userns` usable (set by `probeSandbox`). */
let disableUserns = true;

function ok(run: ReturnType<typeof spawnSync>): boolean {
  return run.status === 0 && String(run.stdout).includes("agent-reach-box-ok");
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Namespaces, session and privileges of every box. */
function namespaceArgs(network: boolean, extra: string[] = disableUserns ? ["--disable-userns"] : []): string[] {
  return [
    "--unshare-user",
    ...extra,
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(network ? [] : ["--unshare-net"]),
    "--hostname",
    "agent-reach-sandbox",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
  ];
}

/** The system directories, read-only (a root-level symlink such as `/bin -> usr/bin` stays a symlink). */
function systemArgs(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push("--symlink", fs.readlinkSync(dir), dir);
    else if (st.isDirectory()) args.push("--ro-bind", dir, dir);
  }
  return args;
}

/**
 * Every file and directory under the exposed system directories that is not world-readable
 * (files without o+r; directories without o+r or o+x, not descended), from `find`.
 *
 * Freshness: a watched directory (WATCHED_SYSTEM_DIRS) that changed since its scan is rescanned
 * before this answers; the whole set is rescanned every MASK_RESCAN_MS in the background (a scan
 * older than that is used while the new one runs, one older than twice that is waited for).
 * The caller must still expect entries that vanished since (see `maskArgs`).
 */
export async function secretSystemPaths(): Promise<MaskScan> {
  const s = state();
  // Let inotify events already queued for the watched directories arrive before deciding: the
  // kernel queues them before the change's system call returns, and Node delivers them in the
  // event loop's poll phase. The first turn may run in the current iteration (when called from an
  // I/O callback); the second runs after a poll phase has passed.
  for (let turn = 0; turn < 2; turn++) await new Promise<void>((r) => setImmediate(r));
  const age = s.masks ? Date.now() - s.masks.at : Infinity;
  if (!s.masks || s.masks.error || age >= MASK_MAX_AGE_MS) return fullScan();
  if (age >= MASK_RESCAN_MS) void fullScan();
  if (s.dirty.size > 0) {
    const roots = [...s.dirty];
    s.dirty.clear();
    for (const root of roots) {
      const scan = await scanRoot(root);
      // A full scan that finished meanwhile is newer than nothing; this root's part is newest.
      s.roots.set(root, scan);
      watchRoot(root, scan);
    }
    s.masks = combine(s.roots);
  }
  return s.masks;
}

/** Rescans every exposed system directory (one scan at a time; callers share it). */
function fullScan(): Promise<MaskScan> {
  const s = state();
  s.scanning ??= (async () => {
    const roots = existingSystemRoots();
    const scans = await Promise.all(roots.map(async (root) => [root, await scanRoot(root)] as const));
    const st = state();
    const next = new Map<string, RootScan>();
    for (const [root, scan] of scans) {
      // A root rescanned on its own while this scan ran holds the newer view of it.
      const own = st.roots.get(root);
      next.set(root, own && own.at > scan.at && !own.error ? own : scan);
      watchRoot(root, next.get(root)!);
    }
    st.roots = next;
    st.masks = combine(next);
    startRescanTimer();
    return st.masks;
  })().finally(() => (state().scanning = null));
  return s.scanning;
}

function existingSystemRoots(): string[] {
  return SYSTEM_DIRS.filter((d) => {
    try {
      return fs.lstatSync(d).isDirectory();
    } catch {
      return false;
    }
  });
}

function combine(roots: Map<string, RootScan>): MaskScan {
  const parts = [...roots.values()];
  return {
    files: parts.flatMap((p) => p.files),
    dirs: parts.flatMap((p) => p.dirs),
    at: parts.length ? Math.min(...parts.map((p) => p.at)) : Date.now(),
    error: parts.find((p) => p.error)?.error ?? null,
  };
}

/** The background full rescan, every MASK_RESCAN_MS while the process lives (never keeps it alive). */
function startRescanTimer(): void {
  const s = state();
  if (s.timer) return;
  s.timer = setInterval(() => void fullScan(), MASK_RESCAN_MS);
  s.timer.unref();
}

/**
 * Watches every readable directory below a watched root (inotify): any event marks the root
 * changed. Directories gone since the last scan are unwatched, new ones watched; when a watch was
 * added, the root is marked changed once more (something may have appeared in a new directory
 * between the scan and its watch), so the next command rescans it and the set converges. A
 * directory that cannot be watched (inotify limits) keeps the root changed: it is then rescanned
 * before every command (slower, never stale).
 */
function watchRoot(root: string, scan: RootScan): void {
  if (!(WATCHED_SYSTEM_DIRS as readonly string[]).includes(root)) return;
  const s = state();
  const current = s.watchers.get(root) ?? new Map<string, fs.FSWatcher>();
  s.watchers.set(root, current);
  const changed = () => state().dirty.add(root);
  const wanted = new Set(scan.watch);
  for (const [dir, w] of current) {
    if (!wanted.has(dir)) {
      w.close();
      current.delete(dir);
    }
  }
  let added = false;
  let failed = scan.watch.length === 0;
  for (const dir of wanted) {
    if (current.has(dir)) continue;
    try {
      const w = fs.watch(/*turbopackIgnore: true*/ dir, { persistent: false }, changed);
      w.on("error", () => {
        w.close();
        current.delete(dir);
        changed();
      });
      current.set(dir, w);
      added = true;
    } catch {
      failed = true; // vanished since the scan, or no watch left: rescan it before every command
    }
  }
  if (added || failed) changed();
}

function scanRoot(root: string): Promise<RootScan> {
  const watched = (WATCHED_SYSTEM_DIRS as readonly string[]).includes(root);
  const args = [
    root,
    "(", "-type", "d", "(", "!", "-perm", "-o=r", "-o", "!", "-perm", "-o=x", ")", "-prune", "-printf", "d %p\\0", ")",
    "-o", "(", "!", "-type", "d", "!", "-type", "l", "!", "-perm", "-o=r", "-printf", "f %p\\0", ")",
    ...(watched ? ["-o", "(", "-type", "d", "-printf", "w %p\\0", ")"] : []),
  ];
  const startedAt = Date.now();
  return new Promise((resolve) => {
    execFile("find", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout) => {
      const files: string[] = [];
      const dirs: string[] = [];
      const watch: string[] = [];
      for (const entry of stdout.split("\0")) {
        if (entry.startsWith("f ")) files.push(entry.slice(2));
        else if (entry.startsWith("d ")) dirs.push(entry.slice(2));
        else if (entry.startsWith("w ")) watch.push(entry.slice(2));
      }
      // find exits 1 when some directory could not be read; as root that is only a vanished file.
      const failed = error && (error as unknown as { code?: unknown }).code !== 1 ? `scanning for secret system files failed: ${error.message.split("\n")[0]}` : null;
      resolve({ files, dirs, watch, at: startedAt, error: failed });
    });
  });
}

/**
 * Scans again after bwrap could not build a box: a masked entry vanished or changed type between
 * the moment the box was planned and bwrap's mounts. `failedPath` (from bwrap's message, when it
 * named one) inside a system directory rescans that directory only (about 10 ms for /etc);
 * otherwise everything is rescanned.
 */
export async function rescanSecretSystemPaths(failedPath?: string | null): Promise<MaskScan> {
  const s = state();
  const root = failedPath ? existingSystemRoots().find((d) => isInside(d, failedPath)) : undefined;
  if (root && s.masks && !s.masks.error) {
    s.dirty.add(root);
    return secretSystemPaths();
  }
  s.masks = null;
  if (s.scanning) await s.scanning.catch(() => undefined);
  return fullScan();
}

/**
 * The bwrap options that mask `scan`'s entries as they are now: an entry that no longer exists is
 * skipped (bwrap would otherwise fail creating a mount point in the read-only /etc, and every
 * command with it), and each is masked by its current type (a file under /dev/null, a directory
 * under an empty tmpfs, made read-only by the caller). A symlink is left alone: it shows nothing
 * of its own, and its target is masked where it is secret.
 */
export function maskArgs(scan: Pick<MaskScan, "files" | "dirs">): { args: string[]; dirs: string[] } {
  const args: string[] = [];
  const dirs: string[] = [];
  for (const p of [...scan.files, ...scan.dirs]) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) {
      args.push("--tmpfs", p);
      dirs.push(p);
    } else args.push("--ro-bind", "/dev/null", p);
  }
  return { args, dirs };
}

/**
 * Variables every boxed command gets, over its environment: Python writes no bytecode into the
 * workspace (`PYTHONDONTWRITEBYTECODE`), and reads and writes its bytecode only under a directory
 * of the box's private /tmp (`PYTHONPYCACHEPREFIX`, so a `__pycache__` in the workspace is never
 * loaded in the box either), and bootsnap keeps its Ruby caches there too. Bytecode and caches
 * that an interpreter loads instead of the source are held when a change set writes them
 * (lib/effects/stage.ts `LOADED_CACHE_GLOBS`); with these, ordinary runs write none.
 */
export const BOX_ENV: Readonly<Record<string, string>> = {
  PYTHONDONTWRITEBYTECODE: "1",
  PYTHONPYCACHEPREFIX: "/tmp/.agent-reach-pycache",
  BOOTSNAP_CACHE_DIR: "/tmp/.agent-reach-bootsnap",
};

/** Starts the secret scan early (server start), so the first command does not wait for it. */
export function warmSandbox(): void {
  const status = sandboxStatus();
  if (status.available) void secretSystemPaths();
}

/**
 * Builds the bwrap argv for one command. Order matters: bwrap applies its options in order, so
 * the system is mounted first, then masks, the private /tmp, the workspace, what is hidden inside
 * the workspace, HOME, the read-only paths, and the read-only remounts last.
 * @throws Error when the secret scan failed (the caller must not run the command unboxed)
 */
export async function prepareBox(spec: SandboxSpec): Promise<BoxPlan> {
  const status = sandboxStatus();
  if (!status.available || !status.bwrap) throw new Error(`the sandbox is unavailable: ${status.problems.join("; ")}`);
  const masks = await secretSystemPaths();
  if (masks.error) throw new Error(masks.error);
  const config = getConfig();
  const ws = spec.workspaceRoot;
  const args: string[] = [...namespaceArgs(spec.network), ...systemArgs()];
  const remountRo: string[] = [];
  const hideDir = (dir: string) => {
    args.push("--tmpfs", dir);
    remountRo.push(dir);
  };
  const masked = maskArgs(masks);
  args.push(...masked.args);
  remountRo.push(...masked.dirs);
  if (spec.network) args.push(...resolverArgs());

  // Gateway state that could sit inside an exposed directory or inside the workspace.
  // (The audit key lives in the data directory; the call log file may be anywhere.)
  const hidden = [...new Set([config.dataDir, sqliteFile(config.databaseUrl), process.cwd(), config.logFile].filter((p): p is string => !!p).map(canonical))];
  const exposedSystem = (p: string) => SYSTEM_DIRS.some((d) => isInside(d, p));
  const hide = (p: string) => {
    // Covered by another hidden directory (one that does not hold the workspace, which stays visible).
    if (hidden.some((h) => h !== p && isInside(h, p) && !isInside(h, ws))) return;
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) hideDir(p);
    else args.push("--ro-bind", "/dev/null", p);
  };
  for (const p of hidden) if (exposedSystem(p) && !isInside(p, ws)) hide(p);

  args.push("--proc", "/proc", ...procMasks(), "--dev", "/dev", "--tmpfs", "/tmp");
  // Root inside is root outside for file permissions, and /proc/sys (core_pattern, vm.*, kernel.*)
  // only checks those: the box's whole /proc is read-only.
  remountRo.push("/proc");
  args.push("--bind", spec.workspaceSource ?? ws, ws);
  for (const p of hidden) if (isInside(ws, p) && p !== ws) hide(p);
  // HOME: fresh per command, with its caches and package stores kept (see `boxHome`).
  const home = spec.home ? await boxHome(spec.home) : null;
  if (home) args.push(...home.args);

  const sourceRoot = spec.workspaceSource ?? ws;
  const mountpointRoot = spec.mountpointRoot ?? ws;
  // The workspace root's repository: a `.git` directory gets every protection; a `.git` file is
  // itself read-only (protectedPaths); without one, `.git` may be created (`git init`): what the
  // command puts in a new repository is checked when it ends, and the next command protects it.
  // What exists is read from the workspace itself: the overlay view of capture mode (its lower
  // layer is the workspace, unchanged when the command starts) is not mounted yet.
  const gitKind = entryKind(path.join(/*turbopackIgnore: true*/ ws, ".git"));
  const exists = (rel: string) => {
    const file = path.join(/*turbopackIgnore: true*/ ws, rel);
    return fs.existsSync(/*turbopackIgnore: true*/ file) || isSymlink(file);
  };
  const present = gitKind === "dir" ? BUILTIN_READONLY_IF_PRESENT.filter(exists) : [];
  const absent = gitKind === "dir" ? BUILTIN_READONLY_IF_PRESENT.filter((p) => !exists(p)) : [];
  const captured = mountpointRoot !== ws;
  let readOnly: Awaited<ReturnType<typeof protectedPaths>> | null = null;
  let secrets: Awaited<ReturnType<typeof secretMasks>>;
  try {
    readOnly = await protectedPaths(ws, [...(gitKind === "absent" ? [] : BUILTIN_READONLY), ...present, ...(spec.readOnly ?? config.sandboxReadOnly)], {
      sourceRoot,
      mountpointRoot,
      placeholders: captured ? absent : [],
    });
    args.push(...readOnly.args);
    secrets = await secretMasks(ws, spec, hidden);
    // Repository configuration without its credentials, over the read-only originals.
    args.push(...(await gitConfigArgs(ws, secrets.gitDirs, hidden)));
  } catch (e) {
    await readOnly?.release();
    await home?.release();
    throw e;
  }
  // The workspace's secrets, last: a mask must not be covered by a later bind of a directory above it.
  args.push(...secrets.args);
  for (const dir of remountRo) args.push("--remount-ro", dir);
  for (const [name, value] of Object.entries(BOX_ENV)) args.push("--setenv", name, value);
  args.push("--chdir", spec.cwd, "--");
  // On the real workspace, what the command may have planted is checked when it ends; on the
  // overlay, the change set shows it (and holds it for a reviewer: lib/effects/git-danger.ts).
  const sweep = captured ? null : gitKind === "absent" ? { newRepo: true, absent: [] as string[] } : gitKind === "dir" ? { newRepo: false, absent } : null;
  return {
    argv: [status.bwrap, ...args],
    argsData: secrets.argsData,
    readOnly: readOnly.paths,
    masked: secrets.masked,
    exposed: secrets.exposed,
    release: async () => {
      await readOnly.release();
      await secrets.release(mountpointRoot);
      await home?.release();
      return sweep ? sweepGitRedirects(ws, sweep).catch(() => []) : [];
    },
  };
}

/**
 * The bwrap options that mask the workspace's secrets (see the file comment), from a scan
 * revalidated now: a file under an empty read-only file, a directory under an empty read-only
 * directory, a secret-named symlink at its target when that lies in the workspace (outside it,
 * the target is not in the box, or is a system file masked on its own). Secrets inside a hidden
 * directory (the gateway's state) are covered already.
 * @returns the options, the masked and exposed paths (workspace-relative), and the clean-up: a
 *   secret that vanished between the scan and bwrap's mounts gets an empty mount point made by
 *   bwrap, which is removed afterwards so it never reaches the workspace or a change set
 * @throws ToolError command_failed_to_start (reason "secret_scan_limit") when the scan passed its
 *   budget: the command must not run with its secrets showing
 */
async function secretMasks(
  ws: string,
  spec: SandboxSpec,
  hidden: readonly string[],
): Promise<{ args: string[]; argsData: Buffer | null; masked: string[]; exposed: string[]; gitDirs: string[]; release(mountpointRoot: string): Promise<void> }> {
  const config = getConfig();
  const exposeGlobs = spec.expose ?? config.sandboxExpose;
  const expose = exposeGlobs.length > 0 ? picomatch([...exposeGlobs], GLOB_OPTIONS) : undefined;
  let found;
  try {
    // An exposure glob reaches into a directory when its literal prefix lies above or below it.
    const bases = exposeGlobs.map(literalPrefix);
    const exposeUnder = (dir: string) => bases.some((b) => b === "" || b === dir || b.startsWith(`${dir}/`) || dir.startsWith(`${b}/`));
    found = await workspaceSecrets(ws, secretPathMatcher(spec.secretRules ?? DEFAULT_RULES), { expose, exposeUnder, maxEntries: config.sandboxScanMaxEntries, maxMs: SECRET_SCAN_MAX_MS });
  } catch (e) {
    if (!(e instanceof SecretScanLimitError)) throw e;
    throw new ToolError(
      "command_failed_to_start",
      `The command did not start: ${e.message}. Its secrets could not all be masked, so it does not run.`,
      {
        reason: "secret_scan_limit",
        limit: e.limit,
        entries: e.entries,
        fix:
          e.limit === "entries"
            ? "Run commands in a smaller workspace, or raise AGENT_REACH_SANDBOX_SCAN_MAX_ENTRIES (operator) and restart the gateway."
            : "Try again: the scan resumes where it stopped. On a slow disk, run commands in a smaller workspace.",
      },
      { cause: e },
    );
  }
  const args: string[] = [];
  const masked: Array<{ rel: string; dir: boolean; ino: number; ctimeMs: number }> = [];
  const covered = (abs: string) => hidden.some((h) => isInside(h, abs) && !isInside(h, ws));
  const add = (rel: string, st: fs.Stats) => {
    if (masked.some((m) => m.rel === rel || (m.dir && isInside(path.join(ws, m.rel), path.join(ws, rel))))) return;
    masked.push({ rel, dir: st.isDirectory(), ino: st.ino, ctimeMs: st.ctimeMs });
  };
  for (const rel of [...found.files, ...found.dirs]) {
    const abs = path.join(ws, rel);
    const st = lstatOrNull(abs);
    if (!st || covered(abs)) continue; // gone since the scan: nothing to show
    if (st.isSymbolicLink()) found.links.push(rel);
    else add(rel, st);
  }
  // Names that are not valid UTF-8 (see lib/exec/workspace-secrets.ts): masked like secrets. Their
  // bytes cannot travel in bwrap's argv (a Node string argument is always encoded as valid UTF-8),
  // so their options go to bwrap as bytes through `--args` (NUL-separated, read from a descriptor,
  // applied in place): see BoxPlan.argsData.
  const raw: Array<{ bytes: Buffer; display: string; dir: boolean; ino: number; ctimeMs: number }> = [];
  const wsBytes = Buffer.from(`${ws}/`);
  const addRaw = (bytes: Buffer, display: string, st: fs.Stats) => {
    if (!raw.some((r) => r.bytes.equals(bytes))) raw.push({ bytes, display, dir: st.isDirectory(), ino: st.ino, ctimeMs: st.ctimeMs });
  };
  for (const r of found.raw) {
    const parent = r.dir ? path.join(ws, r.dir) : ws;
    if (covered(parent) || masked.some((m) => m.dir && isInside(path.join(ws, m.rel), parent))) continue;
    const bytes = Buffer.concat([Buffer.from(`${parent}/`), r.name]);
    const st = lstatOrNull(bytes);
    if (!st) continue;
    if (!st.isSymbolicLink()) {
      addRaw(bytes, r.display, st);
      continue;
    }
    // A link: its target is masked when it lies in the workspace, as for a secret-named link.
    let target: Buffer;
    try {
      // The native realpath: the JS one decodes a Buffer path into a string on the way.
      target = fs.realpathSync.native(/*turbopackIgnore: true*/ bytes, { encoding: "buffer" });
    } catch {
      continue; // dangling: shows nothing
    }
    const text = utf8Name(target);
    if (text !== null) {
      if (text === ws || !isInside(ws, text) || covered(text)) continue;
      const tst = lstatOrNull(text);
      if (tst && !tst.isSymbolicLink()) add(path.relative(ws, text), tst);
    } else if (target.subarray(0, wsBytes.length).equals(wsBytes)) {
      const tst = lstatOrNull(target);
      if (tst && !tst.isSymbolicLink()) addRaw(target, displayBytes(target.subarray(wsBytes.length)), tst);
    }
  }
  for (const rel of found.links) {
    const target = canonical(path.join(ws, rel));
    if (target === ws || !isInside(ws, target) || covered(target)) continue;
    const st = lstatOrNull(target);
    if (st && !st.isSymbolicLink()) add(path.relative(ws, target), st);
  }
  masked.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  const anyFile = masked.some((m) => !m.dir) || raw.some((r) => !r.dir);
  const anyDir = masked.some((m) => m.dir) || raw.some((r) => r.dir);
  const emptyFile = anyFile ? await placeholderFile("empty") : "";
  const emptyDir = anyDir ? await ensureEmptyDir() : "";
  for (const m of masked) args.push("--ro-bind", m.dir ? emptyDir : emptyFile, path.join(ws, m.rel));
  let argsData: Buffer | null = null;
  if (raw.length > 0) {
    const nul = Buffer.from([0]);
    argsData = Buffer.concat(raw.flatMap((r) => [Buffer.from("--ro-bind\0"), Buffer.from(r.dir ? emptyDir : emptyFile), nul, r.bytes, nul]));
    args.push("--args", String(BOX_ARGS_FD));
  }
  // A mount point bwrap made (the entry vanished after the plan) is removed afterwards; see below.
  const cleanUp = async (onDisk: string | Buffer, m: { ino: number; ctimeMs: number }, direct: boolean) => {
    const st = lstatOrNull(onDisk);
    if (!st || (direct && st.ino === m.ino && st.ctimeMs === m.ctimeMs)) return;
    if (st.isFile() && st.size === 0) await fsp.unlink(onDisk).catch(() => {});
    else if (st.isDirectory()) await fsp.rmdir(onDisk).catch(() => {});
  };
  return {
    args,
    argsData,
    masked: [...masked.map((m) => m.rel), ...raw.map((r) => r.display)],
    exposed: found.exposed,
    gitDirs: found.gitDirs,
    release: async (mountpointRoot) => {
      for (const m of masked) {
        // What stands at a masked path now is bwrap's mount point when it is not the entry that
        // was planned (in the overlay's upper directory, anything there is one: the command could
        // not write through the mask). The entry is known by its inode and change time (a freed
        // inode number is often reused at once). Only an empty file or directory is removed.
        await cleanUp(path.join(mountpointRoot, m.rel), m, mountpointRoot === ws);
      }
      const rootBytes = Buffer.from(`${mountpointRoot}/`);
      for (const r of raw) await cleanUp(Buffer.concat([rootBytes, r.bytes.subarray(wsBytes.length)]), r, mountpointRoot === ws);
    },
  };
}

/**
 * Kernel interfaces in /proc that describe the host rather than the box (timers and keys of every
 * process, kernel memory, hardware): hidden, files under /dev/null, directories under an empty
 * tmpfs (read-only, since the tmpfs is a mount of its own).
 */
const PROC_MASKED = ["kcore", "keys", "key-users", "timer_list", "timer_stats", "sched_debug", "latency_stats", "kallsyms", "kmsg", "sysrq-trigger", "acpi", "scsi", "asound", "driver"] as const;

function procMasks(): string[] {
  const args: string[] = [];
  for (const name of PROC_MASKED) {
    const p = `/proc/${name}`;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) args.push("--tmpfs", p, "--remount-ro", p);
    else args.push("--ro-bind", "/dev/null", p);
  }
  return args;
}

/** Name resolution for a granted network: /etc/resolv.conf often points into /run, which is absent. */
function resolverArgs(): string[] {
  try {
    const target = fs.realpathSync("/etc/resolv.conf");
    if (SYSTEM_DIRS.some((d) => isInside(d, target))) return [];
    return ["--ro-bind", target, target];
  } catch {
    return [];
  }
}

function sqliteFile(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  return path.resolve(url.slice("file:".length).split("?")[0]);
}

function canonical(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * The bwrap options that keep `patterns` read-only in the workspace `ws`, and the mount points
 * to remove afterwards. A glob protects its literal prefix (`.github/workflows/*.yml` →
 * `.github/workflows`). For each protected path:
 * - every directory between `ws` and it is bound onto itself (a mount point cannot be renamed or
 *   removed, so the protected entry cannot be moved away and replaced);
 * - an existing entry is bound read-only onto itself; one reached through a symlink is protected
 *   at its target when that lies in the workspace (outside, it is not in the box at all);
 * - a missing one gets an empty read-only directory at its first missing component, created under
 *   `mountpointRoot` for the command's duration (reference-counted across concurrent commands).
 */
async function protectedPaths(
  ws: string,
  patterns: readonly string[],
  where: { sourceRoot: string; mountpointRoot: string; placeholders?: readonly string[] },
): Promise<{ args: string[]; paths: string[]; release(): Promise<void> }> {
  const args: string[] = [];
  // Mount sources come from what the box shows at the workspace (the overlay view in capture mode).
  const source = (p: string) => path.join(where.sourceRoot, path.relative(ws, p));
  const direct = where.mountpointRoot === ws;
  const selfBound = new Set<string>();
  const protectedRel = new Set<string>();
  const created: string[] = [];
  const emptyDir = await ensureEmptyDir();
  const targets = new Set<string>();
  // A `.git` file (worktree, submodule) names the repository git uses: it must not be rewritten.
  try {
    if (fs.lstatSync(path.join(ws, ".git")).isFile()) targets.add(".git");
  } catch {
    // absent or unreadable
  }
  for (const pattern of patterns) targets.add(literalPrefix(pattern));
  const blocked: string[] = []; // first missing components, absolute
  for (const rel of [...targets].sort()) {
    if (!rel) continue;
    const segments = rel.split("/");
    let current = ws;
    for (let i = 0; i < segments.length; i++) {
      const next = path.join(current, segments[i]);
      if (blocked.some((b) => isInside(b, next))) break; // already covered by a blocked parent
      const last = i === segments.length - 1;
      let st: fs.Stats | null = null;
      try {
        st = fs.lstatSync(next);
      } catch {
        st = null;
      }
      if (!st) {
        // First missing component: block it with an empty read-only directory.
        blocked.push(next);
        args.push("--ro-bind", emptyDir, next);
        protectedRel.add(path.relative(ws, next));
        break;
      }
      if (st.isSymbolicLink()) {
        const target = canonical(next);
        if (isInside(ws, target) && target !== ws && fs.existsSync(/*turbopackIgnore: true*/ target)) {
          args.push("--ro-bind", source(target), target);
          protectedRel.add(path.relative(ws, target));
        }
        // The link itself lives in a writable directory; see docs/SECURITY.md.
        break;
      }
      if (last || !st.isDirectory()) {
        args.push("--ro-bind", source(next), next);
        protectedRel.add(path.relative(ws, next));
        break;
      }
      selfBound.add(next);
      current = next;
    }
  }
  // Placeholders (capture only): a missing redirect file gets a harmless read-only stand-in whose
  // parent directories are bound onto themselves (so they cannot be renamed away). A missing
  // parent directory is left to the change-set hold.
  const placeholderFiles: string[] = [];
  for (const rel of where.placeholders ?? []) {
    const segments = rel.split("/");
    let current = ws;
    const parents: string[] = [];
    let ok = true;
    for (const segment of segments.slice(0, -1)) {
      current = path.join(current, segment);
      const st = lstatOrNull(current);
      if (!st || !st.isDirectory() || blocked.some((b) => isInside(b, current))) {
        ok = false;
        break;
      }
      parents.push(current);
    }
    const target = path.join(ws, rel);
    if (!ok || lstatOrNull(target)) continue;
    for (const d of parents) selfBound.add(d);
    args.push("--ro-bind", await placeholderFile(path.basename(rel)), target);
    protectedRel.add(rel);
    placeholderFiles.push(path.join(where.mountpointRoot, rel));
  }
  // Mount points are made only once the whole plan is known (making one changes what exists).
  for (const dir of blocked) {
    const onDisk = path.join(where.mountpointRoot, path.relative(ws, dir));
    acquireMountpoint(onDisk, direct);
    created.push(onDisk);
  }
  // Self-binds must precede the read-only mounts beneath them (a later bind would cover them).
  const ordered = [...[...selfBound].sort().flatMap((d) => ["--bind", source(d), d]), ...args];
  return {
    args: ordered,
    paths: [...protectedRel].sort(),
    release: async () => {
      for (const dir of created) await releaseMountpoint(dir);
      // bwrap made each placeholder's mount point, an empty file, in the overlay's upper directory.
      for (const file of placeholderFiles) {
        const st = lstatOrNull(file);
        if (st?.isFile() && st.size === 0) await fsp.unlink(file).catch(() => {});
      }
    },
  };
}

function lstatOrNull(p: string | Buffer): fs.Stats | null {
  try {
    return fs.lstatSync(/*turbopackIgnore: true*/ p);
  } catch {
    return null;
  }
}

function entryKind(p: string): "dir" | "file" | "absent" | "other" {
  const st = lstatOrNull(p);
  return !st ? "absent" : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
}

/** What a redirect placeholder holds: `commondir` names the repository itself, the others are empty. */
async function placeholderFile(name: string): Promise<string> {
  const dir = path.join(getConfig().dataDir, "sandbox", "placeholders");
  const file = path.join(dir, name === "commondir" ? "commondir" : "empty");
  if (!fs.existsSync(/*turbopackIgnore: true*/ file)) {
    await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
    await fsp.writeFile(tmp, name === "commondir" ? ".\n" : "", { mode: 0o444 });
    await fsp.rename(tmp, file);
  }
  return file;
}

/**
 * After a command ran directly on the workspace: moves out every git file it created through
 * which git would later take configuration or code from elsewhere, into the data directory
 * (`sandbox/quarantine/<time>-<random>/`, nothing is lost):
 * - in the root's existing repository, each redirect file (`absent`: those missing before);
 * - in a repository the command created at the root (`newRepo`): a `.git` file, the redirect
 *   files, installed hooks (not `*.sample`), `info/attributes`, `worktrees/`, `modules/`, and a
 *   `config` or `config.worktree` with any key not known to be inert (git's own parser decides).
 */
async function sweepGitRedirects(ws: string, what: { newRepo: boolean; absent: readonly string[] }): Promise<RemovedEntry[]> {
  const found: RemovedEntry[] = [];
  const has = (rel: string) => lstatOrNull(path.join(/*turbopackIgnore: true*/ ws, rel)) !== null;
  const redirects = (list: readonly string[]) => {
    for (const rel of list) {
      if (!has(rel)) continue;
      const what = rel.endsWith("alternates") ? "would make git read objects from elsewhere" : rel.endsWith("attributes") ? "names filter and diff drivers git runs" : "would make git read configuration and hooks from elsewhere";
      found.push({ path: rel, why: `${rel} ${what}` });
    }
  };
  if (!what.newRepo) redirects(what.absent);
  else {
    const kind = entryKind(path.join(/*turbopackIgnore: true*/ ws, ".git"));
    if (kind === "file" || kind === "other") found.push({ path: ".git", why: ".git (a file) would name another directory as this repository" });
    if (kind === "dir") {
      redirects(BUILTIN_READONLY_IF_PRESENT);
      const hooks = await fsp.readdir(path.join(/*turbopackIgnore: true*/ ws, ".git", "hooks")).catch(() => [] as string[]);
      for (const h of hooks) if (!h.endsWith(".sample")) found.push({ path: `.git/hooks/${h}`, why: `.git/hooks/${h} is a git hook (runs on commit, checkout or push)` });
      for (const rel of [".git/worktrees", ".git/modules"]) if (has(rel)) found.push({ path: rel, why: `${rel} names programs or repositories git uses` });
      for (const rel of [".git/config", ".git/config.worktree"]) {
        if (!has(rel) || found.some((f) => f.path === rel)) continue;
        const entries = await readGitConfig(path.join(/*turbopackIgnore: true*/ ws, rel));
        const risky = entries === null ? ["(unreadable)"] : riskyKeys(entries, () => false);
        if (risky.length) found.push({ path: rel, why: `${rel} sets ${risky.slice(0, 4).join(", ")} (may run programs when anyone runs git)` });
      }
    }
  }
  if (found.length === 0) return [];
  const dest = path.join(getConfig().dataDir, "sandbox", "quarantine", `${new Date().toISOString().replace(/[:.]/g, "-")}-${crypto.randomBytes(4).toString("hex")}`);
  const moved: RemovedEntry[] = [];
  for (const f of found) {
    const from = path.join(/*turbopackIgnore: true*/ ws, f.path);
    const to = path.join(dest, f.path);
    try {
      await fsp.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
      try {
        await fsp.rename(from, to);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e;
        await fsp.cp(from, to, { recursive: true, verbatimSymlinks: true });
        await fsp.rm(from, { recursive: true, force: true });
      }
      moved.push(f);
    } catch {
      // Could not be moved (already gone): nothing to report for it.
    }
  }
  return moved;
}

function isSymlink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The part of a workspace-relative glob before its first wildcard segment (`a/b/*.yml` → `a/b`). */
export function literalPrefix(pattern: string): string {
  const clean = pattern.replace(/^\.\//, "").replace(/\/+$/, "");
  const scan = picomatch.scan(clean);
  return (scan.isGlob ? scan.base : clean).replace(/\/+$/, "");
}

/**
 * Counts one more box using the mount point `dir`; creates it first when `create` (the real
 * workspace; in capture mode bwrap creates it in the overlay's upper directory).
 */
function acquireMountpoint(dir: string, create: boolean): void {
  const counts = state().mountpoints;
  const n = counts.get(dir) ?? 0;
  if (n === 0 && create) {
    try {
      fs.mkdirSync(dir, { mode: 0o755 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
  }
  counts.set(dir, n + 1);
}

async function releaseMountpoint(dir: string): Promise<void> {
  const counts = state().mountpoints;
  const n = (counts.get(dir) ?? 1) - 1;
  if (n > 0) {
    counts.set(dir, n);
    return;
  }
  counts.delete(dir);
  await fsp.rmdir(dir).catch(() => {}); // not empty (someone outside wrote there) or gone: leave it
}

/** An empty directory to mount over missing protected paths (under the data directory, never visible itself). */
async function ensureEmptyDir(): Promise<string> {
  const dir = path.join(getConfig().dataDir, "sandbox", "empty");
  await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
  return dir;
}
