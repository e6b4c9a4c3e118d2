import { constants } from "node:fs";
import fs from "node:fs/promises";
import { getConfig, type Config } from "@/lib/config";
import { db } from "@/lib/db";
import { commandSlotStats } from "@/lib/exec/concurrency";
import { containmentStatus, type ContainmentStatus } from "@/lib/exec/run-command";
import { sandboxStatus, type SandboxStatus } from "@/lib/exec/sandbox";
import { currentWorkspace } from "@/lib/workspace/register-workspace";

export interface HealthCheck {
  name: "database" | "workspace" | "disk" | "containment" | "sandbox" | "commands";
  ok: boolean;
  detail: string;
  /** True for a standing warning an operator should act on (ok may still be true). */
  warning?: boolean;
  /** What to do about a failed check or a warning. */
  fix?: string;
  /** Checks that do not make the server unhealthy: it keeps working, more carefully (see `checkHealth`). */
  advisory?: boolean;
}

const MIB = 1024 * 1024;

/**
 * Free bytes below which the disk check fails, for a file system of `totalBytes`:
 * - AGENT_REACH_HEALTH_MIN_FREE_MB: that many MiB;
 * - AGENT_REACH_HEALTH_MIN_FREE_PERCENT: that share of the file system;
 * - default: room for the largest write the gateway accepts twice over (its temp copy beside the
 *   file, and slack for the backup and the database), i.e. 2 × AGENT_REACH_MAX_BODY_BYTES, but
 *   never more than 5 % of the file system, so a small disk or tmpfs holding a small workspace is
 *   healthy while it can take the writes it is likely to get.
 * @returns the threshold in bytes and a few words on where it comes from.
 */
export function diskThresholdBytes(config: Pick<Config, "healthMinFree" | "maxBodyBytes">, totalBytes: number): { bytes: number; source: string } {
  const set = config.healthMinFree;
  if (set && "mb" in set) return { bytes: set.mb * MIB, source: "AGENT_REACH_HEALTH_MIN_FREE_MB" };
  if (set && "percent" in set) return { bytes: Math.floor((totalBytes * set.percent) / 100), source: `AGENT_REACH_HEALTH_MIN_FREE_PERCENT=${set.percent}` };
  const twoWrites = 2 * config.maxBodyBytes;
  const share = Math.floor(totalBytes * 0.05);
  return twoWrites <= share ? { bytes: twoWrites, source: "2 × the largest accepted write" } : { bytes: share, source: "5 % of the file system" };
}

/** The disk check for a file system's `statfs` figures: free space against `diskThresholdBytes`. */
export function diskCheck(config: Pick<Config, "healthMinFree" | "maxBodyBytes">, stat: { bavail: number; blocks: number; bsize: number }): HealthCheck {
  const free = stat.bavail * stat.bsize;
  const total = stat.blocks * stat.bsize;
  const threshold = diskThresholdBytes(config, total);
  const mib = (b: number) => `${Math.floor(b / MIB)} MiB`;
  const ok = free >= threshold.bytes;
  const detail = `${mib(free)} free of ${mib(total)}; ${ok ? "needs" : "below the"} ${mib(threshold.bytes)} minimum (${threshold.source})`;
  return { name: "disk", ok, detail: ok ? detail : `${detail}: writes may fail with write_failed (507). Free space, or set AGENT_REACH_HEALTH_MIN_FREE_MB / AGENT_REACH_HEALTH_MIN_FREE_PERCENT.` };
}

/**
 * The self-check behind GET /api/health: database reachable, workspace root readable and
 * writable (`probeWritable`: nothing ever appears in the workspace), free disk space on the workspace's file system
 * (threshold: `diskThresholdBytes`),
 * and how run_command's processes and memory are contained (informational: always ok, since a
 * machine without cgroups still runs commands, with the limits `containmentDetail` names).
 * The command sandbox (lib/exec/sandbox.ts): ok when commands run boxed; failed, with why and how
 * to fix it, when the sandbox cannot be built (advisory: the server stays healthy because every
 * command then asks a reviewer); ok with a standing warning when the operator turned it off. And
 * the command queue: how many run, wait, and have waited for a slot.
 * @returns `{ok, failed, checks}`; ok is true only when every check that is not advisory passes;
 *   `failed` names the checks that did not pass (e.g. `["disk"]`), each explained by its `detail`. Never throws.
 */
export async function checkHealth(): Promise<{ ok: boolean; failed: HealthCheck["name"][]; checks: HealthCheck[] }> {
  const checks: HealthCheck[] = [];
  const started = Date.now();
  try {
    await db().$queryRawUnsafe("SELECT 1");
    checks.push({ name: "database", ok: true, detail: `reachable in ${Date.now() - started} ms` });
  } catch (err) {
    checks.push({ name: "database", ok: false, detail: (err as Error).message.split("\n")[0] });
  }
  try {
    const ws = await currentWorkspace();
    await fs.readdir(ws.root);
    const how = await probeWritable(ws.root);
    checks.push({ name: "workspace", ok: true, detail: `${ws.root} readable and writable (${how})` });
    checks.push(diskCheck(getConfig(), await fs.statfs(ws.root)));
  } catch (err) {
    checks.push({ name: "workspace", ok: false, detail: (err as Error).message.split("\n")[0] });
  }
  try {
    checks.push({ name: "containment", ok: true, detail: containmentDetail(containmentStatus(getConfig().commandCgroup)) });
  } catch (err) {
    checks.push({ name: "containment", ok: true, detail: `could not be determined: ${(err as Error).message.split("\n")[0]}` });
  }
  try {
    checks.push(sandboxCheck(sandboxStatus()));
  } catch (err) {
    checks.push({ name: "sandbox", ok: false, advisory: true, detail: `could not be determined: ${(err as Error).message.split("\n")[0]}` });
  }
  const q = commandSlotStats();
  checks.push({
    name: "commands",
    ok: true,
    detail: `${q.running} running, ${q.waiting} waiting (at most ${getConfig().maxConcurrentCommands} at once); ${q.waited} waited for a slot since start, ${q.waited_ms_total} ms in total, longest ${q.longest_wait_ms} ms`,
  });
  const failed = checks.filter((c) => !c.ok).map((c) => c.name);
  return { ok: checks.every((c) => c.ok || c.advisory), failed, checks };
}

/** Linux's O_TMPFILE (`__O_TMPFILE | O_DIRECTORY`); Node does not export it. */
const O_TMPFILE = 0o20000000 | constants.O_DIRECTORY;

/**
 * Proves that files can be written in `dir` without a name ever appearing there: an unnamed
 * temporary file (open(2) with O_TMPFILE) is created on the directory's file system, two bytes
 * are written and synced, and closing it frees it. An agent listing or watching the workspace
 * sees nothing. Where the file system cannot make unnamed files (EOPNOTSUPP; EISDIR or EINVAL on
 * kernels without O_TMPFILE), the kernel's own answer to "may this process write here"
 * (access(2) W_OK: a read-only mount, permissions, an immutable directory) stands in.
 * @returns how it was proven, for the check's detail
 * @throws the file system's error when the directory is not writable
 */
export async function probeWritable(dir: string): Promise<string> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(dir, O_TMPFILE | constants.O_WRONLY, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "EOPNOTSUPP" && code !== "EISDIR" && code !== "EINVAL") throw e;
    await fs.access(dir, constants.W_OK);
    return "write permission checked; this file system makes no unnamed files";
  }
  try {
    await handle.write("ok");
    await handle.sync();
  } finally {
    await handle.close();
  }
  return "an unnamed file was written";
}

/** The sandbox as one health check (see `checkHealth`). */
export function sandboxCheck(status: SandboxStatus): HealthCheck {
  if (status.available) {
    const extra = status.problems.length > 0 ? ` — ${status.problems.join("; ")}` : "";
    return { name: "sandbox", ok: true, detail: `commands run in a bubblewrap sandbox (${status.version ?? status.bwrap})${extra}` };
  }
  if (status.mode === "off") {
    return { name: "sandbox", ok: true, warning: true, detail: `WARNING: the sandbox is off: ${status.problems.join("; ")}`, fix: status.fix };
  }
  return {
    name: "sandbox",
    ok: false,
    advisory: true,
    detail: `unavailable: ${status.problems.join("; ")}; every command asks a reviewer and, once approved, runs unboxed. Fix: ${status.fix}`,
    fix: status.fix,
  };
}

/**
 * One line for an operator on how run_command's limits are enforced here (lib/exec/run-command.ts
 * `containmentStatus`), e.g. "processes: cgroup v2; memory: cgroup v2; CPU time, file size: rlimit"
 * or "processes: rlimit (RLIMIT_NPROC); memory: not limited; CPU time, file size: rlimit — memory:
 * no cgroup hierarchy has this controller". The reasons a cgroup controller is not used follow a dash.
 */
export function containmentDetail(status: ContainmentStatus): string {
  const cgroup = (where: string | null) => `cgroup ${where?.split(" ")[0] ?? "?"}`;
  const processes =
    status.processes === "cgroup" ? cgroup(status.cgroups.pids) : status.processes === "rlimit" ? "rlimit (RLIMIT_NPROC)" : "not limited (running as root without a pids cgroup)";
  const memory = status.memory === "cgroup" ? cgroup(status.cgroups.memory) : "not limited (no memory cgroup)";
  const line = `processes: ${processes}; memory: ${memory}; CPU time, file size: rlimit`;
  return status.problems.length > 0 ? `${line} — ${status.problems.join("; ")}` : line;
}
