import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startTestServer, type TestServer } from "@/tests/helpers/server";
import { spawn } from "node:child_process";
import { CLI, runCli } from "@/tests/cli/run-cli";
import { sql } from "@/tests/helpers/sql";

/**
 * The agent-reach CLI as a subprocess against the real server: every exit
 * status class, @file, -, text and json formats, non-ASCII output, and the commands generated
 * from GET /api/tools.
 */

let server: TestServer;
let env: Record<string, string>;
let local: string;
/** A stand-in for a broken proxy in front of the server: answers every request with an HTML 502. */
let proxy: http.Server;
let proxyUrl: string;

const UNICODE = "Grüße, 世界 🌍 — naïve café\n";

beforeAll(async () => {
  server = await startTestServer();
  env = { AGENT_REACH_URL: server.url, AGENT_REACH_TOKEN: server.agentToken };
  fs.writeFileSync(path.join(server.workspace, "notes.md"), "alpha\nbeta\ngamma\n");
  fs.writeFileSync(path.join(server.workspace, "unicode.txt"), UNICODE);
  fs.writeFileSync(path.join(server.workspace, "image.bin"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 1, 2, 3]));
  local = fs.mkdtempSync(path.join(os.tmpdir(), "ar-cli-local-"));
  fs.writeFileSync(path.join(local, "body.md"), "from a local file — ok\n");
  fs.writeFileSync(path.join(local, "data.json"), '{"name":"Zoë","tags":["a","b"]}');
  proxy = http.createServer((_req, res) => {
    res.writeHead(502, { "content-type": "text/html" });
    res.end("<html><body>Bad Gateway</body></html>");
  });
  const port = await freePort();
  await new Promise<void>((resolve) => proxy.listen(port, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
});

const cli = (args: string[], options: { input?: string | Buffer; env?: Record<string, string> } = {}) =>
  runCli(args, { env: { ...env, ...options.env }, input: options.input });

/** Runs a CLI call that waits for approval and approves it through the reviewer API meanwhile. */
async function approved(args: string[], match: (a: { tool: string; args: any }) => boolean, input?: string) {
  const run = cli([...args, "--wait", "60"], { input });
  for (;;) {
    const list = await server.reviewer("GET", "/api/approvals");
    const found = list.body.approvals.find(match);
    if (found) {
      await server.reviewer("POST", `/api/approvals/${found.call_id}/approve`, {});
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return run;
}

describe("agent-reach CLI", () => {
  it("prints the success envelope as JSON on stdout with exit 0", async () => {
    const res = await cli(["read-file", "--path", "notes.md", "--limit", "2"]);
    expect(res.status).toBe(0);
    expect(res.stderr).toBe("");
    const body = JSON.parse(res.stdout);
    expect(body).toMatchObject({ ok: true, data: { content: "     1| alpha\n     2| beta", truncated: true, next_offset: 2 } });
    expect(body.call_id).toMatch(/^call_/);
  });

  it("prints the content itself with --format text", async () => {
    const res = await cli(["--format", "text", "read-file", "notes.md", "--no-include-line-numbers"]);
    expect(res.status).toBe(0);
    expect(res.stdout).toBe("alpha\nbeta\ngamma\n");
  });

  it.each(["json", "text"])("writes non-ASCII output as UTF-8 (%s)", async (format) => {
    const res = await cli(["read-file", "--path", "unicode.txt", "--no-include-line-numbers", "--format", format]);
    expect(res.status).toBe(0);
    const text = format === "json" ? `${JSON.parse(res.stdout).data.content}\n` : res.stdout;
    expect(text).toBe(UNICODE);
    expect(res.stdoutBytes.includes(Buffer.from("Grüße, 世界 🌍", "utf8"))).toBe(true); // not \u-escaped
  });

  it.each([
    ["an unknown option (checked locally)", 2, ["read-file", "--path", "notes.md", "--bogus", "1"], "invalid_arguments"],
    ["an argument the server refuses", 2, ["read-file", "--path", "notes.md", "--limit", "0"], "invalid_arguments"],
    ["an unknown command", 2, ["frobnicate"], "unknown_tool"],
    ["a path outside the workspace", 3, ["read-file", "--path", "../../etc/passwd"], "path_outside_workspace"],
    ["a missing workspace file", 3, ["read-file", "--path", "missing.txt"], "not_found"],
    ["a missing local @file", 3, ["write-file", "--path", "x.md", "--content", "@/nonexistent/body.md"], "not_found"],
    ["a binary file", 5, ["read-file", "--path", "image.bin"], "binary_file"],
    ["a write nobody approved yet", 6, ["write-file", "--path", "queued.md", "--content", "x", "--wait", "0"], "approval_pending"],
  ])("reports %s on stderr with exit %i", async (_label, status, args, name) => {
    const res = await cli(args);
    expect(res.status).toBe(status);
    expect(res.stdout).toBe("");
    const body = JSON.parse(res.stderr);
    expect(body.ok).toBe(false);
    expect(body.error.name).toBe(name);
  });

  it("exits 6 for a token the server rejects", async () => {
    const res = await cli(["read-file", "--path", "notes.md"], { env: { AGENT_REACH_TOKEN: "ar_agent_wrong" } });
    expect(res.status).toBe(6);
    expect(JSON.parse(res.stderr).error.name).toBe("unauthorized");
  });

  it("exits 4 when the server cannot be reached", async () => {
    const res = await cli(["read-file", "--path", "notes.md", "--server", `http://127.0.0.1:${await freePort()}`]);
    expect(res.status).toBe(4);
    expect(JSON.parse(res.stderr).error).toMatchObject({ name: "fetch_failed", code: 302, retryable: true });
  });

  it("exits 1 when something in between answers with a non-envelope (a proxy's 502 page)", async () => {
    const res = await cli(["list-tools"], { env: { AGENT_REACH_URL: proxyUrl } });
    expect(res.status).toBe(1);
    expect(JSON.parse(res.stderr).error).toMatchObject({ name: "internal", detail: { status: 502 } });
  });

  it("prints errors as text with --format text", async () => {
    const res = await cli(["--format", "text", "read-file", "--path", "../outside.txt"]);
    expect(res.status).toBe(3);
    expect(res.stderr).toMatch(/^error 201 path_outside_workspace: /);
  });

  it("sends an @file value (read locally) and waits for the approval", async () => {
    const res = await approved(["write-file", "--path", "from-file.md", "--content", `@${path.join(local, "body.md")}`], (a) => a.args.path === "from-file.md");
    expect(res.status).toBe(0);
    expect(JSON.parse(res.stdout).data.created).toBe(true);
    expect(fs.readFileSync(path.join(server.workspace, "from-file.md"), "utf8")).toBe("from a local file — ok\n");
  });

  it("sends standard input for a - value", async () => {
    const res = await approved(["write-file", "--path", "piped.md", "--content", "-"], (a) => a.args.path === "piped.md", UNICODE);
    expect(res.status).toBe(0);
    expect(fs.readFileSync(path.join(server.workspace, "piped.md"), "utf8")).toBe(UNICODE);
  });

  it("transforms @file and stdin input (the CLI's transform)", async () => {
    const fromFile = await cli(["transform", "--input", `@${path.join(local, "data.json")}`, "--from", "json", "--to", "yaml", "--format", "text"]);
    expect(fromFile.status).toBe(0);
    expect(fromFile.stdout).toContain("name: Zoë");
    const fromStdin = await cli(["transform", "--input", "-", "--from", "json", "--to", "yaml"], { input: '{"ключ":"значение"}' });
    expect(fromStdin.status).toBe(0);
    expect(JSON.parse(fromStdin.stdout).data.output).toContain("ключ: значение");
    const bad = await cli(["transform", "--input", "-", "--from", "json", "--to", "yaml"], { input: "{not json" });
    expect(bad.status).toBe(5);
    expect(JSON.parse(bad.stderr).error.name).toBe("transform_failed");
  });

  it("waits for a queued call with `wait <call_id>`", async () => {
    const queued = await cli(["write-file", "--path", "later.md", "--content", "later\n", "--wait", "0"]);
    const callId = JSON.parse(queued.stderr).call_id;
    const waiting = cli(["wait", callId]);
    await server.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    const res = await waiting;
    expect(res.status).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, call_id: callId, data: { created: true } });
  });

  it("gives up `wait` after --wait seconds with 601 and exit 6", async () => {
    const queued = await cli(["run", "--command", "touch never-approved", "--wait", "0"]);
    const callId = JSON.parse(queued.stderr).call_id;
    const res = await cli(["wait", callId, "--wait", "1"]);
    expect(res.status).toBe(6);
    expect(JSON.parse(res.stderr).error.name).toBe("approval_pending");
  });

  it("lists the tools with their subcommand names", async () => {
    const json = await cli(["list-tools"]);
    expect(json.status).toBe(0);
    const commands = JSON.parse(json.stdout).data.tools.map((t: { command: string }) => t.command);
    for (const c of ["read-file", "write-file", "edit-file", "run", "list-dir", "search", "fetch-url", "transform", "list-backups", "restore-backup", "get-call"]) {
      expect(commands).toContain(c);
    }
    const text = await cli(["list-tools", "--format", "text"]);
    expect(text.stdout).toMatch(/^run\s+.*\(run_command, exec\)$/m);
  });

  it("generates every tool's --help from its JSON Schema", async () => {
    const { tools } = await (await fetch(`${server.url}/api/tools`)).json();
    for (const tool of tools) {
      const command = tool.name.replace(/_/g, "-");
      const res = await cli([command, "--help"]);
      expect(res.status).toBe(0);
      for (const key of Object.keys(tool.input_schema.properties)) expect(res.stdout).toContain(`--${key.replace(/_/g, "-")}`);
    }
  });

  it("accepts the short and the full name of a subcommand", async () => {
    const short = await cli(["list-dir", "--path", "."]);
    const full = await cli(["list-directory", "--path", "."]);
    expect(short.status).toBe(0);
    expect(JSON.parse(short.stdout).data.entries).toEqual(JSON.parse(full.stdout).data.entries);
  });

  it("self-check passes, and fails with exit 6 for a bad token", async () => {
    const ok = await cli(["self-check"]);
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).data.checks.map((c: { name: string }) => c.name)).toEqual(["server", "database", "workspace", "disk", "containment", "sandbox", "commands", "token"]);
    const bad = await cli(["self-check"], { env: { AGENT_REACH_TOKEN: "ar_agent_wrong" } });
    expect(bad.status).toBe(6);
    expect(JSON.parse(bad.stderr).error.name).toBe("unauthorized");
  });

  it("groups calls by --session and traces requests with --debug (without the token)", async () => {
    const res = await cli(["read-file", "--path", "notes.md", "--session", "cli-run-1", "--debug"]);
    expect(res.status).toBe(0);
    expect(res.stderr).toMatch(/\[agent-reach\] → POST .*\/api\/tools\/read_file/);
    expect(res.stderr).toMatch(/\[agent-reach\] ← 200 in \d+ ms/);
    expect(res.stderr).not.toContain(server.agentToken);
    const [row] = await sql(server.databaseUrl, `SELECT s."externalId" AS ext FROM "ToolCall" c JOIN "Session" s ON s.id = c."sessionId" WHERE c.id = $1`, [
      JSON.parse(res.stdout).call_id,
    ]);
    expect(row).toEqual({ ext: "key:cli-run-1" });
  });
});

/**
 * Starts the CLI as a subprocess and resolves once its stderr matches `pattern` (or it exits),
 * so a test can act while the CLI is still waiting.
 */
function startCli(args: string[]) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AGENT_REACH_"))) as NodeJS.ProcessEnv;
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const exited = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })));
  return {
    child,
    exited,
    async stderrMatching(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = stderr.match(pattern);
        if (m) return m;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`stderr never matched ${pattern}:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

describe("a queued call's id is known on stderr at once", () => {
  it("names the call as soon as it is queued (waiting the server's default), and again on Ctrl-C; the call stays queued and `wait` collects it", async () => {
    const run = startCli(["write-file", "--path", "interrupted.md", "--content", "later\n"]);
    const [line, callId] = await run.stderrMatching(/\[agent-reach\] call (call_\S+) waits for a reviewer's approval \(up to 30 s here\).*\n/);
    expect(line).toContain(`agent-reach wait ${callId}`);
    // The id is the queued call's, while the CLI still waits.
    const list = await server.reviewer("GET", "/api/approvals");
    expect(list.body.approvals.map((a: { call_id: string }) => a.call_id)).toContain(callId);
    expect(run.child.exitCode).toBeNull();
    run.child.kill("SIGINT");
    const done = await run.exited;
    expect(done.status).toBe(130);
    expect(done.stdout).toBe("");
    expect(done.stderr).toContain(`[agent-reach] interrupted: call ${callId} is not cancelled`);
    expect(done.stderr).toContain(`agent-reach wait ${callId}`);
    await server.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    const later = await cli(["wait", callId]);
    expect(later.status).toBe(0);
    expect(JSON.parse(later.stdout)).toMatchObject({ ok: true, call_id: callId, data: { created: true } });
  });

  it("prints on stdout exactly the envelope the call answers once a reviewer approves while it waits", async () => {
    const run = startCli(["write-file", "--path", "approved-later.md", "--content", "ok\n", "--wait", "60"]);
    const [, callId] = await run.stderrMatching(/call (call_\S+) waits for a reviewer's approval \(up to 60 s here\)/);
    await server.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    const done = await run.exited;
    expect(done.status).toBe(0);
    const out = JSON.parse(done.stdout);
    // The status route's own members (`call`) are not part of the tool call's answer.
    expect(Object.keys(out)).toEqual(["ok", "call_id", "data"]);
    expect(out).toMatchObject({ ok: true, call_id: callId, data: { created: true } });
    expect(done.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("gives up after --wait with the 601 (its reasons kept) on stderr, exit 6", async () => {
    const res = await cli(["write-file", "--path", "short-wait.md", "--content", "x", "--wait", "1"]);
    expect(res.status).toBe(6);
    const lines = res.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^\[agent-reach\] call call_\S+ waits for a reviewer's approval \(up to 1 s here\)/);
    const envelope = JSON.parse(lines[lines.length - 1]);
    expect(envelope).not.toHaveProperty("call");
    expect(envelope.error.name).toBe("approval_pending");
    expect(envelope.error.detail.reasons.length).toBeGreaterThan(0);
    expect(res.stdout).toBe("");
  });

  it("keeps the call id in the error when the server goes away while the call waits", async () => {
    // A stand-in server that queues the call, then drops every status request (as a restart would).
    const { tools } = await (await fetch(`${server.url}/api/tools`)).json();
    const stub = http.createServer((req, res) => {
      if (req.method === "GET" && req.url === "/api/tools") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ tools, approval_wait: { default_s: 30, max_s: 120 } }));
      } else if (req.method === "POST") {
        res.writeHead(202, { "content-type": "application/json" });
        const error = { code: 601, name: "approval_pending", message: "waits", detail: { call_id: "call_stubbed", reasons: ["stub"] }, retryable: true, retry_after_ms: 1000 };
        res.end(JSON.stringify({ ok: false, call_id: "call_stubbed", error }));
      } else {
        req.socket.destroy();
      }
    });
    const port = await freePort();
    await new Promise<void>((resolve) => stub.listen(port, "127.0.0.1", resolve));
    try {
      const res = await cli(["write-file", "--path", "x.md", "--content", "x", "--wait", "5"], { env: { AGENT_REACH_URL: `http://127.0.0.1:${port}` } });
      expect(res.status).toBe(4);
      const lines = res.stderr.trim().split("\n");
      expect(lines[0]).toContain("[agent-reach] call call_stubbed waits for a reviewer's approval (up to 5 s here)");
      const envelope = JSON.parse(lines[lines.length - 1]);
      expect(envelope.error.name).toBe("fetch_failed");
      expect(envelope.error.detail.call_id).toBe("call_stubbed");
      expect(envelope.error.message).toContain("agent-reach wait call_stubbed");
      expect(res.stdout).toBe("");
    } finally {
      await new Promise((resolve) => stub.close(resolve));
    }
  });

  it("--wait 0 answers the 601 alone, as before", async () => {
    const res = await cli(["write-file", "--path", "no-wait.md", "--content", "x", "--wait", "0"]);
    expect(res.status).toBe(6);
    expect(JSON.parse(res.stderr).error.name).toBe("approval_pending");
  });
});

describe("run: a command's outcome and the CLI's exit status", () => {
  it("--format text shows exit_code, timed_out, limit and signal after the output; the call itself succeeded (exit 0)", async () => {
    const res = await cli(["run", "--command", "ls nonexistent", "--format", "text"]);
    expect(res.status).toBe(0);
    expect(res.stderr).toMatch(/nonexistent/);
    expect(res.stderr).toMatch(/^\[command\] exit_code=2 timed_out=false limit=- signal=- duration_ms=\d+$/m);
    const ok = await cli(["run", "--command", "ls", "--format", "text"]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain("notes.md");
    expect(ok.stderr).toMatch(/^\[command\] exit_code=0 /m);
  });

  it("--exit-code exits with the command's own status, in either format", async () => {
    const text = await cli(["run", "--command", "ls nonexistent", "--format", "text", "--exit-code"]);
    expect(text.status).toBe(2);
    const json = await cli(["--exit-code", "run", "--command", "ls nonexistent"]);
    expect(json.status).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, data: { exit_code: 2, timed_out: false } });
    const ok = await cli(["run", "--command", "true", "--exit-code"]);
    expect(ok.status).toBe(0);
    // A tool error keeps its class status: a denied or unknown call never ran a command.
    const bad = await cli(["read-file", "--path", "../outside", "--exit-code"]);
    expect(bad.status).toBe(3);
  });
});
