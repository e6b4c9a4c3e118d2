import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_INSTRUCTIONS } from "@/lib/mcp/instructions";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * The MCP door with real MCP clients against the real product
 * (`scripts/start.ts` → `next start`): the official SDK client over Streamable HTTP, and the
 * MCP Inspector's CLI mode.
 */

const ROOT = path.resolve(__dirname, "../..");
let server: TestServer;
/** A second server whose approval wait is 1 s, so a waiting call answers 601. */
let shortWait: TestServer;

beforeAll(async () => {
  // One after the other: each start checks the build, and two at once could both rebuild.
  server = await startTestServer();
  shortWait = await startTestServer({ env: { AGENT_REACH_APPROVAL_WAIT_DEFAULT_S: "1" } });
  fs.writeFileSync(path.join(server.workspace, "notes.md"), "# Notes\nfirst line\nzweite Zeile — ünïcödé\n");
});

afterAll(async () => {
  await Promise.all([server?.stop(), shortWait?.stop()]);
});

async function connect(target: TestServer, token = target.agentToken) {
  const client = new Client({ name: "agent-reach-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${target.url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

function resultJson(result: CallToolResult): any {
  const first = result.content[0];
  expect(first.type).toBe("text");
  return JSON.parse((first as { text: string }).text);
}

async function pendingCall(target: TestServer, match: (a: { tool: string; args: any }) => boolean): Promise<{ call_id: string; preview: any }> {
  for (;;) {
    const list = await target.reviewer("GET", "/api/approvals");
    const found = list.body.approvals.find(match);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("MCP door with the official SDK client", () => {
  it("initializes with server info, instructions and a session id", async () => {
    const { client, transport } = await connect(server);
    expect(client.getServerVersion()?.name).toBe("agent-reach");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toBe(AGENT_INSTRUCTIONS);
    expect(transport.sessionId).toMatch(/^mcp_/);
    await client.close();
  });

  it("lists every registry tool with title, description, JSON Schema and annotations", async () => {
    const { client } = await connect(server);
    const { tools } = await client.listTools();
    const http = await (await fetch(`${server.url}/api/tools`)).json();
    expect(tools.map((t) => t.name)).toEqual(http.tools.map((t: { name: string }) => t.name));
    for (const tool of tools) {
      const listed = http.tools.find((t: { name: string }) => t.name === tool.name);
      expect(tool.title).toBe(listed.title);
      expect(tool.description).toBe(listed.description);
      expect(tool.inputSchema).toEqual(listed.input_schema);
      expect(tool.annotations).toEqual({ title: listed.title, ...listed.annotations });
    }
    const read = tools.find((t) => t.name === "read_file")!;
    expect(read.inputSchema.type).toBe("object");
    expect(read.inputSchema.required).toEqual(["path"]);
    expect(read.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "write_file")!.annotations?.destructiveHint).toBe(true);
    await client.close();
  });

  it("reads a file: data as JSON text and as structuredContent", async () => {
    const { client } = await connect(server);
    const result = (await client.callTool({ name: "read_file", arguments: { path: "notes.md", limit: 2 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const data = resultJson(result);
    expect(result.structuredContent).toEqual(data);
    expect(data.content).toBe("     1| # Notes\n     2| first line");
    expect(data.total_lines).toBe(3);
    expect(data.truncated).toBe(true);
    expect(data.next_offset).toBe(2);
    expect(result._meta?.["agent-reach/call_id"]).toMatch(/^call_/);
    const rest = (await client.callTool({ name: "read_file", arguments: { path: "notes.md", offset: 2 } })) as CallToolResult;
    expect(resultJson(rest).content).toBe("     3| zweite Zeile — ünïcödé");
    await client.close();
  });

  it.each([
    ["path outside the workspace", "read_file", { path: "../../etc/passwd" }, "path_outside_workspace", 201],
    ["a missing argument", "read_file", {}, "invalid_arguments", 101],
    ["an unknown tool", "no_such_tool", {}, "unknown_tool", 102],
    ["a missing file", "read_file", { path: "nope.txt" }, "not_found", 202],
  ])("answers %s with an isError result holding the HTTP door's error JSON", async (_label, tool, args, name, code) => {
    const { client } = await connect(server);
    const result = (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
    expect(result.isError).toBe(true);
    const body = resultJson(result);
    expect(result.structuredContent).toEqual(body);
    expect(body.ok).toBe(false);
    expect(body.call_id).toMatch(/^call_/);
    expect(body.error).toMatchObject({ name, code });
    const http = await server.call(tool, args);
    expect({ ...body, call_id: null }).toEqual({ ...http.body, call_id: null });
    await client.close();
  });

  it("a write waits for the reviewer with progress notifications, and returns the written result once approved", async () => {
    const { client } = await connect(server);
    const progress: Progress[] = [];
    let sawProgress!: () => void;
    const firstProgress = new Promise<void>((resolve) => (sawProgress = resolve));
    const call = client.callTool({ name: "write_file", arguments: { path: "plan.md", content: "step 1 — 设计\nstep 2\n" } }, undefined, {
      onprogress: (p) => {
        progress.push(p);
        sawProgress();
      },
      resetTimeoutOnProgress: true,
    });
    const pending = await pendingCall(server, (a) => a.tool === "write_file" && a.args.path === "plan.md");
    expect(pending.preview.diff).toContain("+step 1 — 设计");
    expect(fs.existsSync(path.join(server.workspace, "plan.md"))).toBe(false);
    await firstProgress;
    expect(progress[0].message).toContain(pending.call_id);
    const decision = await server.reviewer("POST", `/api/approvals/${pending.call_id}/approve`, {});
    expect(decision.status).toBe(200);
    const result = (await call) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const data = resultJson(result);
    expect(data.created).toBe(true);
    expect(data.backup_id).toBeNull();
    expect(result._meta?.["agent-reach/call_id"]).toBe(pending.call_id);
    expect(fs.readFileSync(path.join(server.workspace, "plan.md"), "utf8")).toBe("step 1 — 设计\nstep 2\n");
    await client.close();
  });

  it("reads and edits a GBK file written by glibc iconv; the result bytes are what iconv gives for the new text", async () => {
    const gbk = (text: string) => execFileSync("iconv", ["-f", "UTF-8", "-t", "GBK"], { input: Buffer.from(text, "utf8") });
    const before = "# 配置文件：服务器设置\r\nname = 张三\r\n# 计算用户的总金额，返回结果。\r\nport = 8080\r\n";
    const file = path.join(server.workspace, "config-gbk.ini");
    fs.writeFileSync(file, gbk(before));
    const { client } = await connect(server);
    const read = resultJson((await client.callTool({ name: "read_file", arguments: { path: "config-gbk.ini" } })) as CallToolResult);
    expect(read).toMatchObject({
      encoding: "gbk",
      encoding_source: "detected",
      eol: "crlf",
      content: "     1| # 配置文件：服务器设置\n     2| name = 张三\n     3| # 计算用户的总金额，返回结果。\n     4| port = 8080",
    });
    expect(read.encoding_confidence).toBeGreaterThanOrEqual(0.3);
    const call = client.callTool(
      { name: "edit_file", arguments: { path: "config-gbk.ini", old_string: "name = 张三", new_string: "name = 李四（管理员）", expected_sha256: read.sha256 } },
      undefined,
      { resetTimeoutOnProgress: true, onprogress: () => {} },
    );
    const pending = await pendingCall(server, (a) => a.tool === "edit_file" && a.args.path === "config-gbk.ini");
    // The reviewer sees decoded text and the encoding named.
    expect(pending.preview.diff).toContain("-name = 张三");
    expect(pending.preview.diff).toContain("+name = 李四（管理员）");
    expect(pending.preview.warnings.join("\n")).toContain("shown decoded from gbk");
    await server.reviewer("POST", `/api/approvals/${pending.call_id}/approve`, {});
    const result = (await call) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(resultJson(result)).toMatchObject({ encoding: "gbk", additions: 1, deletions: 1 });
    const expected = gbk(before.replace("name = 张三", "name = 李四（管理员）"));
    expect(fs.readFileSync(file).toString("hex")).toBe(expected.toString("hex"));
    await client.close();
  });

  it("a rejected write is an isError result with approval_rejected and the reason", async () => {
    const { client } = await connect(server);
    const call = client.callTool({ name: "write_file", arguments: { path: "rejected.md", content: "no\n" } });
    const pending = await pendingCall(server, (a) => a.tool === "write_file" && a.args.path === "rejected.md");
    await server.reviewer("POST", `/api/approvals/${pending.call_id}/reject`, { reason: "out of scope" });
    const result = (await call) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(resultJson(result).error).toMatchObject({ name: "approval_rejected", code: 602, detail: { reason: "out of scope" } });
    expect(fs.existsSync(path.join(server.workspace, "rejected.md"))).toBe(false);
    await client.close();
  });

  it("when nobody decides within the bound, answers 601 with the call_id, and get_call collects the outcome", async () => {
    const { client } = await connect(shortWait);
    const first = (await client.callTool({ name: "write_file", arguments: { path: "later.md", content: "later\n" } })) as CallToolResult;
    expect(first.isError).toBe(true);
    const pending = resultJson(first);
    expect(pending.error).toMatchObject({ name: "approval_pending", code: 601 });
    expect(pending.error.detail.call_id).toBe(pending.call_id);
    await shortWait.reviewer("POST", `/api/approvals/${pending.call_id}/approve`, {});
    const got = (await client.callTool({ name: "get_call", arguments: { call_id: pending.call_id, wait_ms: 10_000 } })) as CallToolResult;
    const data = resultJson(got);
    expect(data.status).toBe("succeeded");
    expect(data.result.ok).toBe(true);
    expect(fs.readFileSync(path.join(shortWait.workspace, "later.md"), "utf8")).toBe("later\n");
    await client.close();
  });

  it("records one audit Session per MCP session", async () => {
    const { client, transport } = await connect(server);
    await client.callTool({ name: "read_file", arguments: { path: "notes.md", limit: 1 } });
    await client.callTool({ name: "list_directory", arguments: { path: "." } });
    const [session] = await sql<{ id: string; door: string }>(server.databaseUrl, `SELECT id, door FROM "Session" WHERE "externalId" LIKE $1`, [
      `mcp:%:${transport.sessionId}`,
    ]);
    const calls = await sql<{ tool: string; door: string }>(server.databaseUrl, `SELECT tool, door FROM "ToolCall" WHERE "sessionId" = $1 ORDER BY "createdAt"`, [
      session.id,
    ]);
    expect(session.door).toBe("mcp");
    expect(calls).toEqual([
      { tool: "read_file", door: "mcp" },
      { tool: "list_directory", door: "mcp" },
    ]);
    await client.close();
  });

  it.each([
    ["no token", {}],
    ["a reviewer token", { authorization: "Bearer ar_rev_test_0123456789abcdefghijklmnopqrstuvwxyz" }],
  ])("refuses a request with %s: 401 and WWW-Authenticate", async (_label, headers) => {
    const res = await fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await res.json()).error.name).toBe("unauthorized");
  });

  it("the SDK client fails to connect with a bad token", async () => {
    await expect(connect(server, "ar_agent_not_a_real_token")).rejects.toThrow(/unauthorized/);
  });

  it("answers GET (no server-initiated stream) with 405", async () => {
    const res = await fetch(`${server.url}/api/mcp`, { headers: { authorization: `Bearer ${server.agentToken}`, accept: "text/event-stream" } });
    expect(res.status).toBe(405);
  });

  it("serves the same instructions as markdown at /api/agent-instructions", async () => {
    const res = await fetch(`${server.url}/api/agent-instructions`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/markdown");
    expect(await res.text()).toBe(AGENT_INSTRUCTIONS);
  });
});

describe("MCP door with the MCP Inspector CLI", () => {
  const exec = promisify(execFile);
  const inspector = (args: string[]) =>
    exec(process.execPath, [path.join(ROOT, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"), "--cli", ...args], {
      cwd: ROOT,
      env: { ...process.env, MCP_CATALOG_PATH: path.join(os.tmpdir(), `ar-inspector-${process.pid}.json`) },
      timeout: 60_000,
    });
  const base = () => [`${server.url}/api/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${server.agentToken}`];

  it("lists the tools over HTTP with the bearer header", async () => {
    const { stdout } = await inspector([...base(), "--method", "tools/list"]);
    const names = JSON.parse(stdout).tools.map((t: { name: string }) => t.name);
    expect(names).toContain("read_file");
    expect(names).toContain("run_command");
  });

  it("calls read_file over HTTP with the bearer header", async () => {
    const { stdout } = await inspector([...base(), "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=notes.md"]);
    const result = JSON.parse(stdout);
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent.content).toContain("zweite Zeile — ünïcödé");
  });
});
