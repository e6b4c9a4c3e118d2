import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { approveCall } from "@/lib/approvals/queue";
import { createAgentToken } from "@/lib/auth/tokens";
import { db } from "@/lib/db";
import { maxDeletions } from "@/lib/effects/stage";
import { callTool } from "@/lib/gateway/call-tool";
import { setWorkspacePreset } from "@/lib/policy/preset-store";
import { seedDefaultRules } from "@/lib/policy/rule-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { PRESETS, type PresetName } from "@/lib/policy/presets";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";

/**
 * A command's change set that deletes many files is held where the call's preset says so:
 * strict and balanced hold it, autonomous applies it with every deleted file backed up; a call
 * whose preset is unknown gets the strictest check. Through the in-process gateway (the preset
 * travels from the verdict to the effects step, also for an approved call), real overlay
 * capture, real SQLite.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  await seedDefaultRules();
  ws = await currentWorkspace();
});

const COUNT = maxDeletions() + 10;
beforeEach(() => {
  emptyWorkspace(ws);
  fs.mkdirSync(path.join(ws.root, "bulk"));
  for (let i = 0; i < COUNT; i++) fs.writeFileSync(path.join(ws.root, "bulk", `f${i}.txt`), `file ${i}\n`);
});

/** Runs `command` through the gateway under `preset`; approves it when the policy asks (strict). */
async function underPreset(preset: PresetName, command: string): Promise<any> {
  await setWorkspacePreset(ws.id, preset, "test");
  const env: any = await callTool({ door: "http", agent: null, sessionKey: `deletions-${preset}` }, "run_command", { command }, { waitMs: 0 });
  if (env.error?.name !== "approval_pending") return env;
  const decided: any = await approveCall(env.call_id, "admin");
  return { ...decided.envelope, asked: true };
}

describe("large deletions by a command, per preset", () => {
  it("the presets' checks say who holds them", () => {
    expect({ strict: PRESETS.strict.checks.holdLargeDeletions, balanced: PRESETS.balanced.checks.holdLargeDeletions, autonomous: PRESETS.autonomous.checks.holdLargeDeletions }).toEqual({ strict: true, balanced: true, autonomous: false });
    expect(PRESETS.autonomous.describedChecks.find((c) => c.id === "held-change-sets")?.text).toMatch(/many deletions apply at once/);
  });

  it.each(["strict", "balanced"] as const)("%s: held for a reviewer, nothing deleted", async (preset) => {
    const env = await underPreset(preset, "rm -rf bulk");
    expect(env.ok, JSON.stringify(env)).toBe(true);
    expect(env.data.changes).toMatchObject({ status: "held", deleted: COUNT });
    expect(env.data.changes.hold_reasons).toContain(`deletes ${COUNT} files (more than ${maxDeletions()})`);
    expect(fs.readdirSync(path.join(ws.root, "bulk"))).toHaveLength(COUNT);
    if (preset === "strict") expect(env.asked).toBe(true); // the command itself asked first, then its effect was held
  }, 120_000);

  it("autonomous: applied at once, every deleted file backed up", async () => {
    const env = await underPreset("autonomous", "rm -rf bulk");
    expect(env.ok, JSON.stringify(env)).toBe(true);
    expect(env.asked).toBeUndefined();
    expect(env.data.changes).toMatchObject({ status: "applied", deleted: COUNT });
    expect(fs.existsSync(path.join(ws.root, "bulk"))).toBe(false);
    const backups = await db().backup.findMany({ where: { callId: env.call_id } });
    expect(backups.map((b) => b.path).sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `bulk/f${i}.txt`).sort());
  }, 120_000);

  it("autonomous still holds what is risky besides the count (a file that runs later)", async () => {
    fs.writeFileSync(path.join(ws.root, "bulk", "Makefile"), "all:\n\ttrue\n");
    const env = await underPreset("autonomous", "rm -rf bulk");
    expect(env.data.changes.status).toBe("held");
    expect(env.data.changes.hold_reasons.join(" ")).not.toMatch(/deletes \d+ files/);
    expect(env.data.changes.hold_reasons.join(" ")).toMatch(/bulk\/Makefile/);
  }, 120_000);

  it("autonomous: a masked secret in the deleted tree survives (the box cannot remove it) and the rest applies", async () => {
    fs.writeFileSync(path.join(ws.root, "bulk", ".env"), "A=1\n");
    const env = await underPreset("autonomous", "rm -rf bulk");
    expect(env.data.changes).toMatchObject({ status: "applied", deleted: COUNT });
    expect(fs.readdirSync(path.join(ws.root, "bulk"))).toEqual([".env"]);
    expect(fs.readFileSync(path.join(ws.root, "bulk", ".env"), "utf8")).toBe("A=1\n");
  }, 120_000);

  it("a call whose preset is not known holds (the strictest check)", async () => {
    // runBoxed builds the tool context without a preset; there is no call row to hold, so holding
    // fails after the journal is written, with the workspace untouched.
    await expect(runBoxed(ws, "rm -rf bulk")).rejects.toThrow(/left "running"/);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect(JSON.parse(set!.summaryJson).hold_reasons[0]).toMatch(/deletes \d+ files/);
    expect(fs.readdirSync(path.join(ws.root, "bulk"))).toHaveLength(COUNT);
  }, 120_000);
});

describe("large deletions split over several commands", () => {
  /** Deletes `bulk/f{from}…f{to-1}` as `agent` in session `session` under balanced. */
  async function deleteSlice(agent: { id: string; name: string }, session: string, from: number, to: number): Promise<any> {
    await setWorkspacePreset(ws.id, "balanced", "test");
    const names = Array.from({ length: to - from }, (_, i) => `bulk/f${from + i}.txt`).join(" ");
    return callTool({ door: "http", agent: { ...agent, workspaceId: null }, sessionKey: session }, "run_command", { command: `rm -f ${names}` }, { waitMs: 0 });
  }

  it("count what the same agent deleted just before without a reviewer, whatever session key it sends", async () => {
    const { agent } = await createAgentToken("slicer");
    const slice = Math.floor(maxDeletions() / 2) + 5; // two slices stay under the limit alone, not together
    const first: any = await deleteSlice(agent, "slice-1", 0, slice);
    expect(first.data.changes).toMatchObject({ status: "applied", deleted: slice });
    // A new session key does not reset the budget: it belongs to the token.
    const second: any = await deleteSlice(agent, "slice-2", slice, 2 * slice);
    expect(second.data.changes.status).toBe("held");
    expect(second.data.changes.hold_reasons.join(" ")).toContain(`deletes ${slice} files, and this agent's commands deleted ${slice} more in the last 30 minutes without a reviewer (${first.call_id})`);
    expect(fs.existsSync(path.join(ws.root, "bulk", `f${slice}.txt`))).toBe(true);
    // Approved by a reviewer, the held deletions do not count against what follows; the first slice still does.
    const approved: any = await approveCall(second.call_id, "admin");
    expect(approved.envelope.data.changes.status).toBe("applied");
    for (let i = 2 * slice; i < 3 * slice; i++) fs.writeFileSync(path.join(ws.root, "bulk", `f${i}.txt`), `file ${i}\n`);
    const third: any = await deleteSlice(agent, "slice-3", 2 * slice, 3 * slice);
    expect(third.data.changes.status).toBe("held");
    expect(third.data.changes.hold_reasons.join(" ")).toContain(`deleted ${slice} more`);
  }, 180_000);

  it("other agents, and deletions older than the window, do not count", async () => {
    const a = (await createAgentToken("agent-a")).agent;
    const b = (await createAgentToken("agent-b")).agent;
    const slice = maxDeletions() - 5;
    expect((await deleteSlice(a, "a", 0, slice)).data.changes.status).toBe("applied");
    expect((await deleteSlice(b, "b", slice, slice + 10)).data.changes.status).toBe("applied");
    // Agent a's slice, moved back beyond the window, no longer counts.
    await db().toolCall.updateMany({ where: { agentId: a.id }, data: { createdAt: new Date(Date.now() - 31 * 60 * 1000) } });
    expect((await deleteSlice(a, "a", slice + 10, slice + 20)).data.changes.status).toBe("applied");
  }, 180_000);
});
