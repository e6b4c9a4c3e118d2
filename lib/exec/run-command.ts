import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { ToolError } from "@/lib/errors";
import { HeadTailBuffer } from "@/lib/exec/output-buffer";

/**
 * Runs one shell command for `run_command` (DESIGN.md tools table): `bash -c COMMAND` in its own
 * process group (`detached`, so a timeout, an abort or the server's shutdown kills the command
 * and everything it started, grandchildren included), stdin closed (`/dev/null`), an explicit
 * environment (lib/exec/child-env.ts), optional resource limits, and output captured as bytes with
 * a memory bound (head and tail kept, the original length counted).
 *
 * Background jobs do not outlive their command: when bash exits, whatever is left in its process
 * group is terminated too. (A program that leaves the group on purpose, e.g. with `setsid`,
 * escapes this; the policy asks before such commands run.)
 */

/**
 * Resource limits applied with bash's `ulimit` before the command starts (bash(1) "ulimit";
 * setrlimit(2)). Each is optional. Notes: `processes` counts every process of the user, not only
 * this command's, and is not enforced for root; `addressSpaceBytes` also limits virtual
 * reservations (JVMs and Node reserve far more than they use), so keep it generous.
 */
export interface ResourceLimits {
  /** CPU time per process (seconds): SIGXCPU, then SIGKILL. */
  cpuSeconds?: number;
  /** Virtual memory per process (bytes): allocations beyond it fail. */
  addressSpaceBytes?: number;
  /** Processes of the user (RLIMIT_NPROC): fork fails beyond it. */
  processes?: number;
  /** Largest file a process may write (bytes): SIGXFSZ. */
  fileSizeBytes?: number;
}

/** Which limit stopped the command. */
export type LimitName = "cpu_seconds" | "file_size";

/** One command to run (see `runCommand`). */
export interface RunCommandOptions {
  /** The command line, run as `bash -c command`. */
  command: string;
  /** Absolute working directory (fenced by the caller). */
  cwd: string;
  /** Wall-clock limit (ms); the whole process group is terminated when it passes. */
  timeoutMs: number;
  /** Characters (UTF-16 code units) of stdout + stderr returned; the rest is cut from the middle. */
  maxOutputChars: number;
  /** The complete child environment (nothing is inherited). */
  env: Record<string, string>;
  /** Aborting terminates the command like a timeout. */
  signal?: AbortSignal;
  limits?: ResourceLimits;
  /** Time between SIGTERM and SIGKILL (ms, default 2000). */
  killGraceMs?: number;
}

/** What a finished command returns (the `data` of run_command). */
export interface RunResult {
  /** Exit status, or null when a signal ended the shell. */
  exit_code: number | null;
  /** Name of the signal that ended the shell (`SIGKILL`), or null. */
  signal: string | null;
  timed_out: boolean;
  /** True when the call was aborted (server shutdown, client gone). */
  aborted: boolean;
  /** The resource limit that stopped the command, or null. */
  limit: LimitName | null;
  duration_ms: number;
  stdout: string;
  stderr: string;
  /** True when stdout or stderr was cut (the text then holds `[… N bytes omitted …]`). */
  truncated: boolean;
  /** Bytes each stream produced in total. */
  original_length: { stdout: number; stderr: number };
}

/** A command that is still running, for shutdown. */
interface Running {
  pid: number;
  done: Promise<void>;
}

// On globalThis: Next.js may load this module once per route bundle, and the shutdown hook
// (instrumentation) must see the commands every route started.
const globalForRunning = globalThis as unknown as { agentReachRunning?: Set<Running> };
const running: Set<Running> = (globalForRunning.agentReachRunning ??= new Set<Running>());
let exitHookInstalled = false;

const DEFAULT_KILL_GRACE_MS = 2000;
/** How long output is still read after bash exits and its leftover jobs were told to stop. */
const DRAIN_MS = 500;

/** bash to run commands with: the system's, not whatever `bash` is first on the gateway's PATH. */
const BASH = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"].find((p) => fs.existsSync(p)) ?? "bash";

/**
 * Runs `options.command` and resolves when it has finished (or was stopped).
 * @returns exit status or signal, timing, and capped stdout/stderr (see `RunResult`)
 * @throws ToolError `command_failed_to_start` when bash cannot be started (missing cwd,
 *   missing bash, no processes left); a command that starts and fails is a result, not an error
 */
export async function runCommand(options: RunCommandOptions): Promise<RunResult> {
  if (options.signal?.aborted) throw new ToolError("command_failed_to_start", "The call was aborted before the command started.", { reason: "aborted" });
  const started = performance.now();
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const perStreamBytes = Math.max(1024, options.maxOutputChars * 3); // UTF-8: at most 3 bytes per UTF-16 unit
  const out = new HeadTailBuffer(perStreamBytes, perStreamBytes);
  const err = new HeadTailBuffer(perStreamBytes, perStreamBytes);

  let child: ChildProcess;
  try {
    child = spawn(BASH, bashArgs(options.command, options.limits), {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv, // complete by design: nothing is inherited
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
  } catch (e) {
    throw startError(e, options.cwd);
  }

  return new Promise<RunResult>((resolve, reject) => {
    let timedOut = false;
    let aborted = false;
    let weKilled = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    let resolveDone!: () => void;
    const entry: Running = { pid: child.pid ?? -1, done: new Promise<void>((r) => (resolveDone = r)) };

    const stop = (): void => {
      weKilled = true;
      killGroup(child, "SIGTERM");
      timers.push(setTimeout(() => killGroup(child, "SIGKILL"), grace));
    };
    const onAbort = (): void => {
      aborted = true;
      stop();
    };
    const cleanup = (): void => {
      timers.forEach(clearTimeout);
      options.signal?.removeEventListener("abort", onAbort);
      running.delete(entry);
      resolveDone();
    };
    const finish = (): void => {
      if (settled || !exit) return;
      settled = true;
      cleanup();
      const stdout = out.render(budgetFor(out.total, err.total, options.maxOutputChars));
      const stderr = err.render(options.maxOutputChars - budgetFor(out.total, err.total, options.maxOutputChars));
      resolve({
        exit_code: exit.code,
        signal: exit.signal,
        timed_out: timedOut,
        aborted,
        limit: limitOf(exit, options.limits, weKilled),
        duration_ms: Math.round(performance.now() - started),
        stdout: stdout.text,
        stderr: stderr.text,
        truncated: stdout.truncated || stderr.truncated,
        original_length: { stdout: out.total, stderr: err.total },
      });
    };

    child.stdout!.on("data", (c: Buffer) => out.push(c));
    child.stderr!.on("data", (c: Buffer) => err.push(c));
    child.on("error", (e) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(startError(e, options.cwd));
    });
    child.on("exit", (code, signal) => {
      exit = { code, signal };
      // Whatever the command left running in its group (background jobs) stops with it.
      killGroup(child, "SIGTERM");
      timers.push(setTimeout(() => killGroup(child, "SIGKILL"), grace));
      timers.push(
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish();
        }, grace + DRAIN_MS),
      );
    });
    child.on("close", finish);

    if (child.pid !== undefined) {
      running.add(entry);
      installExitHook();
    }
    timers.push(
      setTimeout(() => {
        timedOut = true;
        stop();
      }, options.timeoutMs),
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Terminates every command still running (server shutdown): SIGTERM to each process group, then
 * SIGKILL after `graceMs`.
 * @returns how many commands were running; resolves when they have all exited
 */
export async function killAllRunningCommands(graceMs = DEFAULT_KILL_GRACE_MS): Promise<number> {
  const all = [...running];
  for (const r of all) signalGroup(r.pid, "SIGTERM");
  const timer = setTimeout(() => all.forEach((r) => signalGroup(r.pid, "SIGKILL")), graceMs);
  await Promise.all(all.map((r) => r.done));
  clearTimeout(timer);
  return all.length;
}

/** How many commands are running now (for health checks and tests). */
export function runningCommandCount(): number {
  return running.size;
}

/** `bash -c command`, or with limits: a first bash sets them, then execs the command's bash. */
function bashArgs(command: string, limits: ResourceLimits | undefined): string[] {
  const settings: string[] = [];
  if (limits?.cpuSeconds !== undefined) settings.push(`ulimit -t ${Math.max(1, Math.ceil(limits.cpuSeconds))}`);
  if (limits?.addressSpaceBytes !== undefined) settings.push(`ulimit -v ${Math.max(1, Math.floor(limits.addressSpaceBytes / 1024))}`);
  if (limits?.processes !== undefined) settings.push(`ulimit -u ${Math.max(1, Math.floor(limits.processes))}`);
  if (limits?.fileSizeBytes !== undefined) settings.push(`ulimit -f ${Math.max(1, Math.floor(limits.fileSizeBytes / 1024))}`);
  if (settings.length === 0) return ["-c", command];
  // The command travels as "$1", never spliced into the script.
  return ["-c", `${settings.join(" && ")} || exit 126; exec ${BASH} -c "$1"`, "agent-reach-limits", command];
}

/** Splits the character budget: each stream gets what it needs, up to half when both are long. */
function budgetFor(outBytes: number, errBytes: number, max: number): number {
  return Math.min(outBytes, max - Math.min(errBytes, Math.floor(max / 2)));
}

function limitOf(exit: { code: number | null; signal: NodeJS.Signals | null }, limits: ResourceLimits | undefined, weKilled: boolean): LimitName | null {
  if (!limits) return null;
  const sigxcpu = 128 + os.constants.signals.SIGXCPU;
  const sigxfsz = 128 + os.constants.signals.SIGXFSZ;
  if (exit.signal === "SIGXCPU" || exit.code === sigxcpu) return "cpu_seconds";
  if (exit.signal === "SIGXFSZ" || exit.code === sigxfsz) return "file_size";
  // The kernel sends SIGKILL at the hard CPU limit.
  if (exit.signal === "SIGKILL" && !weKilled && limits.cpuSeconds !== undefined) return "cpu_seconds";
  return null;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined) signalGroup(child.pid, signal);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/** On process exit (any cause), kill what is still running; the hook must be synchronous. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const r of running) signalGroup(r.pid, "SIGKILL");
  });
}

function startError(e: unknown, cwd: string): ToolError {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const reason = code === "ENOENT" ? (fs.existsSync(cwd) ? "shell_not_found" : "cwd_not_found") : (code ?? "spawn_failed").toLowerCase();
  return new ToolError("command_failed_to_start", `The command could not be started (${code ?? "error"}).`, { reason, cwd }, { cause: e });
}
