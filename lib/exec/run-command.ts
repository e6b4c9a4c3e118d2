import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import type { Readable, Writable } from "node:stream";
import { ERROR_REASONS, ToolError, type ErrorReason } from "@/lib/errors";
import { BOX_STARTED, CommandState, SETUP_FAILED } from "@/lib/exec/command-state";
import path from "node:path";
import { CommandCgroup, probeCgroups, releaseCgroups, type CgroupSupport, type ControllerHome } from "@/lib/exec/cgroup";
import { acquireCommandSlot, type CommandSlot } from "@/lib/exec/concurrency";
import { HeadTailBuffer } from "@/lib/exec/output-buffer";
import { BOX_ARGS_FD, prepareBox, rescanSecretSystemPaths, type BoxPlan, type RemovedEntry, type SandboxSpec } from "@/lib/exec/sandbox";
import { isInside } from "@/lib/workspace/fence";

/**
 * Runs one shell command for `run_command` (lib/tools/run-command.ts): `bash -c COMMAND` in its own
 * process group (`detached`, so a timeout, an abort or the server's shutdown kills the command
 * and everything it started, grandchildren included), stdin closed (`/dev/null`), an explicit
 * environment (lib/exec/child-env.ts), optional resource limits, and output captured as bytes with
 * a memory bound (head and tail kept, the original length counted).
 *
 * Background jobs do not outlive their command: when bash exits, whatever is left in its process
 * group, and in its cgroup where there is one, is terminated too. In the sandbox
 * (lib/exec/sandbox.ts) the command is also alone in its own PID namespace, which the kernel
 * empties when the command's shell ends, so even `setsid` daemons end with it.
 */

/**
 * Operating-system limits of one command (null or absent = no limit). How each is enforced
 * (see `containmentStatus`):
 * - `cpuSeconds`, `fileSizeBytes`, `addressSpaceBytes`: setrlimit(2) in the command's first
 *   process (bash `ulimit`), inherited by everything it starts; per process.
 * - `memoryBytes`, `processes`: the command's own cgroup (lib/exec/cgroup.ts), for the whole
 *   command. Without a usable cgroup, `processes` falls back to RLIMIT_NPROC (not for root, whom
 *   the kernel exempts) and `memoryBytes` is not enforced.
 */
export interface ResourceLimits {
  /** CPU time per process (s): SIGXCPU, then SIGKILL 5 s later. */
  cpuSeconds?: number | null;
  /** Memory of the whole command (bytes): the kernel's OOM killer stops it past this. */
  memoryBytes?: number | null;
  /** Tasks (processes + threads) of the whole command: forks beyond it fail, and the command is stopped. */
  processes?: number | null;
  /** Largest file a process may write (bytes): SIGXFSZ. */
  fileSizeBytes?: number | null;
  /** Virtual memory per process (bytes): allocations beyond it fail. Off by default (lib/exec/limits.ts). */
  addressSpaceBytes?: number | null;
}

/** Which limit stopped the command (the result's `limit`). */
export type LimitName = "memory" | "cpu" | "processes" | "file_size" | "time";

/** The limits a command ran under, as enforced on this machine (null = not limited). */
export interface AppliedLimits {
  cpu_seconds: number | null;
  memory_bytes: number | null;
  processes: number | null;
  file_size_bytes: number | null;
  address_space_bytes: number | null;
  timeout_ms: number;
  max_output_chars: number;
}

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
  /** Scheduling niceness 0–19 of the command (default 0: as the gateway). */
  nice?: number;
  /** "auto" (default): use cgroups where this machine allows; "off": rlimits only. */
  cgroups?: "auto" | "off";
  /** Time between SIGTERM and SIGKILL (ms, default 2000). */
  killGraceMs?: number;
  /** Run inside this sandbox (lib/exec/sandbox.ts); absent: unboxed, with the gateway's rights. */
  sandbox?: Omit<SandboxSpec, "cwd" | "workspaceSource" | "mountpointRoot">;
  /**
   * Overlay capture (needs `sandbox` and root): the command sees an overlayfs view of the
   * workspace, lower = the real workspace, upper = `${dir}/upper`, work = `${dir}/work` (both
   * created here; `dir` must be outside the workspace, e.g. under the data directory). The real
   * workspace is left untouched; the caller reads the change set from `${dir}/upper` (whiteouts
   * are 0/0 character devices, opaque directories carry `trusted.overlay.opaque=y`).
   * `metacopy` and `redirect_dir` are off, so a changed file is always whole in the upper
   * directory and a renamed directory is a copy plus a whiteout.
   */
  capture?: { dir: string };
  /** At most this many commands run at once (process-wide); more wait their turn, within `timeoutMs`. */
  maxConcurrent?: number;
  /** Called once when the command has to wait for a slot (`ahead`: commands before it). */
  onQueued?: (ahead: number) => void;
}

/** How the command was boxed (the call's record of its sandbox). */
export interface SandboxRecord {
  /** True when the command ran inside the sandbox. */
  boxed: boolean;
  /** True when it had the host's network (a rule's or a reviewer's grant). */
  network: boolean;
  /** Workspace-relative paths that were read-only inside. */
  read_only: string[];
  /**
   * Workspace-relative secret paths shown empty and read-only inside (lib/exec/sandbox.ts; at most
   * 50 listed, `masked_total` counts them all). Absent when nothing was masked.
   */
  masked?: string[];
  masked_total?: number;
  /** True when it ran on an overlay view of the workspace (`capture`). */
  capture: boolean;
  /** Why it ran without the sandbox (set by the tool when `boxed` is false). */
  unboxed_reason?: string;
  /**
   * Git files the command created that would make git take configuration or code from elsewhere,
   * moved out of the workspace when it ended (only when it ran directly on the workspace; on the
   * overlay view they are blocked inside the box, or held with the change set).
   */
  removed?: RemovedEntry[];
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
  /** The limit that stopped the command ("time" when the wall-clock timeout did), or null. */
  limit: LimitName | null;
  /** The limits the command ran under. */
  limits: AppliedLimits;
  duration_ms: number;
  stdout: string;
  stderr: string;
  /** True when stdout or stderr was cut (the text then holds `[… N bytes omitted …]`). */
  truncated: boolean;
  /** Bytes each stream produced in total. */
  original_length: { stdout: number; stderr: number };
  /** How long the command waited for a free slot before it started (ms; 0 when none was needed). */
  queued_ms: number;
  /** The box it ran in. */
  sandbox: SandboxRecord;
}

/** A command that is still running, for shutdown. */
interface Running {
  pid: number;
  cgroup: CommandCgroup | null;
  done: Promise<void>;
}

const running = new Set<Running>();
/**
 * Errors of a box bwrap could not build (the command never started: safe to try again), with the
 * path bwrap named, if any.
 */
const boxNeverStarted = new WeakMap<object, string | null>();
/** Tries to build a box before its error stands (see `runCommand`). */
const BOX_ATTEMPTS = 4;
let exitHookInstalled = false;

const DEFAULT_KILL_GRACE_MS = 2000;
/** How long output is still read after bash exits and its leftover jobs were told to stop. */
const DRAIN_MS = 500;
/** How often the cgroup's counters are read while a command runs (ms). */
const WATCH_MS = 200;
/** Seconds between the soft CPU limit (SIGXCPU) and the hard one (SIGKILL). */
const CPU_HARD_EXTRA_S = 5;

/** bash to run commands with: the system's, not whatever `bash` is first on the gateway's PATH. */
const BASH = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"].find((p) => fs.existsSync(p)) ?? "bash";
/** coreutils nice(1), to lower the command's priority (bash has no builtin for it). */
const NICE = ["/usr/bin/nice", "/bin/nice"].find((p) => fs.existsSync(p)) ?? null;
/** util-linux unshare(1), for the private mount namespace of capture mode. */
const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find((p) => fs.existsSync(p)) ?? null;

/**
 * Runs `options.command` and resolves when it has finished (or was stopped).
 *
 * Containment: the command's first process (a small bash wrapper) joins the command's cgroup,
 * sets the rlimits, lowers its priority (niceness and autogroup) and marks itself the first
 * victim of a machine-wide OOM (`oom_score_adj` 1000), then execs `bash -c command`. While it
 * runs, the cgroup's counters are read every 200 ms: when the kernel refused a fork (pids.max)
 * or OOM-killed a process (memory limit), the whole command is killed at once and `limit` says
 * which. The kernel enforces every limit; the gateway only reads its counters.
 *
 * @returns exit status or signal, the limit that stopped it, timing, and capped stdout/stderr
 *   (see `RunResult`)
 * @throws ToolError `command_failed_to_start` when bash cannot be started (missing cwd,
 *   missing bash, no processes left) or a limit cannot be set (`detail.reason` "limits_failed");
 *   a command that starts and fails is a result, not an error
 */
export async function runCommand(options: RunCommandOptions): Promise<RunResult> {
  if (options.signal?.aborted) throw new ToolError("command_failed_to_start", "The call was aborted before the command started.", { reason: "aborted" });
  const queuedAt = performance.now();
  let slot: CommandSlot | null = null;
  if (options.maxConcurrent) {
    slot = await acquireCommandSlot(options.maxConcurrent, { timeoutMs: options.timeoutMs, signal: options.signal, onWait: options.onQueued });
    if (!slot) {
      if (options.signal?.aborted) throw new ToolError("command_failed_to_start", "The call was aborted while it waited for a free command slot.", { reason: "aborted" });
      return neverStarted(options, Math.round(performance.now() - queuedAt));
    }
  }
  try {
    const waited = slot?.waitedMs ?? 0;
    for (let attempt = 1; ; attempt++) {
      try {
        // The timeout counts from the call, less a slot's wait; a try whose box bwrap could not
        // build ran nothing, so it does not count (it takes milliseconds, and its rescan
        // at most a few seconds).
        return await runInSlot({ ...options, timeoutMs: Math.max(1, options.timeoutMs - waited) }, waited);
      } catch (e) {
        // bwrap could not build the box, so nothing of the command ran. The usual cause is a
        // masked system file that vanished (or changed type) after the box was planned: scan
        // again, plan again. A file that keeps flapping may need a few tries.
        const failed = boxNeverStarted.get(e as object);
        if (failed === undefined || attempt >= BOX_ATTEMPTS) throw e;
        await rescanSecretSystemPaths(failed);
      }
    }
  } finally {
    slot?.release();
  }
}

/** The result of a command whose timeout passed while it waited for a slot (it never ran). */
function neverStarted(options: RunCommandOptions, waitedMs: number): RunResult {
  const note = `[agent-reach] the command did not start: it waited ${waitedMs} ms for a free command slot (at most ${options.maxConcurrent} run at once) and its timeout passed.\n`;
  return {
    exit_code: null,
    signal: null,
    timed_out: true,
    aborted: false,
    limit: "time",
    limits: { cpu_seconds: null, memory_bytes: null, processes: null, file_size_bytes: null, address_space_bytes: null, timeout_ms: options.timeoutMs, max_output_chars: options.maxOutputChars },
    duration_ms: 0,
    stdout: "",
    stderr: note,
    truncated: false,
    original_length: { stdout: 0, stderr: Buffer.byteLength(note) },
    queued_ms: waitedMs,
    sandbox: { boxed: !!options.sandbox, network: !!options.sandbox?.network, read_only: [], capture: !!options.capture },
  };
}

async function runInSlot(options: RunCommandOptions, queuedMs: number): Promise<RunResult> {
  const started = performance.now();
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const perStreamBytes = Math.max(1024, options.maxOutputChars * 3); // UTF-8: at most 3 bytes per UTF-16 unit
  const out = new HeadTailBuffer(perStreamBytes, perStreamBytes);
  const err = new HeadTailBuffer(perStreamBytes, perStreamBytes);
  const plan = planLimits(options.limits ?? {}, options.cgroups ?? "auto");
  const box = await buildBox(options);

  let cgroup: CommandCgroup | null;
  try {
    cgroup = createCgroup(plan);
  } catch (e) {
    await box?.plan.release();
    throw e;
  }

  let child: ChildProcess;
  try {
    // The command runs in the workspace, not a file of this project: keep Turbopack's output
    // tracing from including the whole project for it.
    child = spawn(/*turbopackIgnore: true*/ BASH, wrapperArgs(options.command, plan, options.nice ?? 0, cgroup, box), {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv, // complete by design: nothing is inherited
      detached: true,
      // fd 5 (BOX_ARGS_FD): the box's options that only bytes can spell, read by bwrap to the end.
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe", ...(box?.plan.argsData ? (["pipe"] as const) : [])],
      windowsHide: true,
    });
    const argsData = box?.plan.argsData;
    if (argsData) {
      const pipe = (child.stdio as unknown as Writable[])[BOX_ARGS_FD];
      pipe.on("error", () => {}); // bwrap failed before reading: its own error is reported
      pipe.end(argsData);
    }
  } catch (e) {
    await cgroup?.remove();
    await box?.plan.release();
    throw startError(e, options.cwd);
  }
  const sandboxRecord: SandboxRecord = {
    boxed: !!box,
    network: !!options.sandbox?.network,
    read_only: box?.plan.readOnly ?? [],
    ...(box && box.plan.masked.length > 0 && { masked: box.plan.masked.slice(0, 50), masked_total: box.plan.masked.length }),
    capture: !!options.capture,
  };

  return new Promise<RunResult>((resolve, reject) => {
    const state = new CommandState();
    const timers: NodeJS.Timeout[] = [];
    let resolveDone!: () => void;
    const entry: Running = { pid: child.pid ?? -1, cgroup, done: new Promise<void>((r) => (resolveDone = r)) };

    const signalAll = (signal: NodeJS.Signals): void => {
      killGroup(child, signal);
      cgroup?.signal(signal);
    };
    /** SIGTERM now, SIGKILL after the grace period (timeout, abort). */
    const stopGently = (): void => {
      signalAll("SIGTERM");
      timers.push(setTimeout(() => signalAll("SIGKILL"), grace));
    };
    const onAbort = (): void => {
      state.abort();
      stopGently();
    };
    const watcher = cgroup
      ? setInterval(() => {
          // Once stopped, keep killing: a fork bomb's last forks can race a kill.
          if (state.killedFor) {
            if (cgroup.isPopulated()) cgroup.signal("SIGKILL");
            return;
          }
          const ev = cgroup.events();
          const limit = ev.pidsRefused > 0 ? "processes" : ev.oomKills > 0 ? "memory" : null;
          if (limit && state.hitLimit(limit)) signalAll("SIGKILL"); // a fork bomb or a hog gets no grace period
        }, WATCH_MS)
      : null;
    const cleanup = async (): Promise<{ pidsRefused: number; oomKills: number }> => {
      timers.forEach(clearTimeout);
      if (watcher) clearInterval(watcher);
      options.signal?.removeEventListener("abort", onAbort);
      const events = cgroup?.events() ?? { pidsRefused: 0, oomKills: 0 };
      await cgroup?.remove();
      const removed = (await box?.plan.release()) ?? [];
      if (removed.length > 0) {
        sandboxRecord.removed = removed;
        err.push(Buffer.from(`\n[agent-reach] moved out of the workspace after the command: ${removed.map((r) => `${r.path} (${r.why})`).join("; ")}.\n`));
      }
      running.delete(entry);
      resolveDone();
      return events;
    };
    const finish = async (): Promise<void> => {
      const exit = state.exit;
      if (!exit || !state.settleExited()) return;
      const events = await cleanup();
      const ending = state.ending(!!box);
      if (ending.kind === "setup_failed") {
        const { problem, boxStep } = ending;
        reject(
          new ToolError(
            "command_failed_to_start",
            boxStep ? `The sandbox could not be set up: ${problem.slice(8).trim()}.` : `A resource limit could not be set: ${problem.trim()}.`,
            { reason: boxStep ? "sandbox_failed" : "limits_failed" },
          ),
        );
        return;
      }
      if (ending.kind === "box_failed") {
        // bwrap itself failed (a mount, a namespace): nothing of the command ran.
        const why = err.render(2000).text.trim().split("\n").slice(-3).join(" ") || `bwrap exited with ${exit.code ?? exit.signal}`;
        const error = new ToolError("command_failed_to_start", `The sandbox could not be set up: ${why}`, { reason: "sandbox_failed" });
        boxNeverStarted.set(error, /^bwrap: Can't (?:create file at|mkdir(?: parents for)?|bind mount \S+ on|mount tmpfs on|remount readonly on|get type of source|find source path) (\/.*?): /m.exec(err.render(2000).text)?.[1] ?? null);
        reject(error);
        return;
      }
      const stdout = out.render(budgetFor(out.total, err.total, options.maxOutputChars));
      const stderr = err.render(options.maxOutputChars - budgetFor(out.total, err.total, options.maxOutputChars));
      const { timedOut, aborted, weKilled } = state;
      resolve({
        exit_code: exit.code,
        signal: exit.signal,
        timed_out: timedOut,
        aborted,
        limit: state.killedFor ?? limitOf({ exit, events, limits: plan.applied, timedOut, aborted, weKilled }),
        limits: { ...plan.applied, timeout_ms: options.timeoutMs, max_output_chars: options.maxOutputChars },
        duration_ms: Math.round(performance.now() - started),
        stdout: stdout.text,
        stderr: stderr.text,
        truncated: stdout.truncated || stderr.truncated,
        original_length: { stdout: out.total, stderr: err.total },
        queued_ms: queuedMs,
        sandbox: sandboxRecord,
      });
    };

    child.stdout!.on("data", (c: Buffer) => out.push(c));
    child.stderr!.on("data", (c: Buffer) => err.push(c));
    (child.stdio[3] as Readable).on("data", (c: Buffer) => state.reportSetup(c.toString("utf8")));
    (child.stdio[4] as Readable).on("data", (c: Buffer) => state.reportBox(c.toString("utf8")));
    child.on("error", (e) => {
      if (!state.settleFailed()) return;
      void cleanup().then(() => reject(startError(e, options.cwd)));
    });
    child.on("exit", (code, signal) => {
      state.exited({ code, signal });
      // Whatever the command left running (background jobs, daemons in its cgroup) stops with it.
      signalAll(state.killedFor ? "SIGKILL" : "SIGTERM");
      timers.push(setTimeout(() => signalAll("SIGKILL"), grace));
      timers.push(
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          void finish();
        }, grace + DRAIN_MS),
      );
    });
    child.on("close", () => void finish());

    if (child.pid !== undefined) {
      running.add(entry);
      installExitHook();
    }
    timers.push(
      setTimeout(() => {
        state.timeOut();
        stopGently();
      }, options.timeoutMs),
    );
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Terminates every command still running (server shutdown): SIGTERM to each process group and
 * cgroup, then SIGKILL after `graceMs`.
 * @returns how many commands were running; resolves when they have all exited
 */
export async function killAllRunningCommands(graceMs = DEFAULT_KILL_GRACE_MS): Promise<number> {
  const all = [...running];
  for (const r of all) signalCommand(r, "SIGTERM");
  const timer = setTimeout(() => all.forEach((r) => signalCommand(r, "SIGKILL")), graceMs);
  await Promise.all(all.map((r) => r.done));
  clearTimeout(timer);
  return all.length;
}

/** How many commands are running now (for health checks and tests). */
export function runningCommandCount(): number {
  return running.size;
}

/** How each kind of limit is enforced on this machine (for health checks, logs and tests). */
export interface ContainmentStatus {
  memory: "cgroup" | "none";
  processes: "cgroup" | "rlimit" | "none";
  cpu: "rlimit";
  file_size: "rlimit";
  /** The cgroup directories commands are created under, e.g. `{pids: "v1 /sys/fs/cgroup/pids/agent-reach-<pid>"}`; it exists while a command runs. */
  cgroups: { pids: string | null; memory: string | null };
  /** Why a cgroup controller is not used, for an operator. */
  problems: string[];
}

/**
 * Probes (once per mode, then cached) what this machine allows and says how each limit will be
 * enforced: cgroups when available; processes by RLIMIT_NPROC when not root; otherwise not at all.
 */
export function containmentStatus(mode: "auto" | "off" = "auto"): ContainmentStatus {
  const support = cgroupSupport(mode);
  const where = (h: ControllerHome | null) => (h ? `v${h.version} ${h.parent}` : null);
  return {
    memory: support.memory ? "cgroup" : "none",
    processes: support.pids ? "cgroup" : isRoot() ? "none" : "rlimit",
    cpu: "rlimit",
    file_size: "rlimit",
    cgroups: { pids: where(support.pids), memory: where(support.memory) },
    problems: support.problems,
  };
}

const supportByMode = new Map<"auto" | "off", CgroupSupport>();

function cgroupSupport(mode: "auto" | "off"): CgroupSupport {
  let support = supportByMode.get(mode);
  if (!support) {
    support = mode === "off" ? { pids: null, memory: null, problems: ["cgroups turned off (AGENT_REACH_CMD_CGROUP=off)"] } : probeCgroups();
    if (mode === "auto" && support.problems.length > 0) {
      console.warn(`[agent-reach] run_command containment: ${support.problems.join("; ")}. ${isRoot() ? "Running as root: processes are not limited without a pids cgroup." : "Processes fall back to RLIMIT_NPROC."}`);
    }
    supportByMode.set(mode, support);
    installExitHook(); // removes this gateway's cgroup directories when it exits
  }
  return support;
}

/** What will be enforced, and how, for one command. */
interface LimitPlan {
  support: CgroupSupport;
  applied: Omit<AppliedLimits, "timeout_ms" | "max_output_chars">;
  /** pids.max of the command's cgroup (null: no limit, or no pids cgroup). */
  cgroupProcesses: number | null;
  /** RLIMIT_NPROC to set (the fallback when there is no pids cgroup and we are not root). */
  nproc: number | null;
}

function planLimits(limits: ResourceLimits, mode: "auto" | "off"): LimitPlan {
  const support = cgroupSupport(mode);
  const hard = hardLimits();
  // Absent, null and non-positive all mean "no limit"; a non-root child cannot exceed our hard limits.
  const clamp = (v: number | null | undefined, max: number | null) => (!v || v <= 0 ? null : max === null || isRoot() ? v : Math.min(v, max));
  const processes = clamp(limits.processes, null);
  const nproc = processes !== null && !support.pids && !isRoot() ? clamp(processes + currentTaskCount(), hard.nproc) : null;
  return {
    support,
    applied: {
      cpu_seconds: clamp(limits.cpuSeconds, hard.cpu === null ? null : Math.max(1, hard.cpu - CPU_HARD_EXTRA_S)),
      memory_bytes: support.memory ? clamp(limits.memoryBytes, null) : null,
      processes: support.pids || nproc !== null ? processes : null,
      file_size_bytes: clamp(limits.fileSizeBytes, hard.fsize),
      address_space_bytes: clamp(limits.addressSpaceBytes, hard.as),
    },
    cgroupProcesses: support.pids ? processes : null,
    nproc,
  };
}

function createCgroup(plan: LimitPlan): CommandCgroup | null {
  try {
    return CommandCgroup.create(plan.support, { memoryBytes: plan.applied.memory_bytes, processes: plan.cgroupProcesses });
  } catch (e) {
    throw new ToolError("command_failed_to_start", `The command's cgroup could not be set up (${(e as NodeJS.ErrnoException).code ?? "error"}).`, { reason: "limits_failed" }, { cause: e });
  }
}

/**
 * `bash -c WRAPPER agent-reach COMMAND PROCS_FILE…`: the wrapper joins the cgroup, sets the
 * rlimits and priority, closes fd 3 and execs `bash -c COMMAND`. The command travels as "$1",
 * never spliced into the script. A step that must not fail reports on fd 3 and exits 125.
 */
function wrapperArgs(command: string, plan: LimitPlan, nice: number, cgroup: CommandCgroup | null, box: PreparedBox | null): string[] {
  const must = (step: string, what: string) => `{ ${step}; } 2>/dev/null || { echo ${JSON.stringify(what)} >&3; exit ${SETUP_FAILED}; }`;
  const a = plan.applied;
  const procs = cgroup?.procsFiles ?? [];
  const lines = [
    `for f in "\${@:3:$2}"; do { echo $$ > "$f"; } 2>/dev/null || { echo "could not join cgroup $f" >&3; exit ${SETUP_FAILED}; }; done`,
    "ulimit -c 0 2>/dev/null", // SIGXCPU and SIGXFSZ would otherwise dump core into the workspace
  ];
  if (a.cpu_seconds !== null) {
    const s = Math.max(1, Math.ceil(a.cpu_seconds));
    lines.push(must(`ulimit -S -t ${s} && ulimit -H -t ${s + CPU_HARD_EXTRA_S}`, `ulimit -t ${s}`));
  }
  if (a.file_size_bytes !== null) lines.push(must(`ulimit -f ${kib(a.file_size_bytes)}`, `ulimit -f ${kib(a.file_size_bytes)}`));
  if (a.address_space_bytes !== null) lines.push(must(`ulimit -v ${kib(a.address_space_bytes)}`, `ulimit -v ${kib(a.address_space_bytes)}`));
  if (plan.nproc !== null) lines.push(must(`ulimit -u ${plan.nproc}`, `ulimit -u ${plan.nproc}`));
  // Best effort: a machine-wide OOM takes the command before the gateway; the scheduler favours
  // the gateway (autogroup nice applies between sessions, and the command is a session of its own).
  lines.push("echo 1000 2>/dev/null > /proc/self/oom_score_adj");
  if (nice > 0) lines.push(`echo ${nice} 2>/dev/null > /proc/self/autogroup`);
  const niceArgv = nice > 0 && NICE ? [NICE, "-n", String(nice)] : [];
  if (!box) {
    lines.push("exec 3>&- 4>&-");
    return ["-c", [...lines, `exec ${niceArgv.join(" ")} ${BASH} -c "$1"`].join("\n"), "agent-reach", command, String(procs.length), ...procs];
  }
  // The box: [overlay stage] bwrap … -- bash -c 'announce on fd 4; exec bash -c "$1"' box "$1".
  // Limits, cgroup and priority are set above, before bwrap: the box has no /sys/fs/cgroup.
  if (!box.capture) lines.push("exec 3>&-");
  lines.push(`box=("\${@:$((3 + $2))}")`);
  lines.push(`exec ${niceArgv.join(" ")} "\${box[@]}" ${BASH} -c 'echo ${BOX_STARTED} >&4; exec 4>&-; exec ${BASH} -c "$1"' agent-reach-box "$1"`);
  const prefix = box.capture ? [...overlayStage(box.capture), ...box.plan.argv] : box.plan.argv;
  return ["-c", lines.join("\n"), "agent-reach", command, String(procs.length), ...procs, ...prefix];
}

/** A box prepared for one command. */
interface PreparedBox {
  plan: BoxPlan;
  /** The overlay of capture mode, mounted in a private mount namespace just before bwrap. */
  capture: { lower: string; upper: string; work: string; merged: string } | null;
}

/**
 * `unshare --mount --propagation private bash -c STAGE …`: mounts the overlay on `merged` in a
 * mount namespace of the command's own (so nobody else sees it and it vanishes with the command),
 * then execs bwrap, which binds `merged` at the workspace's path.
 */
function overlayStage(o: NonNullable<PreparedBox["capture"]>): string[] {
  const stage = [
    `mount -t overlay agent-reach-capture -o "lowerdir=$1,upperdir=$2,workdir=$3,metacopy=off,redirect_dir=off,index=off,xino=off" "$4" 2>/dev/null || { echo "sandbox: the overlay could not be mounted on $4" >&3; exit ${SETUP_FAILED}; }`,
    "exec 3>&-",
    "shift 4",
    'exec "$@"',
  ].join("\n");
  return [UNSHARE ?? "unshare", "--mount", "--propagation", "private", BASH, "-c", stage, "agent-reach-capture", o.lower, o.upper, o.work, o.merged];
}

/** Builds the command's box (and the capture directories), or null for an unboxed run. */
async function buildBox(options: RunCommandOptions): Promise<PreparedBox | null> {
  if (!options.sandbox) {
    if (options.capture) throw new ToolError("command_failed_to_start", "Capture mode needs the sandbox.", { reason: "capture_needs_sandbox" });
    return null;
  }
  const ws = options.sandbox.workspaceRoot;
  let capture: PreparedBox["capture"] = null;
  if (options.capture) {
    const dir = path.resolve(options.capture.dir);
    if (isInside(ws, dir) || isInside(dir, ws)) throw new ToolError("command_failed_to_start", "The capture directory must lie outside the workspace.", { reason: "capture_failed" });
    if (!isRoot()) throw new ToolError("command_failed_to_start", "Capture mode mounts an overlay and needs the gateway to run as root.", { reason: "capture_failed" });
    if ([ws, dir].some((p) => /[,:\\]/.test(p))) throw new ToolError("command_failed_to_start", "Overlay capture cannot use paths containing ',', ':' or '\\'.", { reason: "capture_failed" });
    capture = { lower: ws, upper: path.join(dir, "upper"), work: path.join(dir, "work"), merged: path.join(dir, "merged") };
    for (const d of [capture.upper, capture.work, capture.merged]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  }
  try {
    const plan = await prepareBox({
      ...options.sandbox,
      cwd: options.cwd,
      ...(capture && { workspaceSource: capture.merged, mountpointRoot: capture.upper }),
    });
    return { plan, capture };
  } catch (e) {
    if (e instanceof ToolError) throw e;
    throw new ToolError("command_failed_to_start", `The sandbox could not be set up: ${(e as Error).message}.`, { reason: "sandbox_failed" }, { cause: e });
  }
}

function kib(bytes: number): number {
  return Math.max(1, Math.floor(bytes / 1024));
}

/** Splits the character budget: each stream gets what it needs, up to half when both are long. */
function budgetFor(outBytes: number, errBytes: number, max: number): number {
  return Math.min(outBytes, max - Math.min(errBytes, Math.floor(max / 2)));
}

/** The limit behind an ending the gateway did not cause itself (or "time" when the timeout did). */
function limitOf(r: {
  exit: { code: number | null; signal: NodeJS.Signals | null };
  events: { pidsRefused: number; oomKills: number };
  limits: LimitPlan["applied"];
  timedOut: boolean;
  aborted: boolean;
  weKilled: boolean;
}): LimitName | null {
  if (r.timedOut) return "time";
  if (r.aborted) return null;
  if (r.events.oomKills > 0) return "memory";
  if (r.events.pidsRefused > 0) return "processes";
  const { code, signal } = r.exit;
  const by = (name: "SIGXCPU" | "SIGXFSZ") => signal === name || code === 128 + os.constants.signals[name];
  if (r.limits.cpu_seconds !== null && (by("SIGXCPU") || (signal === "SIGKILL" && !r.weKilled))) return "cpu"; // SIGKILL: the hard CPU limit
  if (r.limits.file_size_bytes !== null && by("SIGXFSZ")) return "file_size";
  return null;
}

/** The hard rlimits of this process (/proc/self/limits; null = unlimited), which a non-root child cannot exceed. */
function hardLimits(): { cpu: number | null; fsize: number | null; as: number | null; nproc: number | null } {
  hardLimitsCache ??= readHardLimits();
  return hardLimitsCache;
}
let hardLimitsCache: ReturnType<typeof readHardLimits> | undefined;

function readHardLimits(): { cpu: number | null; fsize: number | null; as: number | null; nproc: number | null } {
  let text = "";
  try {
    text = fs.readFileSync("/proc/self/limits", "utf8");
  } catch {
    // not Linux: nothing known, nothing clamped
  }
  const hard = (label: string): number | null => {
    const line = text.split("\n").find((l) => l.startsWith(label));
    const value = line?.slice(26).trim().split(/\s+/)[1];
    return value === undefined || value === "unlimited" ? null : Number(value);
  };
  return { cpu: hard("Max cpu time"), fsize: hard("Max file size"), as: hard("Max address space"), nproc: hard("Max processes") };
}

/** Tasks on the machine now (/proc/loadavg), an upper bound of this user's: the RLIMIT_NPROC fallback counts from it. */
function currentTaskCount(): number {
  try {
    return Number(fs.readFileSync("/proc/loadavg", "utf8").split(" ")[3]?.split("/")[1]) || 0;
  } catch {
    return 0;
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined) signalGroup(child.pid, signal);
}

function signalCommand(r: Running, signal: NodeJS.Signals): void {
  signalGroup(r.pid, signal);
  r.cgroup?.signal(signal);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * On process exit (any cause), kill what is still running and remove this gateway's cgroup
 * directories; the hook must be synchronous.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const r of running) signalCommand(r, "SIGKILL");
    for (const support of supportByMode.values()) releaseCgroups(support);
  });
}

/** The reason of a start failure: the errno in lower case where it is a declared reason, else "spawn_failed" (the message keeps the code). */
function startReason(code: string | undefined, cwd: string): ErrorReason<"command_failed_to_start"> {
  if (code === "ENOENT") return fs.existsSync(cwd) ? "shell_not_found" : "cwd_not_found";
  const declared: readonly string[] = ERROR_REASONS.command_failed_to_start;
  const lower = code?.toLowerCase();
  return lower !== undefined && /^e[a-z0-9]+$/.test(lower) && declared.includes(lower) ? (lower as ErrorReason<"command_failed_to_start">) : "spawn_failed";
}

function startError(e: unknown, cwd: string): ToolError {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const reason = startReason(code, cwd);
  return new ToolError("command_failed_to_start", `The command could not be started (${code ?? "error"}).`, { reason, cwd }, { cause: e });
}
