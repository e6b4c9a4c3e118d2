import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { addRule, signInDashboard } from "@/tests/helpers/dashboard";
import { sql } from "@/tests/helpers/sql";

/**
 * The approval queue through the real HTTP door: an agent's write waits
 * for a reviewer; approve, reject, expire, conflict (605), exactly-once under concurrent
 * approvals, and pending calls surviving a SIGKILL of the server.
 */

const sha256 = (b: Buffer | string) => crypto.createHash("sha256").update(b).digest("hex");

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  fs.writeFileSync(path.join(server.workspace, "plan.md"), "alpha\nbeta\n");
});

afterAll(async () => {
  await server?.stop();
});

async function queueWrite(file: string, content: string) {
  const res = await server.call("write_file", { path: file, content }, { prefer: "wait=0" });
  expect(res.status).toBe(202);
  expect(res.body.error.name).toBe("approval_pending");
  return res.body.call_id as string;
}

describe("approval queue over HTTP", () => {
  it("an agent's waiting write returns the written result once a reviewer approves", async () => {
    const agentRequest = server.call("write_file", { path: "plan.md", content: "alpha\nbeta\ngamma\n" }, { prefer: "wait=30" });
    let pending: { call_id: string; preview: { diff: string } } | undefined;
    for (let i = 0; i < 100 && !pending; i++) {
      const list = await server.reviewer("GET", "/api/approvals");
      pending = list.body.approvals.find((a: { tool: string; args: { path: string } }) => a.tool === "write_file" && a.args.path === "plan.md");
      if (!pending) await new Promise((r) => setTimeout(r, 100));
    }
    expect(pending).toBeDefined();
    expect(pending!.preview.diff).toContain("+gamma");
    const decision = await server.reviewer("POST", `/api/approvals/${pending!.call_id}/approve`, {});
    expect(decision.status).toBe(200);
    const agent = await agentRequest;
    expect(agent.status).toBe(200);
    expect(agent.body.ok).toBe(true);
    expect(agent.body.call_id).toBe(pending!.call_id);
    expect(agent.body.data.sha256).toBe(sha256("alpha\nbeta\ngamma\n"));
    expect(agent.headers.get("preference-applied")).toBe("wait=30");
    expect(fs.readFileSync(path.join(server.workspace, "plan.md"), "utf8")).toBe("alpha\nbeta\ngamma\n");
  });

  it("a rejection reaches the agent as 602 with the reason, and nothing is written", async () => {
    const callId = await queueWrite("rejected.txt", "nope\n");
    const decision = await server.reviewer("POST", `/api/approvals/${callId}/reject`, { reason: "not in scope" });
    expect(decision.status).toBe(200);
    const res = await fetch(`${server.url}/api/calls/${callId}?wait=5`, { headers: { authorization: `Bearer ${server.agentToken}` } });
    const body = await res.json();
    expect(res.status).toBe(403);
    expect(body.error.code).toBe(602);
    expect(body.error.name).toBe("approval_rejected");
    expect(body.error.detail.reason).toBe("not in scope");
    expect(body.call.status).toBe("rejected");
    expect(fs.existsSync(path.join(server.workspace, "rejected.txt"))).toBe(false);
  });

  it("a reviewer's edited content is what gets written, and the log keeps both", async () => {
    const callId = await queueWrite("edited.txt", "agent version\n");
    const decision = await server.reviewer("POST", `/api/approvals/${callId}/approve`, { content: "reviewer version\n" });
    expect(decision.body.result.ok).toBe(true);
    expect(fs.readFileSync(path.join(server.workspace, "edited.txt"), "utf8")).toBe("reviewer version\n");
    const [row] = await sql<{ argsJson: string; editedArgsJson: string }>(
      server.databaseUrl,
      `SELECT "argsJson", "editedArgsJson" FROM "ToolCall" WHERE id = $1`,
      [callId],
    );
    expect(JSON.parse(row.argsJson).content).toBe("agent version\n");
    expect(JSON.parse(row.editedArgsJson).content).toBe("reviewer version\n");
  });

  it("a write whose target changed after it was queued ends in conflict (605) and keeps the third party's bytes", async () => {
    const file = path.join(server.workspace, "story.md");
    fs.writeFileSync(file, "The mat was green\n");
    const callId = await queueWrite("story.md", "The mat was green\nMore.\n");
    fs.writeFileSync(file, "The mat was purple\n"); // someone else edits meanwhile
    const decision = await server.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    expect(decision.body.result.ok).toBe(false);
    expect(decision.body.result.error.code).toBe(605);
    expect(decision.body.result.error.name).toBe("conflict");
    expect(decision.body.status).toBe("conflict");
    expect(fs.readFileSync(file, "utf8")).toBe("The mat was purple\n");
  });

  it("50 concurrent approvals run the call exactly once", async () => {
    const callId = await queueWrite("once.txt", "written once\n");
    const results = await Promise.all(
      Array.from({ length: 50 }, () => server.reviewer("POST", `/api/approvals/${callId}/approve`, {})),
    );
    const ran = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 409);
    expect(ran).toHaveLength(1);
    expect(refused).toHaveLength(49);
    for (const r of refused) expect(r.body.error.detail.reason).toBe("already_decided");
    const runs = await sql<{ n: number }>(server.databaseUrl, `SELECT COUNT(*) AS n FROM "Event" WHERE "callId" = $1 AND type = 'call.running'`, [callId]);
    expect(Number(runs[0].n)).toBe(1);
    const backups = await sql<{ n: number }>(server.databaseUrl, `SELECT COUNT(*) AS n FROM "ToolCall" WHERE id = $1 AND status = 'succeeded'`, [callId]);
    expect(Number(backups[0].n)).toBe(1);
  });

  it("answers a policy deny at once with 604 and an audit row", async () => {
    const ruleId = await addRule(await signInDashboard(server), { tool: "*", pathGlob: "secrets/**", decision: "deny", note: "no secrets" });
    const res = await server.call("read_file", { path: "secrets/key.txt" });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe(604);
    expect(res.body.error.detail.rule.id).toBe(ruleId);
    const status = await fetch(`${server.url}/api/calls/${res.body.call_id}`, { headers: { authorization: `Bearer ${server.agentToken}` } });
    expect((await status.json()).call.status).toBe("denied");
  });

  it("pending calls survive a SIGKILL of the server and can be approved after restart", async () => {
    const queued = await server.call("write_file", { path: "after-crash.txt", content: "survived\n" }, { prefer: "wait=0" });
    expect(queued.status).toBe(202);
    const callId = queued.body.call_id as string;
    const reasons = queued.body.error.detail.reasons as string[];
    expect(reasons.length).toBeGreaterThan(0);
    await server.kill();
    server = await startTestServer({ workspace: server.workspace, dataDir: server.dataDir, databaseUrl: server.databaseUrl });
    // The status answer after the restart names the same policy reasons (and preset) as the 601 did.
    const status = await fetch(`${server.url}/api/calls/${callId}`, { headers: { authorization: `Bearer ${server.agentToken}` } });
    expect(status.status).toBe(202);
    const pending = await status.json();
    expect(pending.error.name).toBe("approval_pending");
    expect(pending.error.detail.reasons).toEqual(reasons);
    expect(pending.error.detail.preset).toBe(queued.body.error.detail.preset);
    expect(pending.error.detail.rule).toBe(queued.body.error.detail.rule);
    const list = await server.reviewer("GET", "/api/approvals");
    expect(list.body.approvals.map((a: { call_id: string }) => a.call_id)).toContain(callId);
    const decision = await server.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    expect(decision.body.result.ok).toBe(true);
    expect(fs.readFileSync(path.join(server.workspace, "after-crash.txt"), "utf8")).toBe("survived\n");
  });
});

describe("approval expiry", () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startTestServer({ env: { AGENT_REACH_APPROVAL_EXPIRY_S: "1" } });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it("a call nobody decides expires with 603 and never runs", async () => {
    const res = await short.call("write_file", { path: "late.txt", content: "late\n" }, { prefer: "wait=0" });
    const callId = res.body.call_id;
    await new Promise((r) => setTimeout(r, 1500));
    const status = await fetch(`${short.url}/api/calls/${callId}?wait=10`, { headers: { authorization: `Bearer ${short.agentToken}` } });
    const body = await status.json();
    expect(body.error.code).toBe(603);
    expect(body.error.name).toBe("approval_expired");
    const late = await short.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    expect(late.status).toBe(409);
    expect(fs.existsSync(path.join(short.workspace, "late.txt"))).toBe(false);
  });
});
