import { beforeAll, describe, expect, it } from "vitest";
import type { ContainmentStatus } from "@/lib/exec/run-command";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/** The health check's containment line: which mechanism limits processes and memory, in words. */

let health: typeof import("@/lib/health");

beforeAll(async () => {
  await useFreshDatabase();
  health = await import("@/lib/health");
});

const base = { cpu: "rlimit", file_size: "rlimit" } as const;

describe("containmentDetail", () => {
  const cases: [string, ContainmentStatus, string][] = [
    [
      "cgroup v2 for both",
      { ...base, memory: "cgroup", processes: "cgroup", cgroups: { pids: "v2 /sys/fs/cgroup/x/agent-reach-1", memory: "v2 /sys/fs/cgroup/x/agent-reach-1" }, problems: [] },
      "processes: cgroup v2; memory: cgroup v2; CPU time, file size: rlimit",
    ],
    [
      "cgroup v1 pids only, not root",
      { ...base, memory: "none", processes: "cgroup", cgroups: { pids: "v1 /sys/fs/cgroup/pids/agent-reach-1", memory: null }, problems: ["memory: no cgroup hierarchy has this controller"] },
      "processes: cgroup v1; memory: not limited (no memory cgroup); CPU time, file size: rlimit — memory: no cgroup hierarchy has this controller",
    ],
    [
      "no cgroups, not root",
      { ...base, memory: "none", processes: "rlimit", cgroups: { pids: null, memory: null }, problems: ["cgroups turned off (AGENT_REACH_CMD_CGROUP=off)"] },
      "processes: rlimit (RLIMIT_NPROC); memory: not limited (no memory cgroup); CPU time, file size: rlimit — cgroups turned off (AGENT_REACH_CMD_CGROUP=off)",
    ],
    [
      "no cgroups, as root",
      { ...base, memory: "none", processes: "none", cgroups: { pids: null, memory: null }, problems: ["pids: a", "memory: b"] },
      "processes: not limited (running as root without a pids cgroup); memory: not limited (no memory cgroup); CPU time, file size: rlimit — pids: a; memory: b",
    ],
  ];
  it.each(cases)("%s", (_name, status, detail) => {
    expect(health.containmentDetail(status)).toBe(detail);
  });
});

describe("checkHealth", () => {
  it("reports containment last, always ok, in the {name, ok, detail} shape", async () => {
    const { ok, checks } = await health.checkHealth();
    expect(ok).toBe(true);
    expect(checks.map((c) => c.name)).toEqual(["database", "workspace", "disk", "containment", "sandbox", "commands"]);
    const containment = checks[3];
    expect(Object.keys(containment).sort()).toEqual(["detail", "name", "ok"]);
    expect(containment).toMatchObject({ ok: true, detail: expect.stringMatching(/^processes: (cgroup v[12]|rlimit \(RLIMIT_NPROC\)|not limited .*); memory: (cgroup v[12]|not limited .*); CPU time, file size: rlimit/) });
  });
});

describe("sandboxCheck", () => {
  const base = { bwrap: "/usr/bin/bwrap", version: "bubblewrap 0.8.0", problems: [], fix: "" };
  it("ok when commands run boxed", () => {
    expect(health.sandboxCheck({ ...base, available: true, mode: "bwrap" })).toEqual({ name: "sandbox", ok: true, detail: "commands run in a bubblewrap sandbox (bubblewrap 0.8.0)" });
  });
  it("failed but advisory, with why and how to fix, when bwrap is missing (commands then ask)", () => {
    const check = health.sandboxCheck({ ...base, available: false, mode: "bwrap", problems: ["bubblewrap (bwrap) not found on PATH"], fix: "Install bubblewrap (apt-get install -y bubblewrap)" });
    expect(check).toMatchObject({ ok: false, advisory: true, fix: "Install bubblewrap (apt-get install -y bubblewrap)" });
    expect(check.detail).toMatch(/^unavailable: bubblewrap \(bwrap\) not found on PATH; every command asks a reviewer.*Fix: Install bubblewrap/);
  });
  it("a standing warning when the operator turned it off", () => {
    const check = health.sandboxCheck({ ...base, available: false, mode: "off", problems: ["turned off by the operator (AGENT_REACH_SANDBOX=off)"], fix: "Unset AGENT_REACH_SANDBOX" });
    expect(check).toMatchObject({ ok: true, warning: true, detail: expect.stringMatching(/^WARNING: the sandbox is off/) });
  });
});

describe("the disk check's threshold", () => {
  const MIB = 1024 * 1024;
  const cfg = (healthMinFree: import("@/lib/config").Config["healthMinFree"] = null) => ({ healthMinFree, maxBodyBytes: 16 * MIB });
  /** statfs figures for a file system of `totalMib` with `freeMib` free (4 KiB blocks). */
  const fsOf = (totalMib: number, freeMib: number) => ({ bsize: 4096, blocks: (totalMib * MIB) / 4096, bavail: (freeMib * MIB) / 4096 });

  it("defaults to two of the largest accepted writes, capped at 5 % of a small file system", () => {
    expect(health.diskThresholdBytes(cfg(), 1_000_000 * MIB)).toEqual({ bytes: 32 * MIB, source: "2 × the largest accepted write" });
    expect(health.diskThresholdBytes(cfg(), 112 * MIB).bytes).toBe(Math.floor(112 * MIB * 0.05));
  });

  it("a small disk holding a small workspace is healthy with 60 MiB free; a big one with 20 MiB free is not", () => {
    expect(health.diskCheck(cfg(), fsOf(112, 60)).ok).toBe(true);
    const low = health.diskCheck(cfg(), fsOf(500_000, 20));
    expect(low.ok).toBe(false);
    expect(low.detail).toMatch(/^20 MiB free of 500000 MiB; below the 32 MiB minimum \(2 × the largest accepted write\)/);
    expect(low.detail).toContain("AGENT_REACH_HEALTH_MIN_FREE_MB");
  });

  it("is configurable in MiB or as a percentage; 0 turns it off", () => {
    expect(health.diskCheck(cfg({ mb: 10 }), fsOf(500_000, 20)).ok).toBe(true);
    expect(health.diskCheck(cfg({ mb: 100 }), fsOf(112, 60))).toMatchObject({ ok: false, detail: expect.stringContaining("(AGENT_REACH_HEALTH_MIN_FREE_MB)") });
    expect(health.diskCheck(cfg({ percent: 50 }), fsOf(100, 40)).ok).toBe(false);
    expect(health.diskCheck(cfg({ percent: 30 }), fsOf(100, 40)).ok).toBe(true);
    expect(health.diskCheck(cfg({ mb: 0 }), fsOf(100, 0)).ok).toBe(true);
  });

  it("reads both variables from the environment", async () => {
    const { loadConfig } = await import("@/lib/config");
    expect(loadConfig({ AGENT_REACH_HEALTH_MIN_FREE_MB: "64" } as unknown as NodeJS.ProcessEnv).healthMinFree).toEqual({ mb: 64 });
    expect(loadConfig({ AGENT_REACH_HEALTH_MIN_FREE_PERCENT: "2.5" } as unknown as NodeJS.ProcessEnv).healthMinFree).toEqual({ percent: 2.5 });
    expect(loadConfig({} as unknown as NodeJS.ProcessEnv).healthMinFree).toBeNull();
    expect(() => loadConfig({ AGENT_REACH_HEALTH_MIN_FREE_PERCENT: "150" } as unknown as NodeJS.ProcessEnv)).toThrow(/AGENT_REACH_HEALTH_MIN_FREE_PERCENT/);
  });

  it("health names the checks that failed", async () => {
    const result = await health.checkHealth();
    expect(result.failed).toEqual([]);
  });
});

describe("the workspace probe leaves nothing in the workspace", () => {
  it("writes an unnamed file: no name appears in a listing, not even for a moment, across many checks", async () => {
    const fs = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const dir = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "ar-health-probe-"));
    const seen: string[] = [];
    const watcher = fs.watch(dir, (_event, name) => seen.push(String(name)));
    const listed = new Set<string>();
    let listing = true;
    const lister = (async () => {
      while (listing) {
        for (const name of await fs.promises.readdir(dir)) listed.add(name);
        await new Promise((r) => setImmediate(r));
      }
    })();
    try {
      for (let i = 0; i < 50; i++) expect(await health.probeWritable(dir)).toMatch(/unnamed file was written/);
      listing = false;
      await lister;
      await new Promise((r) => setTimeout(r, 100));
      expect([...listed]).toEqual([]);
      expect(fs.readdirSync(dir)).toEqual([]);
      // A watcher is told only of the kernel's stand-in name of an unnamed file ("#" and its inode),
      // which cannot be opened or listed.
      for (const name of seen) expect(name).toMatch(/^#\d+$/);
    } finally {
      watcher.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("still fails on a directory that cannot be written (immutable, as root)", async () => {
    const fs = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const { execFileSync } = await import("node:child_process");
    const dir = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "ar-health-ro-"));
    execFileSync("chattr", ["+i", dir]);
    try {
      await expect(health.probeWritable(dir)).rejects.toMatchObject({ code: "EPERM" });
    } finally {
      execFileSync("chattr", ["-i", dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await expect(health.probeWritable(path.join(dir, "missing"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});
