import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayTest } from "@/tests/helpers/gateway-fixture";
import { callTool, type Caller } from "@/lib/gateway/call-tool";
import { approveCall, rejectCall, waitForAnswer, waitForOutcome } from "@/lib/approvals/queue";
import { db } from "@/lib/db";

/** The held-effects lifecycle in process: a command's change set held, then approved or rejected. */
let root: string;
let agent: Caller;
gatewayTest.beforeAll(({ gateway }) => {
  root = gateway.workspace.root;
  agent = gateway.as("held-agent");
});

const asReviewer = (command: string) =>
  callTool({ door: "dashboard", agent: null, reviewer: "admin", sessionKey: "held" }, "run_command", { command }, { waitMs: 0 });

describe("held change sets", () => {
  it("deleting 60 files is held, then applied on approval", async () => {
    fs.mkdirSync(path.join(root, "many"));
    for (let i = 0; i < 60; i++) fs.writeFileSync(path.join(root, "many", `f${i}`), `${i}\n`);
    const env: any = await asReviewer("rm -rf many && echo gone");
    expect(env.ok, JSON.stringify(env)).toBe(true);
    expect(env.data.changes.status).toBe("held");
    expect(fs.readdirSync(path.join(root, "many"))).toHaveLength(60);
    const row = await db().toolCall.findUnique({ where: { id: env.call_id } });
    expect(row?.status).toBe("pending");
    const decided: any = await approveCall(env.call_id, "admin");
    expect(decided.ok, JSON.stringify(decided)).toBe(true);
    expect(decided.status).toBe("succeeded");
    expect(fs.existsSync(path.join(root, "many"))).toBe(false);
  }, 120_000);

  it("a CI workflow change is held; rejecting discards it", async () => {
    const env: any = await asReviewer("mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml");
    expect(env.data.changes.status).toBe("held");
    const decided: any = await rejectCall(env.call_id, "admin", "no");
    expect(decided.ok, JSON.stringify(decided)).toBe(true);
    expect(decided.envelope.error.detail.changes.status).toBe("discarded");
    expect(fs.existsSync(path.join(root, ".github"))).toBe(false);
  }, 120_000);

  it("a held change set that replaced files keeps their backups while held; rejected, it keeps none", async () => {
    fs.mkdirSync(path.join(root, "kept"));
    for (let i = 0; i < 60; i++) fs.writeFileSync(path.join(root, "kept", `f${i}`), `${i}\n`);
    // 60 deletions hold the set; the rewritten file is backed up when staged.
    fs.writeFileSync(path.join(root, "kept-too.txt"), "old\n");
    const env: any = await asReviewer("rm -rf kept && echo new > kept-too.txt");
    expect(env.data.changes.status).toBe("held");
    expect(await db().backup.count({ where: { callId: env.call_id } })).toBeGreaterThan(0);
    const decided: any = await rejectCall(env.call_id, "admin", "no");
    expect(decided.ok, JSON.stringify(decided)).toBe(true);
    expect(await db().backup.count({ where: { callId: env.call_id } })).toBe(0);
    expect(fs.readFileSync(path.join(root, "kept-too.txt"), "utf8")).toBe("old\n");
  }, 120_000);

  it("an agent's command approved by a reviewer, then held: both waiting requests get the held result; the decision waits", async () => {
    fs.mkdirSync(path.join(root, "lots"));
    for (let i = 0; i < 60; i++) fs.writeFileSync(path.join(root, "lots", `f${i}`), `${i}\n`);
    // The agent waits (Prefer: wait) for its command, which the policy asks a reviewer about.
    let onPending: (id: string) => void = () => undefined;
    const queued = new Promise<string>((resolve) => (onPending = resolve));
    const agentWaiting = callTool(agent, "run_command", { command: "rm -rf lots && echo gone" }, { waitMs: 60_000, onPending: (id) => onPending(id) });
    const callId = await queued;
    const decided: any = await approveCall(callId, "admin");
    expect(decided.ok, JSON.stringify(decided)).toBe(true);
    // The command ran; its change set waits for the reviewer: status "pending", the held result.
    expect(decided.status).toBe("pending");
    expect(decided.envelope).toMatchObject({ ok: true, call_id: callId, data: { stdout: "gone\n", changes: { status: "held", deleted: 60, call_id: callId } } });
    expect(decided.envelope.data.changes_note).toMatch(/held for a reviewer/);
    const fromAgent: any = await agentWaiting;
    expect(fromAgent).toEqual(decided.envelope);
    expect(fs.readdirSync(path.join(root, "lots"))).toHaveLength(60);
    // get_call names the held effect; the MCP task asks for input with what the reviewer decides.
    const got: any = await callTool(agent, "get_call", { call_id: callId }, { waitMs: 0 });
    expect(got.data).toMatchObject({ status: "pending", result: null, held_effects: { deleted: 60, files_truncated: true, hold_reasons: [expect.stringMatching(/deletes 60 files/)] } });
    expect(got.data.held_effects.files).toHaveLength(50);
    expect(got.data.held_effects.review_url).toContain(`/approvals?call=${callId}`);
    const { callTaskStore } = await import("@/lib/mcp/tasks");
    const task = await callTaskStore(agent.agent!.id).getTask(callId);
    expect(task).toMatchObject({ status: "input_required", statusMessage: expect.stringMatching(/a reviewer must decide whether its file changes \(0 created, 0 modified, 60 deleted: lots/) });
    expect(task!.statusMessage).toMatch(/Held because: deletes 60 files/);
    // get_call's wait is for the final decision on the held effect.
    expect(await waitForOutcome(callId, 300)).toBeNull();
    expect((await waitForAnswer(callId, 300))?.ok).toBe(true);
    const finalWait = waitForOutcome(callId, 60_000);
    const applied: any = await approveCall(callId, "admin");
    expect(applied.status).toBe("succeeded");
    expect(applied.envelope.data.changes).toMatchObject({ status: "applied", deleted: 60 });
    expect(((await finalWait) as any)?.data.changes.status).toBe("applied");
    expect(fs.existsSync(path.join(root, "lots"))).toBe(false);
    const done: any = await callTool(agent, "get_call", { call_id: callId }, { waitMs: 0 });
    expect(done.data).toMatchObject({ status: "succeeded", held_effects: null });
    expect((await (await import("@/lib/mcp/tasks")).callTaskStore(agent.agent!.id).getTask(callId))?.status).toBe("completed");
  }, 180_000);
});
