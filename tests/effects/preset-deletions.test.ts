import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { approveCall } from "@/lib/approvals/queue";
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
