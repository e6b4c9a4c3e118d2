import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult, type Task, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * The MCP door as current clients speak it, against the real product (`next start`):
 * - approvals as MCP Tasks with the v1 SDK client's task API (approve, reject, cancel);
 * - the revisions side by side: 2025-06-18 and 2025-11-25 (v1 SDK) and 2026-07-28 (v2 client);
 * - output schemas, structuredContent and the traceparent of `_meta`;
 * - DNS rebinding protection on every kind of door (Host and Origin spellings).
 */

let server: TestServer;
const validator = new AjvJsonSchemaValidator();

beforeAll(async () => {
  server = await startTestServer({ env: { AGENT_REACH_ALLOWED_HOSTS: "gateway.test" } });
  fs.writeFileSync(path.join(server.workspace, "notes.md"), "# Notes\nfirst line\n");
});

afterAll(async () => {
  await server?.stop();
});

async function connectV1() {
  const client = new Client({ name: "agent-reach-test", version: "1.0.0" }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${server.agentToken}` } },
  });
  await client.connect(transport);
  await client.listTools(); // the client learns which tools accept tasks and their output schemas
  return client;
}

async function connectModern(mode: "auto" | { pin: string } = { pin: "2026-07-28" }) {
  const client = new ModernClient({ name: "agent-reach-modern-test", version: "1.0.0" }, { versionNegotiation: { mode } });
  const transport = new ModernTransport(new URL(`${server.url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${server.agentToken}` } },
  });
  await client.connect(transport);
  return client;
}

async function pendingCall(match: (a: { tool: string; args: any; call_id?: string }) => boolean): Promise<{ call_id: string }> {
  for (let i = 0; i < 200; i++) {
    const list = await server.reviewer("GET", "/api/approvals");
    const found = list.body.approvals.find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no such pending call");
}

/** Starts a tool call as a task; returns the created task (the stream's first message). */
async function startTask(client: Client, name: string, args: Record<string, unknown>) {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: {} });
  const first = await stream.next();
  if (first.done || first.value.type !== "taskCreated") throw new Error(`expected a task, got ${JSON.stringify(first.value)}`);
  return { task: first.value.task as Task, stream };
}

async function waitForTask(client: Client, taskId: string, done: (t: Task) => boolean): Promise<Task> {
  for (let i = 0; i < 200; i++) {
    const task = (await client.experimental.tasks.getTask(taskId)) as Task;
    if (done(task)) return task;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${taskId} did not reach the expected state`);
}

describe("approvals as MCP tasks (v1 SDK client with task support)", () => {
  it("tools/list offers every tool as a task and advertises the tasks capability", async () => {
    const client = await connectV1();
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.execution?.taskSupport, tool.name).toBe("optional");
    await client.close();
  });

  it("a write that needs approval comes back as a working task, follows the queue and completes with the written result", async () => {
    const client = await connectV1();
    const { task, stream } = await startTask(client, "write_file", { path: "task.md", content: "written by a task\n" });
    expect(task.status).toBe("working");
    expect(task.taskId).toMatch(/^call_/);
    expect(task.statusMessage).toContain("Waiting for a reviewer");
    expect(task.statusMessage).toContain(`/approvals?call=${task.taskId}`);
    expect(task.pollInterval).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(server.workspace, "task.md"))).toBe(false);

    // The task is the pending call the reviewer sees.
    const pending = await pendingCall((a) => a.tool === "write_file" && a.args.path === "task.md");
    expect(pending.call_id).toBe(task.taskId);
    expect(((await client.experimental.tasks.getTask(task.taskId)) as Task).status).toBe("working");
    const decision = await server.reviewer("POST", `/api/approvals/${task.taskId}/approve`, {});
    expect(decision.status).toBe(200);

    // The client's own polling loop reaches the result.
    const seen: string[] = [];
    let result: CallToolResult | undefined;
    for await (const message of stream) {
      if (message.type === "taskStatus") seen.push(message.task.status);
      if (message.type === "result") result = message.result as CallToolResult;
      if (message.type === "error") throw message.error;
    }
    expect(seen.at(-1)).toBe("completed");
    expect(result?.isError).toBeFalsy();
    expect(result?.structuredContent).toMatchObject({ path: "task.md", created: true, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(result?._meta?.["agent-reach/call_id"]).toBe(task.taskId);
    expect(fs.readFileSync(path.join(server.workspace, "task.md"), "utf8")).toBe("written by a task\n");
    const [row] = await sql<{ status: string; reviewer: string }>(server.databaseUrl, `SELECT status, reviewer FROM "ToolCall" WHERE id = $1`, [task.taskId]);
    expect(row.status).toBe("succeeded");
    await client.close();
  });

  it("a command whose file changes are held: the task asks for input naming what the reviewer decides, and completes after approval", async () => {
    const client = await connectV1();
    for (let i = 0; i < 60; i++) {
      fs.mkdirSync(path.join(server.workspace, "heldtask"), { recursive: true });
      fs.writeFileSync(path.join(server.workspace, "heldtask", `f${i}.txt`), `${i}\n`);
    }
    const { task, stream } = await startTask(client, "run_command", { command: "rm -rf heldtask && echo removed" });
    // The client's own loop runs meanwhile: on input_required it asks tasks/result, which answers once decided.
    const seen: string[] = [];
    const consumed = (async () => {
      let result: CallToolResult | undefined;
      for await (const message of stream) {
        if (message.type === "taskStatus") seen.push(message.task.status);
        if (message.type === "result") result = message.result as CallToolResult;
        if (message.type === "error") throw message.error;
      }
      return result;
    })();
    // The policy may ask about the command line first (an ordinary approval: "working").
    const first = (await client.experimental.tasks.getTask(task.taskId)) as Task;
    if (first.status === "working" && /Waiting for a reviewer/.test(first.statusMessage ?? "")) {
      await pendingCall((a) => a.tool === "run_command" && a.call_id === task.taskId);
      expect((await server.reviewer("POST", `/api/approvals/${task.taskId}/approve`, {})).status).toBe(200);
    }
    const held = await waitForTask(client, task.taskId, (t) => t.status === "input_required");
    expect(held.statusMessage).toMatch(/already ran; a reviewer must decide whether its file changes \(0 created, 0 modified, 6\d deleted: heldtask/);
    expect(held.statusMessage).toMatch(/Held because: .*deletes 6\d files/);
    expect(held.statusMessage).toContain(`/approvals?call=${task.taskId}`);
    expect(fs.existsSync(path.join(server.workspace, "heldtask", "f0.txt"))).toBe(true);
    // get_call says the same to an agent without tasks.
    const got = await client.callTool({ name: "get_call", arguments: { call_id: task.taskId } });
    expect(got.structuredContent).toMatchObject({
      status: "pending",
      result: null,
      held_effects: { deleted: expect.any(Number), files_truncated: true, hold_reasons: [expect.stringMatching(/deletes 6\d files/)] },
    });
    expect((got.structuredContent as any).held_effects.files).toHaveLength(50);
    // The client's stream polls on its own interval: the task stays input_required until the
    // reviewer decides, so wait (bounded) for the stream to have seen it before deciding.
    for (const deadline = Date.now() + 30_000; !seen.includes("input_required") && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
    expect((await server.reviewer("POST", `/api/approvals/${task.taskId}/approve`, {})).status).toBe(200);
    const result = await consumed;
    expect(seen).toContain("input_required");
    expect(result?.isError).toBeFalsy();
    expect(result?.structuredContent).toMatchObject({ stdout: "removed\n", changes: { status: "applied" } });
    expect(fs.existsSync(path.join(server.workspace, "heldtask"))).toBe(false);
    expect(((await client.experimental.tasks.getTask(task.taskId)) as Task).status).toBe("completed");
    const after = await client.callTool({ name: "get_call", arguments: { call_id: task.taskId } });
    expect(after.structuredContent).toMatchObject({ status: "succeeded", held_effects: null });
    await client.close();
  }, 120_000);

  it("a rejected write fails with 602 and the reviewer's reason as the task's result", async () => {
    const client = await connectV1();
    const { task } = await startTask(client, "write_file", { path: "task-rejected.md", content: "no\n" });
    await pendingCall((a) => a.args.path === "task-rejected.md");
    await server.reviewer("POST", `/api/approvals/${task.taskId}/reject`, { reason: "not this file" });
    const failed = await waitForTask(client, task.taskId, (t) => t.status !== "working");
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toContain("approval_rejected (602)");
    const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ ok: false, call_id: task.taskId, error: { name: "approval_rejected", code: 602, detail: { reason: "not this file" } } });
    expect(fs.existsSync(path.join(server.workspace, "task-rejected.md"))).toBe(false);
    await client.close();
  });

  it("cancelling the task withdraws the pending call: audited, never run, no longer approvable", async () => {
    const client = await connectV1();
    const { task } = await startTask(client, "write_file", { path: "task-cancelled.md", content: "never\n" });
    await pendingCall((a) => a.args.path === "task-cancelled.md");
    const cancelled = (await client.experimental.tasks.cancelTask(task.taskId)) as Task;
    expect(cancelled.status).toBe("cancelled");
    const [row] = await sql<{ status: string; errorName: string; resultJson: string }>(
      server.databaseUrl,
      `SELECT status, "errorName", "resultJson" FROM "ToolCall" WHERE id = $1`,
      [task.taskId],
    );
    expect(row).toMatchObject({ status: "rejected", errorName: "approval_rejected" });
    expect(JSON.parse(row.resultJson).error.detail.reason).toBe("withdrawn");
    const events = await sql<{ type: string; actor: string }>(server.databaseUrl, `SELECT type, actor FROM "Event" WHERE "callId" = $1 ORDER BY seq`, [task.taskId]);
    expect(events.at(-1)).toEqual({ type: "call.rejected", actor: expect.stringMatching(/^agent:/) });
    expect(((await client.experimental.tasks.getTask(task.taskId)) as Task).status).toBe("cancelled");
    const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ ok: false, error: { name: "approval_rejected", code: 602, detail: { reason: "withdrawn" } } });
    const approve = await server.reviewer("POST", `/api/approvals/${task.taskId}/approve`, {});
    expect(approve.status).toBe(409);
    const list = await server.reviewer("GET", "/api/approvals");
    expect(list.body.approvals.some((a: { call_id: string }) => a.call_id === task.taskId)).toBe(false);
    expect(fs.existsSync(path.join(server.workspace, "task-cancelled.md"))).toBe(false);
    // A finished task cannot be cancelled again.
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/terminal|cancel/i);
    await client.close();
  });

  it("an approved call that already ran cannot be withdrawn; a call needing no approval is a completed task at once", async () => {
    const client = await connectV1();
    const { task } = await startTask(client, "read_file", { path: "notes.md" });
    expect(task.status).toBe("completed");
    const result = (await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ path: "notes.md", total_lines: 2 });
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow();
    await client.close();
  });

  it("tasks are the agent's own calls: an unknown id is not found, and tasks/list shows the agent's calls", async () => {
    const client = await connectV1();
    await expect(client.experimental.tasks.getTask("call_does_not_exist")).rejects.toThrow(/not found/i);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.length).toBeGreaterThan(0);
    expect(listed.tasks.every((t) => t.taskId.startsWith("call_"))).toBe(true);
    await client.close();
  });

  it("a plain call (no task) still waits with progress and answers as before", async () => {
    const client = await connectV1();
    const result = (await client.callTool({ name: "read_file", arguments: { path: "notes.md", limit: 1 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { content: string }).content).toBe("     1| # Notes");
    await client.close();
  });
});

describe("protocol revisions side by side", () => {
  async function rpc(body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.agentToken}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const json = res.headers.get("content-type")?.includes("text/event-stream")
      ? JSON.parse(text.split("\n").filter((l) => l.startsWith("data: ")).at(-1)!.slice(6))
      : JSON.parse(text);
    return { status: res.status, headers: res.headers, json };
  }

  it("a 2025-06-18 client initializes, lists and calls tools", async () => {
    const init = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old-client", version: "0.1" } },
    });
    expect(init.json.result.protocolVersion).toBe("2025-06-18");
    const h = { "mcp-protocol-version": "2025-06-18", "mcp-session-id": init.headers.get("mcp-session-id")! };
    const list = await rpc({ jsonrpc: "2.0", id: 2, method: "tools/list" }, h);
    expect(list.json.result.tools.map((t: Tool) => t.name)).toContain("write_file");
    const call = await rpc({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read_file", arguments: { path: "notes.md" } } }, h);
    expect(call.json.result.isError ?? false).toBe(false);
    expect(call.json.result.structuredContent.total_lines).toBe(2);
  });

  it("a 2025-11-25 client (v1 SDK) negotiates its revision, lists and calls tools", async () => {
    const client = await connectV1();
    const transport = (client as unknown as { _transport: { protocolVersion?: string } })._transport;
    expect(transport.protocolVersion).toBe("2025-11-25");
    const result = (await client.callTool({ name: "list_directory", arguments: { path: "." } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    await client.close();
  });

  it.each([
    ["pinned to 2026-07-28", { pin: "2026-07-28" }],
    ["negotiating (auto)", "auto"],
  ] as const)("a 2026-07-28 client (v2 SDK, %s) discovers the server, lists and calls tools", async (_label, mode) => {
    const client = await connectModern(mode as "auto" | { pin: string });
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    expect(client.getServerVersion()?.name).toBe("agent-reach");
    expect(client.getInstructions()).toContain("Agent Reach");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("run_command");
    const read = tools.find((t) => t.name === "read_file")!;
    expect(read.outputSchema).toBeDefined();
    expect(read.annotations?.readOnlyHint).toBe(true);
    const result = await client.callTool({ name: "read_file", arguments: { path: "notes.md" } });
    expect(result.isError ?? false).toBe(false);
    expect(validator.getValidator(read.outputSchema as object)(result.structuredContent).valid).toBe(true);
    expect((result.structuredContent as { content: string }).content).toContain("first line");
    const bad = await client.callTool({ name: "read_file", arguments: { path: "../../etc/passwd" } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ ok: false, error: { name: "path_outside_workspace" } });
    await client.close();
  });

  it("the 2026-07-28 client's write waits for the reviewer with progress, and returns the written result", async () => {
    const client = await connectModern();
    const progress: Array<{ message?: string }> = [];
    let sawProgress!: () => void;
    const firstProgress = new Promise<void>((resolve) => (sawProgress = resolve));
    const call = client.callTool(
      { name: "write_file", arguments: { path: "modern.md", content: "modern\n" } },
      {
        onprogress: (p) => {
          progress.push(p);
          sawProgress();
        },
        resetTimeoutOnProgress: true,
      },
    );
    const pending = await pendingCall((a) => a.args.path === "modern.md");
    await firstProgress;
    expect(progress[0].message).toContain(pending.call_id);
    await server.reviewer("POST", `/api/approvals/${pending.call_id}/approve`, {});
    const result = await call;
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ path: "modern.md", created: true });
    expect(fs.readFileSync(path.join(server.workspace, "modern.md"), "utf8")).toBe("modern\n");
    await client.close();
  });
});

describe("structured output and trace context", () => {
  it("every tool lists an outputSchema, and results of every tool validate against it (get_call included)", async () => {
    const client = await connectV1();
    const { tools } = await client.listTools();
    const schemas = new Map(tools.map((t) => [t.name, t.outputSchema]));
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe("object");
    const calls: Array<[string, Record<string, unknown>]> = [
      ["read_file", { path: "notes.md" }],
      ["list_directory", { path: "." }],
      ["search_files", { query: "Notes" }],
      ["run_command", { command: "ls" }],
      ["transform", { input: "a: 1", from: "yaml", to: "json" }],
      ["list_backups", {}],
      ["read_file", { path: "missing.md" }],
    ];
    for (const [name, args] of calls) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(validator.getValidator(schemas.get(name) as object)(result.structuredContent).valid, name).toBe(true);
    }
    const someCall = (await client.callTool({ name: "read_file", arguments: { path: "notes.md" } })) as CallToolResult;
    const got = (await client.callTool({ name: "get_call", arguments: { call_id: someCall._meta?.["agent-reach/call_id"] as string } })) as CallToolResult;
    expect(got.isError).toBeFalsy();
    expect(validator.getValidator(schemas.get("get_call") as object)(got.structuredContent).valid).toBe(true);
    await client.close();
  });

  it("stores a well-formed traceparent from _meta with the call, and ignores a malformed one", async () => {
    const client = await connectV1();
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const good = (await client.callTool({ name: "read_file", arguments: { path: "notes.md" }, _meta: { traceparent } })) as CallToolResult;
    const bad = (await client.callTool({ name: "read_file", arguments: { path: "notes.md" }, _meta: { traceparent: "00-zz-not-a-trace" } })) as CallToolResult;
    const rows = await sql<{ id: string; traceparent: string | null }>(server.databaseUrl, `SELECT id, traceparent FROM "ToolCall" WHERE id IN ($1, $2)`, [
      good._meta?.["agent-reach/call_id"],
      bad._meta?.["agent-reach/call_id"],
    ]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.traceparent]))).toEqual({
      [good._meta?.["agent-reach/call_id"] as string]: traceparent,
      [bad._meta?.["agent-reach/call_id"] as string]: null,
    });
    await client.close();
  });
});

describe("DNS rebinding protection on every door", () => {
  /** A raw HTTP request, so Host can be anything (fetch fixes it to the URL's). */
  function raw(pathname: string, headers: Record<string, string>, method = "GET", body?: string): Promise<{ status: number; body: string }> {
    const url = new URL(server.url);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: pathname, method, headers, setHost: false }, (res) => {
        let data = "";
        res.on("data", (d) => (data += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: data }));
        // The event stream never ends by itself: the status is all we need.
        if (res.headers["content-type"]?.includes("text/event-stream")) {
          resolve({ status: res.statusCode!, body: "" });
          req.destroy();
        }
      });
      req.on("error", reject);
      if (body) req.write(body);
      req.end();
    });
  }
  const port = () => new URL(server.url).port;
  const mcpBody = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  const mcpHeaders = () => ({ authorization: `Bearer ${server.agentToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" });

  const doors: Array<[string, string, string, () => Record<string, string>, string | undefined]> = [
    ["health", "/api/health", "GET", () => ({}), undefined],
    ["tool list", "/api/tools", "GET", () => ({}), undefined],
    ["MCP", "/api/mcp", "POST", mcpHeaders, mcpBody],
    ["event stream", "/api/events", "GET", () => ({ authorization: `Bearer ${server.reviewerToken}` }), undefined],
    ["dashboard page", "/", "GET", () => ({}), undefined],
    ["login page", "/login", "GET", () => ({}), undefined],
    ["server action", "/login", "POST", () => ({ "next-action": "0123456789abcdef0123456789abcdef01234567", "content-type": "text/plain;charset=UTF-8" }), "[]"],
  ];

  it.each(doors)("%s: a foreign Host gets 403", async (_label, pathname, method, headers, body) => {
    for (const host of ["evil.example", `127.0.0.1.nip.io:${port()}`, `localhost.evil.example:${port()}`, `EVIL.example.:${port()}`, `0.0.0.0:${port()}`]) {
      const res = await raw(pathname, { ...headers(), host }, method, body);
      expect(res.status, `${host} → ${pathname}`).toBe(403);
      expect(JSON.parse(res.body).error).toMatchObject({ name: "forbidden", detail: { reason: "host_not_allowed", header: "host" } });
    }
  });

  it.each(doors)("%s: a foreign or null Origin gets 403, never a 500", async (_label, pathname, method, headers, body) => {
    for (const origin of ["null", "http://evil.example", `http://127.0.0.1.nip.io:${port()}`, "file://"]) {
      const res = await raw(pathname, { ...headers(), host: `127.0.0.1:${port()}`, origin }, method, body);
      expect(res.status, `${origin} → ${pathname}`).toBe(403);
    }
  });

  it.each([`127.0.0.1:${"PORT"}`, `localhost:${"PORT"}`, `LOCALHOST:${"PORT"}`, `127.1:${"PORT"}`, `[::ffff:127.0.0.1]:${"PORT"}`, "gateway.test", `gateway.test.:${"PORT"}`])(
    "Host %s is allowed (loopback spellings and the operator list), with or without a same-site Origin",
    async (spelling) => {
      const host = spelling.replace("PORT", port());
      expect((await raw("/api/health", { host })).status).toBe(200);
      expect((await raw("/api/mcp", { ...mcpHeaders(), host }, "POST", mcpBody)).status).toBe(200);
      expect((await raw("/api/mcp", { ...mcpHeaders(), host, origin: `http://${host}` }, "POST", mcpBody)).status).toBe(200);
    },
  );
});
