import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretSpellings } from "@/lib/redact";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { addRule, signInDashboard } from "@/tests/helpers/dashboard";
import { sql } from "@/tests/helpers/sql";

/**
 * Agent tokens and the gateway's own secrets through the real doors of a running server:
 * - the reviewer password and the preset tokens never come back in a tool's output, over HTTP or
 *   MCP, in any route bundle, not even where a policy rule relaxes masking, and the database holds
 *   no clear copy of them;
 * - revoking an agent token ends its calls that wait for a reviewer (602, reason "token revoked"),
 *   its waiters learn it, and a reviewer can no longer approve them;
 * - an agent token reads only its own calls (`GET /api/calls/{id}`, get_call); another agent's
 *   call answers 404 exactly like an unknown id; a reviewer reads every call.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.stop();
});

async function mcpClient(token: string) {
  const client = new Client({ name: "agent-tokens-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

function mcpText(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

async function callAs(token: string, tool: string, args: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/api/tools/${tool}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(args),
  });
  return { status: res.status, body: await res.json() };
}

async function getCall(token: string, callId: string, query = "") {
  const res = await fetch(`${server.url}/api/calls/${callId}${query}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

async function newAgent(name: string): Promise<{ id: string; token: string }> {
  const res = await server.reviewer("POST", "/api/agents", { name });
  expect(res.status).toBe(201);
  expect(res.body.token).toMatch(/^ar_agent_/);
  return { id: res.body.agent_id, token: res.body.token };
}

describe("the gateway's own secrets", () => {
  const secrets = () => [server.agentToken, server.reviewerToken, server.reviewerPassword];
  /** Every spelling the redactor promises to catch, of every secret. */
  const spellings = () => secrets().flatMap(secretSpellings);

  function expectNoSecret(text: string) {
    for (const s of spellings()) expect(text.toLowerCase()).not.toContain(s.toLowerCase());
  }

  beforeAll(async () => {
    // A file planted in the workspace that holds them, in clear, base64 and hex.
    const lines = secrets().flatMap((s) => [`value: ${s}`, Buffer.from(s).toString("base64"), Buffer.from(`xy${s}`).toString("base64"), Buffer.from(s).toString("hex"), s.toUpperCase()]);
    fs.writeFileSync(path.join(server.workspace, "planted.txt"), `${lines.join("\n")}\n`);
    fs.mkdirSync(path.join(server.workspace, "relaxed"));
    fs.writeFileSync(path.join(server.workspace, "relaxed", "planted.txt"), `${secrets().join("\n")}\n`);
    // A rule that relaxes masking for relaxed/**: the gateway's own secrets stay masked anyway.
    await addRule(await signInDashboard(server), { tool: "*", pathGlob: "relaxed/**", decision: "allow", note: "unmasked fixtures", options: JSON.stringify({ redact: false }) });
  });

  it.each([
    ["read_file", { path: "planted.txt" }],
    ["read_file", { path: "relaxed/planted.txt" }],
    ["search_files", { query: "value", path: "." }],
    ["run_command", { command: "cat planted.txt" }],
    ["run_command", { command: "cat relaxed/planted.txt" }],
    ["run_command", { command: "grep -r value ." }],
  ])("HTTP %s %j comes back masked", async (tool, args) => {
    const res = await server.call(tool, args);
    const text = JSON.stringify(res.body);
    expect(res.status, text).toBe(200);
    expectNoSecret(text);
    expect(text).toContain("[REDACTED:");
  });

  it("MCP read_file and run_command come back masked", async () => {
    const client = await mcpClient(server.agentToken);
    try {
      for (const [name, args] of [
        ["read_file", { path: "planted.txt" }],
        ["read_file", { path: "relaxed/planted.txt" }],
        ["run_command", { command: "cat planted.txt" }],
      ] as const) {
        const text = mcpText((await client.callTool({ name, arguments: args })) as CallToolResult);
        expectNoSecret(text);
        expect(text).toContain("[REDACTED:");
      }
    } finally {
      await client.close();
    }
  });

  it("a command line that carries them is masked in the output and in the stored row (target, arguments)", async () => {
    const res = await server.call("run_command", { command: `echo ${server.reviewerPassword} ${server.reviewerToken}` });
    expect(res.status).toBe(200);
    expectNoSecret(JSON.stringify(res.body));
    const [row] = await sql<Record<string, unknown>>(server.databaseUrl, `SELECT * FROM "ToolCall" WHERE id = $1`, [res.body.call_id]);
    expect(String(row.target)).toContain("[REDACTED:");
    expectNoSecret(JSON.stringify(row));
  });

  it("the database holds no clear copy (calls, events)", async () => {
    const calls = await sql<Record<string, unknown>>(server.databaseUrl, `SELECT * FROM "ToolCall"`);
    const events = await sql<Record<string, unknown>>(server.databaseUrl, `SELECT * FROM "Event"`);
    expect(calls.length).toBeGreaterThan(5);
    expectNoSecret(JSON.stringify(calls));
    expectNoSecret(JSON.stringify(events));
  });
});

describe("revoking an agent token", () => {
  it("ends its pending calls (602 token revoked), tells its waiters, and they can no longer be approved", async () => {
    const agent = await newAgent("to be revoked");
    // One call answered at once (601), one whose agent waits on the call itself, one polled.
    const queued = await callAs(agent.token, "write_file", { path: "revoked-a.txt", content: "a\n" }, { prefer: "wait=0" });
    expect(queued.status).toBe(202);
    const callId = queued.body.error.detail.call_id as string;
    const waiting = callAs(agent.token, "write_file", { path: "revoked-b.txt", content: "b\n" }, { prefer: "wait=30" });
    const polled = getCall(agent.token, callId, "?wait=30");
    let pending: string[] = [];
    for (let i = 0; i < 100 && pending.length < 2; i++) {
      pending = (await server.reviewer("GET", "/api/approvals")).body.approvals.filter((a: { agent_id: string }) => a.agent_id === agent.id).map((a: { call_id: string }) => a.call_id);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pending).toHaveLength(2);

    const revoked = await server.reviewer("POST", `/api/agents/${agent.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect([...revoked.body.ended_calls].sort()).toEqual([...pending].sort());

    for (const answer of [await waiting, await polled]) {
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 602, name: "approval_rejected", detail: { reason: "token revoked" } });
    }
    const approve = await server.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    expect(approve.status).toBe(409);
    expect(approve.body.error.detail).toMatchObject({ reason: "already_decided", status: "rejected" });
    expect(fs.existsSync(path.join(server.workspace, "revoked-a.txt"))).toBe(false);
    expect(fs.existsSync(path.join(server.workspace, "revoked-b.txt"))).toBe(false);
    // The reviewer sees why; the token itself no longer works.
    const status = await server.reviewer("GET", `/api/calls/${callId}`);
    expect(status.body.call).toMatchObject({ status: "rejected", review_reason: "token revoked" });
    expect((await callAs(agent.token, "list_directory", { path: "." })).status).toBe(401);
    // Revoking again changes nothing; an unknown agent is 404.
    expect((await server.reviewer("POST", `/api/agents/${agent.id}/revoke`)).body.ended_calls).toEqual([]);
    expect((await server.reviewer("POST", `/api/agents/agt_nope/revoke`)).status).toBe(404);
  }, 60_000);

  it("an approved call of a revoked agent that has not started does not run", async () => {
    const agent = await newAgent("approved then revoked");
    const queued = await callAs(agent.token, "write_file", { path: "revoked-c.txt", content: "c\n" }, { prefer: "wait=0" });
    const callId = queued.body.error.detail.call_id as string;
    // Approved while another instance owns the workspace, so nobody has started it yet.
    await sql(server.databaseUrl, `UPDATE "Workspace" SET "hostId" = 'other-host'`);
    try {
      await sql(server.databaseUrl, `UPDATE "ToolCall" SET status = 'approved', reviewer = 'elsewhere' WHERE id = $1`, [callId]);
      const revoked = await server.reviewer("POST", `/api/agents/${agent.id}/revoke`);
      expect(revoked.body.ended_calls).toEqual([callId]);
    } finally {
      await sql(server.databaseUrl, `UPDATE "Workspace" SET "hostId" = $1`, [`test-${new URL(server.url).port}`]);
    }
    await new Promise((r) => setTimeout(r, 2500)); // one backlog sweep
    expect(fs.existsSync(path.join(server.workspace, "revoked-c.txt"))).toBe(false);
    expect((await server.reviewer("GET", `/api/calls/${callId}`)).body.call.status).toBe("rejected");
  }, 30_000);
});

describe("who reads a call's result", () => {
  it("an agent reads its own calls; another agent's call is 404 like an unknown id; a reviewer reads all", async () => {
    fs.writeFileSync(path.join(server.workspace, "mine.txt"), "private result\n");
    const own = await server.call("read_file", { path: "mine.txt" });
    const callId = own.body.call_id as string;
    const other = await newAgent("another agent");

    const byOwner = await getCall(server.agentToken, callId);
    expect(byOwner.status).toBe(200);
    expect(JSON.stringify(byOwner.body)).toContain("private result");

    const byOther = await getCall(other.token, callId);
    const unknown = await getCall(other.token, "call_doesnotexist");
    expect(byOther.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(byOther.body)).not.toContain("private result");
    expect(byOther.body.error.name).toBe("not_found");
    expect(byOther.body.error.message.replace(callId, "ID")).toBe(unknown.body.error.message.replace("call_doesnotexist", "ID"));
    expect((await getCall(other.token, callId, "?wait=1")).status).toBe(404);

    const byReviewer = await server.reviewer("GET", `/api/calls/${callId}`);
    expect(byReviewer.status).toBe(200);
    expect(JSON.stringify(byReviewer.body)).toContain("private result");

    // get_call, through HTTP and MCP.
    const toolOther = await callAs(other.token, "get_call", { call_id: callId });
    expect(toolOther.status).toBe(404);
    expect(JSON.stringify(toolOther.body)).not.toContain("private result");
    const toolOwner = await server.call("get_call", { call_id: callId });
    expect(toolOwner.status).toBe(200);
    expect(JSON.stringify(toolOwner.body)).toContain("private result");
    const client = await mcpClient(other.token);
    try {
      const result = (await client.callTool({ name: "get_call", arguments: { call_id: callId } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(mcpText(result)).toContain("not_found");
      expect(mcpText(result)).not.toContain("private result");
    } finally {
      await client.close();
    }
  });
});
