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
