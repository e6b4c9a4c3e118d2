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
    expect(checks.map((c) => c.name)).toEqual(["database", "workspace", "disk", "containment"]);
    const containment = checks[3];
    expect(Object.keys(containment).sort()).toEqual(["detail", "name", "ok"]);
    expect(containment).toMatchObject({ ok: true, detail: expect.stringMatching(/^processes: (cgroup v[12]|rlimit \(RLIMIT_NPROC\)|not limited .*); memory: (cgroup v[12]|not limited .*); CPU time, file size: rlimit/) });
  });
});
