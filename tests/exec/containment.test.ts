import fs from "node:fs/promises";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildChildEnv } from "@/lib/exec/child-env";
import { containmentStatus, runCommand, type LimitName, type ResourceLimits, type RunCommandOptions } from "@/lib/exec/run-command";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

/**
 * Containment of run_command: each misbehaving command is stopped by its own limit,
 * says which (`limit`), and leaves nothing behind: no process, no cgroup directory.
 *
 * Memory and process limits need a cgroup; the tests that rely on one check that it is there
 * first and fail loudly otherwise, so a fork bomb never runs unbounded.
 */

let fx: Fixture;
let base: Omit<RunCommandOptions, "command">;

beforeEach(async () => {
  fx = await makeFixture();
  base = { cwd: fx.ws, timeoutMs: 30_000, maxOutputChars: 4000, env: buildChildEnv(fx.ws, { homeRoot: path.join(fx.root, "homes") }), killGraceMs: 500 };
});
afterEach(async () => {
  await fx.cleanup();
});

/** Throws (fails the test) unless the controller is available, before anything dangerous runs. */
function requireCgroup(controller: "pids" | "memory"): string {
  const status = containmentStatus();
  const where = status.cgroups[controller];
  if (!where) throw new Error(`no ${controller} cgroup on this machine (${status.problems.join("; ")}): refusing to run this test unbounded`);
  return where.slice(where.indexOf(" ") + 1);
}

/** This process's command cgroups still present (its agent-reach-<pid> directory goes when no command runs). */
function leftoverCgroups(parent: string): string[] {
  return existsSync(parent) ? readdirSync(parent) : [];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

async function pidIn(file: string): Promise<number> {
  for (let i = 0; i < 250; i++) {
    const pid = Number((await fs.readFile(file, "utf8").catch(() => "")).trim());
    if (pid > 0) return pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no pid in ${file}`);
}

describe("each misbehaving command is stopped by its limit", () => {
  const cases: Array<{ name: string; needs: "pids" | "memory" | null; limits: ResourceLimits; command: string; limit: LimitName }> = [
    { name: "a memory hog (one process)", needs: "memory", limits: { memoryBytes: 64 << 20 }, command: "tail /dev/zero", limit: "memory" },
    { name: "a memory hog in a pipeline", needs: "memory", limits: { memoryBytes: 64 << 20 }, command: "head -c 4G /dev/zero | tail; echo after", limit: "memory" },
    { name: "an infinite CPU loop", needs: null, limits: { cpuSeconds: 1 }, command: "while :; do :; done", limit: "cpu" },
    { name: "a CPU loop that ignores SIGXCPU (hard limit)", needs: null, limits: { cpuSeconds: 1 }, command: "trap '' XCPU; while :; do :; done", limit: "cpu" },
    { name: "a fork bomb", needs: "pids", limits: { processes: 32 }, command: ":(){ :|:; };:", limit: "processes" },
    { name: "a fork bomb that never waits", needs: "pids", limits: { processes: 32 }, command: "b() { b & b & wait; }; b", limit: "processes" },
    { name: "a huge file write", needs: null, limits: { fileSizeBytes: 1 << 20 }, command: "head -c 100M /dev/zero > big.bin", limit: "file_size" },
  ];

  it.each(cases)("$name → limit $limit", async ({ needs, limits, command, limit }) => {
    const parents = needs ? [requireCgroup(needs)] : [];
    const r = await runCommand({ ...base, limits, command: `echo $$ > leader.pid; ${command}` });
    expect(r.limit).toBe(limit);
    expect(r.timed_out).toBe(false);
    // Nothing is left: not the command's first process, not its cgroup.
    expect(alive(await pidIn(fx.at("leader.pid")))).toBe(false);
    for (const parent of parents) expect(leftoverCgroups(parent)).toEqual([]);
  });

  it("the classic fork bomb, whose shell returns at once, leaves nothing behind either", async () => {
    const parent = requireCgroup("pids");
    const r = await runCommand({ ...base, limits: { processes: 32 }, command: "echo $$ > leader.pid; :(){ :|:& };:" });
    expect(r.timed_out).toBe(false);
    expect(alive(await pidIn(fx.at("leader.pid")))).toBe(false);
    expect(leftoverCgroups(parent)).toEqual([]);
  });

  it("the huge file stops at the limit", async () => {
    const r = await runCommand({ ...base, limits: { fileSizeBytes: 1 << 20 }, command: "head -c 100M /dev/zero > big.bin" });
    expect(r).toMatchObject({ limit: "file_size", exit_code: 128 + os.constants.signals.SIGXFSZ }); // bash reports its child's SIGXFSZ
    expect((await fs.stat(fx.at("big.bin"))).size).toBe(1 << 20);
  });

  it("the wall clock is a limit too", async () => {
    const r = await runCommand({ ...base, timeoutMs: 300, command: "sleep 30" });
    expect(r).toMatchObject({ limit: "time", timed_out: true });
  });

  it("a command within every limit reports none", async () => {
    const r = await runCommand({ ...base, limits: { cpuSeconds: 10, memoryBytes: 256 << 20, processes: 64, fileSizeBytes: 1 << 20 }, command: "seq 1 1000 | sort -n | tail -1" });
    expect(r).toMatchObject({ exit_code: 0, limit: null, stdout: "1000\n" });
  });
});

describe("how limits are applied", () => {
  it("rlimits, priority and OOM preference are set in the command's processes", async () => {
    const r = await runCommand({
      ...base,
      nice: 7,
      limits: { cpuSeconds: 30, fileSizeBytes: 8 << 20, addressSpaceBytes: 16 * 1024 ** 3 },
      command: "ulimit -S -t; ulimit -H -t; ulimit -f; ulimit -v; ulimit -c; nice; cat /proc/self/oom_score_adj",
    });
    expect(r.stdout.split("\n")).toEqual(["30", "35", String(8 * 1024), String(16 * 1024 * 1024), "0", "7", "1000", ""]);
  });

  it("memory and processes are limits of the command's own cgroup", async () => {
    const pids = requireCgroup("pids");
    const memory = requireCgroup("memory");
    const r = await runCommand({ ...base, limits: { memoryBytes: 96 << 20, processes: 50 }, command: "cat /proc/self/cgroup" });
    const lines = r.stdout.split("\n");
    const inCommandCgroup = new RegExp(`/agent-reach-${process.pid}/cmd-\\d+$`);
    const pidsPath = lines.find((l) => /:pids:|^0::/.test(l) && inCommandCgroup.test(l));
    const memoryPath = lines.find((l) => /:memory:|^0::/.test(l) && inCommandCgroup.test(l));
    expect(pidsPath).toBeTruthy();
    expect(memoryPath).toBeTruthy();
    expect(r.limits).toMatchObject({ memory_bytes: 96 << 20, processes: 50 });
    expect(leftoverCgroups(pids)).toEqual([]);
    expect(leftoverCgroups(memory)).toEqual([]);
  });

  it("reports the limits it ran under, with the timeout and the output cap", async () => {
    requireCgroup("memory");
    const r = await runCommand({ ...base, timeoutMs: 5000, maxOutputChars: 999, limits: { cpuSeconds: 9, memoryBytes: 64 << 20, processes: 40, fileSizeBytes: 4096 }, command: "true" });
    expect(r.limits).toEqual({ cpu_seconds: 9, memory_bytes: 64 << 20, processes: 40, file_size_bytes: 4096, address_space_bytes: null, timeout_ms: 5000, max_output_chars: 999 });
  });

  it("a process that left the process group (setsid) is still killed with the command's cgroup", async () => {
    const parent = requireCgroup("pids");
    const r = await runCommand({ ...base, limits: { processes: 64 }, command: "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > escaped.pid; echo started" });
    expect(r).toMatchObject({ exit_code: 0, stdout: "started\n" });
    expect(alive(await pidIn(fx.at("escaped.pid")))).toBe(false);
    expect(leftoverCgroups(parent)).toEqual([]);
  });

  it("with cgroups off, memory is not limited and, for root, processes neither; rlimits still apply", async () => {
    const r = await runCommand({ ...base, cgroups: "off", limits: { memoryBytes: 64 << 20, processes: 64, cpuSeconds: 20 }, command: "cat /proc/self/cgroup; ulimit -t" });
    expect(r.stdout).not.toContain("agent-reach");
    expect(r.stdout.trim().endsWith("20")).toBe(true);
    expect(r.limits.memory_bytes).toBeNull();
    expect(r.limits.processes).toBe(process.getuid?.() === 0 ? null : 64);
    expect(containmentStatus("off")).toMatchObject({ memory: "none", cgroups: { pids: null, memory: null } });
  });

  it("says how this machine enforces each limit", () => {
    const status = containmentStatus();
    expect(status.cpu).toBe("rlimit");
    expect(status.file_size).toBe("rlimit");
    expect(["cgroup", "none"]).toContain(status.memory);
    expect(["cgroup", "rlimit", "none"]).toContain(status.processes);
    if (status.processes !== "cgroup") expect(status.problems.length).toBeGreaterThan(0);
    expect(existsSync("/proc/self/cgroup")).toBe(true);
  });
});
