import fs from "node:fs/promises";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { commandSlotStats } from "@/lib/exec/concurrency";
import { containmentStatus, type ContainmentStatus } from "@/lib/exec/run-command";
import { sandboxStatus, type SandboxStatus } from "@/lib/exec/sandbox";
import { currentWorkspace } from "@/lib/gateway/workspace";

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

/** Free bytes below which the disk check fails (writes keep a temp copy and a backup). */
const MIN_FREE_BYTES = 100 * 1024 * 1024;

/**
 * The self-check behind GET /api/health: database reachable, workspace root readable and
 * writable (a probe file is created and removed), free disk space on the workspace's file system,
 * and how run_command's processes and memory are contained (informational: always ok, since a
 * machine without cgroups still runs commands, with the limits `containmentDetail` names).
 * The command sandbox (lib/exec/sandbox.ts): ok when commands run boxed; failed, with why and how
 * to fix it, when the sandbox cannot be built (advisory: the server stays healthy because every
 * command then asks a reviewer); ok with a standing warning when the operator turned it off. And
 * the command queue: how many run, wait, and have waited for a slot.
 * @returns `{ok, checks}`; ok is true only when every check that is not advisory passes. Never throws.
 */
export async function checkHealth(): Promise<{ ok: boolean; checks: HealthCheck[] }> {
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
    const probe = path.join(ws.root, `.agent-reach-health-${process.pid}-${Date.now()}`);
    await fs.readdir(ws.root);
    await fs.writeFile(probe, "ok", { flag: "wx", mode: 0o600 });
    await fs.rm(probe, { force: true });
    checks.push({ name: "workspace", ok: true, detail: `${ws.root} readable and writable` });
    const stat = await fs.statfs(ws.root);
    const free = stat.bavail * stat.bsize;
    checks.push({ name: "disk", ok: free >= MIN_FREE_BYTES, detail: `${Math.floor(free / 1024 / 1024)} MiB free` });
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
  return { ok: checks.every((c) => c.ok || c.advisory), checks };
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
