import os from "node:os";
import { z } from "zod";

/**
 * The resource limits of `run_command` (its containment): what they are, their safe
 * defaults, how an operator sets them globally (AGENT_REACH_CMD_* in lib/config.ts) and per
 * policy rule (`limits` in a rule's options), and how the two combine with the call's own
 * `timeout_ms` / `max_output_chars`.
 *
 * Units: bytes, seconds, milliseconds, characters as named. `null` means "no limit".
 *
 * Defaults (measured on the 2-core, 24 GiB machine this project is built on):
 * - CPU time 900 s per process: above the longest wall-clock timeout (600 s) even for a process
 *   that keeps 1.5 cores busy, so it never stops an ordinary multi-threaded build first; it stops
 *   a runaway process that escaped the wall clock.
 * - Memory: half of the machine's RAM for the whole command (cgroup `memory.max`), so the
 *   gateway and the rest of the machine always keep the other half.
 * - Processes: 1024 tasks (processes and threads) for the whole command (cgroup `pids.max`).
 *   Measured peaks (cgroup `pids.peak`): `tsc --noEmit` 19, a vitest run with two fork workers
 *   53, headless Chromium rendering one page 130; a fork bomb reaches 1024 in milliseconds and is
 *   stopped there.
 * - Largest file written: 1 GiB (RLIMIT_FSIZE), so a runaway loop cannot fill the disk.
 * - Address space (RLIMIT_AS): off. It counts reservations, not use: Node refuses to create any
 *   WebAssembly memory below ~10 GiB of address space (each reserves its guard region) and the
 *   JVM will not start below ~4 GiB, so any value that contains a hog breaks ordinary tools.
 * - Wall-clock timeout and output cap: the call's `timeout_ms` / `max_output_chars`, at most
 *   600 000 ms and 200 000 characters unless an operator lowers those ceilings.
 */

/** Limits of one command, resolved (after config, rules and the call's arguments). */
export interface CommandLimits {
  /** CPU time per process (s), RLIMIT_CPU: SIGXCPU, then SIGKILL 5 s later. */
  cpuSeconds: number | null;
  /** Memory of the whole command (bytes, resident + page cache), cgroup memory.max / memory.limit_in_bytes. */
  memoryBytes: number | null;
  /** Tasks (processes and threads) of the whole command, cgroup pids.max (RLIMIT_NPROC as a fallback). */
  processes: number | null;
  /** Largest file any process may write (bytes), RLIMIT_FSIZE: SIGXFSZ. */
  fileSizeBytes: number | null;
  /** Virtual address space per process (bytes), RLIMIT_AS: allocations beyond it fail. */
  addressSpaceBytes: number | null;
  /** Ceiling on the call's `timeout_ms` (ms). */
  timeoutMs: number;
  /** Ceiling on the call's `max_output_chars` (characters of stdout + stderr). */
  outputChars: number;
}

/** Hard bounds of the wall-clock timeout and the output cap (the run_command schema's maxima). */
export const MAX_TIMEOUT_MS = 600_000;
export const MAX_OUTPUT_CHARS = 200_000;

const MIB = 1024 * 1024;

/** The built-in defaults (see the module comment for why these values). */
export function defaultCommandLimits(totalMemoryBytes = os.totalmem()): CommandLimits {
  return {
    cpuSeconds: 900,
    memoryBytes: Math.floor(totalMemoryBytes / 2 / MIB) * MIB,
    processes: 1024,
    fileSizeBytes: 1024 * MIB,
    addressSpaceBytes: null,
    timeoutMs: MAX_TIMEOUT_MS,
    outputChars: MAX_OUTPUT_CHARS,
  };
}

/**
 * `limits` in a policy rule's options, as an operator writes them (snake_case, units in the
 * names; MiB for sizes). Every key is optional; 0 lifts that limit (not allowed for the timeout
 * and the output cap, which always apply).
 */
export const RuleLimitsInput = z
  .object({
    cpu_seconds: z.number().int().min(0).max(86_400).optional().describe("CPU seconds per process; 0 = no limit."),
    memory_mb: z.number().int().min(0).max(16 * 1024 * 1024).optional().describe("MiB of memory for the whole command; 0 = no limit (at least 16 otherwise)."),
    processes: z.number().int().min(0).max(1_000_000).optional().describe("Processes and threads of the whole command; 0 = no limit (at least 8 otherwise)."),
    file_size_mb: z.number().int().min(0).max(16 * 1024 * 1024).optional().describe("Largest file a process may write (MiB); 0 = no limit."),
    address_space_mb: z.number().int().min(0).max(16 * 1024 * 1024).optional().describe("Virtual address space per process (MiB); 0 = no limit. Breaks Node (WebAssembly) below ~10 GiB and Java below ~4 GiB."),
    timeout_ms: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().describe("Longest wall-clock timeout a call may ask for (ms)."),
    output_chars: z.number().int().min(200).max(MAX_OUTPUT_CHARS).optional().describe("Largest output cap a call may ask for (characters)."),
  })
  .strict()
  .refine((l) => l.memory_mb === undefined || l.memory_mb === 0 || l.memory_mb >= 16, { message: "memory_mb must be 0 (no limit) or at least 16", path: ["memory_mb"] })
  .refine((l) => l.processes === undefined || l.processes === 0 || l.processes >= 8, { message: "processes must be 0 (no limit) or at least 8", path: ["processes"] });
export type RuleLimits = z.infer<typeof RuleLimitsInput>;

/**
 * Applies a rule's `limits` over the global ones: every key the rule sets replaces the global
 * value (0 → no limit); keys it leaves out keep the global value.
 */
export function withRuleLimits(global: CommandLimits, rule: RuleLimits | undefined): CommandLimits {
  if (!rule) return global;
  const mib = (v: number | undefined, base: number | null) => (v === undefined ? base : v === 0 ? null : v * MIB);
  const count = (v: number | undefined, base: number | null) => (v === undefined ? base : v === 0 ? null : v);
  return {
    cpuSeconds: count(rule.cpu_seconds, global.cpuSeconds),
    memoryBytes: mib(rule.memory_mb, global.memoryBytes),
    processes: count(rule.processes, global.processes),
    fileSizeBytes: mib(rule.file_size_mb, global.fileSizeBytes),
    addressSpaceBytes: mib(rule.address_space_mb, global.addressSpaceBytes),
    timeoutMs: rule.timeout_ms ?? global.timeoutMs,
    outputChars: rule.output_chars ?? global.outputChars,
  };
}
