import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * Every tool through the real HTTP door of a running server (`scripts/start.ts` → `next start`)
 * on a real SQLite file, with a real npm package (express, unpacked from the registry with
 * `npm pack`) as the workspace.
 */

const sha256 = (b: Buffer | string) => crypto.createHash("sha256").update(b).digest("hex");

let server: TestServer;
let ws: string;
let logFile: string;

beforeAll(async () => {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-express-")));
  execFileSync("npm", ["pack", "express@4.21.2", "--pack-destination", tmp, "--silent"], { cwd: tmp, stdio: "pipe" });
  const tarball = fs.readdirSync(tmp).find((f) => f.endsWith(".tgz"))!;
  execFileSync("tar", ["-xzf", path.join(tmp, tarball), "-C", tmp]);
  ws = path.join(tmp, "package");
  logFile = path.join(tmp, "calls.jsonl");
  server = await startTestServer({ workspace: ws, env: { AGENT_REACH_LOG: logFile } });
});

afterAll(async () => {
  await server?.stop();
});

async function approve(callId: string, body: unknown = {}) {
  return server.reviewer("POST", `/api/approvals/${callId}/approve`, body);
}

describe("HTTP door", () => {
  it("lists every tool with a JSON Schema for function calling", async () => {
    const res = await fetch(`${server.url}/api/tools`);
    expect(res.status).toBe(200);
    const { tools } = await res.json();
    const names = tools.map((t: { name: string }) => t.name);
    for (const name of ["read_file", "write_file", "edit_file", "list_directory", "search_files", "run_command", "fetch_url", "transform", "list_backups", "restore_backup", "get_call"]) {
      expect(names).toContain(name);
    }
    const read = tools.find((t: { name: string }) => t.name === "read_file");
    expect(read.input_schema.type).toBe("object");
    expect(read.input_schema.properties.path.description).toBeTruthy();
    expect(read.input_schema.additionalProperties).toBe(false);
  });

  it("reads a real file of a real package (read_file)", async () => {
    const res = await server.call("read_file", { path: "Readme.md", limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.call_id).toMatch(/^call_/);
    expect(res.body.data.content.split("\n")[0]).toMatch(/^\s+1\| /);
    expect(res.body.data.total_lines).toBeGreaterThan(5);
    expect(res.body.data.truncated).toBe(true);
    expect(res.body.data.sha256).toBe(sha256(fs.readFileSync(path.join(ws, "Readme.md"))));
  });

  it.each([
    ["no token", {}, 401, "unauthorized"],
    ["a reviewer token", { authorization: "Bearer ar_rev_test_0123456789abcdefghijklmnopqrstuvwxyz" }, 401, "unauthorized"],
  ])("refuses a call with %s", async (_label, headers, status, name) => {
    const res = await fetch(`${server.url}/api/tools/read_file`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ path: "Readme.md" }),
    });
    expect(res.status).toBe(status);
    expect((await res.json()).error.name).toBe(name);
  });

  it("refuses a token scoped to another workspace with 607 forbidden, and records the call", async () => {
    const token = "ar_agent_scoped_elsewhere_0123456789abcdefghijklmnop";
    await sql(
      server.databaseUrl,
      `INSERT INTO "Agent" (id, name, "tokenHash", "tokenPrefix", "workspaceId", "createdAt") VALUES ($1, $2, $3, $4, $5, $6)`,
      ["agt_scoped", "scoped agent", sha256(token), token.slice(0, 14), "ws_some_other_workspace", new Date()],
    );
    const res = await server.call("read_file", { path: "Readme.md" }, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(403);
    expect(res.body.error.name).toBe("forbidden");
    expect(res.body.error.code).toBe(607);
    const [row] = await sql<{ status: string }>(server.databaseUrl, `SELECT status FROM "ToolCall" WHERE id = $1`, [res.body.call_id]);
    expect(row.status).toBe("rejected");
  });

  it.each([
    ["unknown tool", "no_such_tool", { path: "x" }, 404, "unknown_tool"],
    ["missing argument", "read_file", {}, 400, "invalid_arguments"],
    ["extra argument", "read_file", { path: "Readme.md", bogus: 1 }, 400, "invalid_arguments"],
    ["wrong type", "read_file", { path: 42 }, 400, "invalid_arguments"],
    ["path outside", "read_file", { path: "../../etc/passwd" }, 403, "path_outside_workspace"],
    ["NUL byte", "read_file", { path: "Readme.md\u0000.png" }, 400, "path_invalid"],
    ["missing file", "read_file", { path: "nope.txt" }, 404, "not_found"],
    ["directory", "read_file", { path: "lib" }, 400, "is_directory"],
  ])("answers %s with a clear error", async (_label, tool, args, status, name) => {
    const res = await server.call(tool, args);
    expect(res.status).toBe(status);
    expect(res.body.ok).toBe(false);
    expect(res.body.error.name).toBe(name);
    expect(typeof res.body.error.code).toBe("number");
    expect(res.body.error.message).toBeTruthy();
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/); // no stack trace
  });

  it("refuses arguments nested 5,000 levels deep with a clear 4xx, for any tool, and keeps serving", async () => {
    // Sent as raw text: the test's own JSON.stringify would overflow on such a value.
    const res = await fetch(`${server.url}/api/tools/read_file`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.agentToken}`, "content-type": "application/json" },
      body: `{"path":"Readme.md","x":${"[".repeat(5000)}${"]".repeat(5000)}}`,
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ name: "invalid_arguments", detail: { reason: "too_deep" } });
    const transform = await server.call("transform", { input: "[".repeat(5000) + "]".repeat(5000), from: "json", to: "yaml" });
    expect(transform.status).toBeLessThan(500);
    expect(["invalid_arguments", "transform_failed"]).toContain(transform.body.error.name);
    expect(transform.body.error.retryable).toBe(false);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  it("refuses a body that is not JSON and one over the size limit", async () => {
    const bad = await fetch(`${server.url}/api/tools/read_file`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.agentToken}` },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.name).toBe("invalid_arguments");
    const big = await fetch(`${server.url}/api/tools/write_file`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.agentToken}`, "content-type": "application/json" },
      body: JSON.stringify({ path: "big.txt", content: "x".repeat(17 * 1024 * 1024) }),
    });
    expect(big.status).toBe(413);
    expect((await big.json()).error.name).toBe("payload_too_large");
  });

  it("lists a directory and searches files", async () => {
    const list = await server.call("list_directory", { path: "lib" });
    expect(list.status).toBe(200);
    expect(list.body.data.entries.map((e: { name: string }) => e.name)).toContain("express.js");
    const search = await server.call("search_files", { query: "createApplication", path: "lib" });
    expect(search.status).toBe(200);
    expect(search.body.data.matches.some((m: { path: string }) => m.path === "lib/express.js")).toBe(true);
  });

  it("edits a file after approval, with a backup that restore_backup brings back byte-exact", async () => {
    const file = path.join(ws, "lib/express.js");
    const original = fs.readFileSync(file);
    const edit = await server.call(
      "edit_file",
      { path: "lib/express.js", old_string: "function createApplication() {", new_string: "function createApplication() { // reviewed" },
      { prefer: "wait=0" },
    );
    expect(edit.status).toBe(202);
    expect(edit.body.error.name).toBe("approval_pending");
    expect(edit.body.error.code).toBe(601);
    expect(edit.headers.get("location")).toContain(`/api/calls/${edit.body.call_id}`);
    expect(fs.readFileSync(file).equals(original)).toBe(true); // nothing ran yet

    const pending = await server.reviewer("GET", "/api/approvals");
    const item = pending.body.approvals.find((a: { call_id: string }) => a.call_id === edit.body.call_id);
    expect(item.preview.diff).toContain("+function createApplication() { // reviewed");
    expect(item.preview.targetSha256).toBe(sha256(original));

    const approved = await approve(edit.body.call_id);
    expect(approved.status).toBe(200);
    expect(approved.body.result.ok).toBe(true);
    const backupId = approved.body.result.data.backup_id;
    expect(backupId).toMatch(/^bak_/);
    expect(fs.readFileSync(file, "utf8")).toContain("// reviewed");

    const status = await fetch(`${server.url}/api/calls/${edit.body.call_id}`, { headers: { authorization: `Bearer ${server.agentToken}` } });
    const statusBody = await status.json();
    expect(status.status).toBe(200);
    expect(statusBody.ok).toBe(true);
    expect(statusBody.call.status).toBe("succeeded");
    expect(statusBody.data.backup_id).toBe(backupId);

    const backups = await server.call("list_backups", { path: "lib/express.js" });
    expect(backups.body.data.backups.map((b: { id: string }) => b.id)).toContain(backupId);

    const restore = await server.call("restore_backup", { backup_id: backupId }, { prefer: "wait=0" });
    expect(restore.body.error.name).toBe("approval_pending");
    const restored = await approve(restore.body.call_id);
    expect(restored.body.result.ok).toBe(true);
    expect(fs.readFileSync(file).equals(original)).toBe(true);
  });

  it("writes a new file after approval and reports the diff (write_file)", async () => {
    const res = await server.call("write_file", { path: "notes/new.md", content: "hello\n" }, { prefer: "wait=0" });
    expect(res.body.error.name).toBe("approval_pending");
    const approved = await approve(res.body.call_id);
    expect(approved.body.result.data.created).toBe(true);
    expect(approved.body.result.data.diff).toContain("+hello");
    expect(fs.readFileSync(path.join(ws, "notes/new.md"), "utf8")).toBe("hello\n");
  });

  it("runs an allowed read-only command at once and queues others (run_command)", async () => {
    const ls = await server.call("run_command", { command: "ls lib | head -3" });
    expect(ls.status).toBe(200);
    expect(ls.body.data.exit_code).toBe(0);
    expect(ls.body.data.stdout).toContain("application.js");
    const touch = await server.call("run_command", { command: "touch pwned" }, { prefer: "wait=0" });
    expect(touch.body.error.name).toBe("approval_pending");
    expect(fs.existsSync(path.join(ws, "pwned"))).toBe(false);
  });

  it("blocks a fetch of a loopback address before connecting (fetch_url)", async () => {
    const res = await server.call("fetch_url", { url: `${server.url}/api/health` }, { prefer: "wait=0" });
    // fetch_url asks by default; the SSRF check may answer first. Either way nothing is fetched.
    if (res.body.error.name === "approval_pending") {
      const approved = await approve(res.body.call_id);
      expect(approved.body.result.error.name).toBe("ssrf_blocked");
    } else {
      expect(res.body.error.name).toBe("ssrf_blocked");
    }
  });

  it("converts JSON to YAML (transform)", async () => {
    const res = await server.call("transform", { input: '{"a":1,"b":[2,3]}', from: "json", to: "yaml" });
    expect(res.status).toBe(200);
    expect(res.body.data.output).toContain("a: 1");
  });

  it("returns a finished call's outcome (get_call)", async () => {
    const read = await server.call("read_file", { path: "package.json", limit: 1 });
    const got = await server.call("get_call", { call_id: read.body.call_id });
    expect(got.body.data.status).toBe("succeeded");
    expect(got.body.data.result.data.content).toBe(read.body.data.content);
  });

  it("keeps an intact hash chain and a JSONL line per finished call", async () => {
    const verify = await server.reviewer("GET", "/api/audit/verify");
    expect(verify.body.ok).toBe(true);
    expect(verify.body.checked).toBeGreaterThan(10);
    const lines = fs.readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.some((l) => l.tool === "edit_file" && l.status === "succeeded" && l.backup_id)).toBe(true);
  });

  it("answers the health check", async () => {
    const res = await fetch(`${server.url}/api/health`);
    const body = await res.json();
    expect(body.ok).toBe(true);
    expect(body.checks.map((c: { name: string }) => c.name)).toEqual(["database", "workspace", "disk", "containment", "sandbox", "commands"]);
  });
});
