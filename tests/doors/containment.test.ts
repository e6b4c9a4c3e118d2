import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containmentStatus } from "@/lib/exec/run-command";
import { runCli } from "@/tests/cli/run-cli";
import { SAMPLES } from "@/tests/lib/redact-samples";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { addRule, setPreset, signInDashboard, type Dashboard } from "@/tests/helpers/dashboard";
import { sql } from "@/tests/helpers/sql";
import { PRESET_NAMES, type PresetName } from "@/lib/policy/presets";

/**
 * Containment through the real product, `scripts/start.ts` → `next start`:
 * - a memory hog, an infinite CPU loop, a fork bomb and a huge file write, each approved by a
 *   reviewer and run by the server, are stopped by their limit with the right `limit`, while
 *   /api/health keeps answering. CPU and file size come from the server's settings
 *   (AGENT_REACH_CMD_*), memory and processes from policy rules' options (PolicyRule.optionsJson);
 * - `cat` of a file holding one fake example of every credential format returns them masked
 *   through HTTP, MCP (the official SDK client) and the CLI, and no stored audit row, event or
 *   JSONL line holds a raw value.
 * Both run under every supervision preset (strict asks before each command, balanced and
 * autonomous run them in the box at once): what is asked changes, the limits and masking do not.
 */

let server: TestServer;
let dash: Dashboard;
let logFile: string;

/** Rules an operator adds on the policy page: limits for two commands. */
const RULES = [
  { id: "test:hog", command: "tail /dev/zero", options: { limits: { memory_mb: 64 } } },
  { id: "test:bomb", command: "bash bomb.sh", options: { limits: { processes: 32 } } },
];

/** One example of every format, the server's own agent token, and ordinary text. */
function credentialsFile(agentToken: string): string {
  return [...SAMPLES.map(([, text]) => text), `agent token: ${agentToken}`, "nothing secret on this line"].join("\n") + "\n";
}
const secrets = (agentToken: string) => [...SAMPLES.map(([, , secret]) => secret), agentToken];

beforeAll(async () => {
  // The limits of the commands below rely on cgroups: say so loudly instead of running a fork bomb unbounded.
  const status = containmentStatus();
  if (status.processes !== "cgroup" || status.memory !== "cgroup") throw new Error(`cgroups are not usable here: ${status.problems.join("; ")}`);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(fs.realpathSync("/tmp"), "ar-contain-")));
  logFile = path.join(dir, "calls.jsonl");
  server = await startTestServer({ env: { AGENT_REACH_CMD_CPU_SECONDS: "2", AGENT_REACH_CMD_FILE_SIZE_MB: "1", AGENT_REACH_LOG: logFile } });
  fs.writeFileSync(path.join(server.workspace, "bomb.sh"), ":(){ :|:; };:\n");
  fs.writeFileSync(path.join(server.workspace, "credentials.txt"), credentialsFile(server.agentToken));
  dash = await signInDashboard(server);
  for (const r of RULES) {
    await addRule(dash, { tool: "run_command", command: r.command, decision: "ask", note: `containment test ${r.id}`, options: JSON.stringify(r.options) });
  }
});

afterAll(async () => {
  await server?.stop();
});

/** Polls /api/health until `done` settles; returns every status seen (a request that hangs 10 s fails). */
async function healthWhile(done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.finally(() => (finished = true));
  const statuses: number[] = [];
  while (!finished || statuses.length === 0) {
    const res = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(10_000) });
    statuses.push(res.status);
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 100));
  }
  return statuses;
}

/** Sets the workspace's supervision preset on the policy page; the next call is judged under it. */
async function usePreset(preset: PresetName): Promise<void> {
  await setPreset(dash, preset);
}

/** Every table below runs under every preset: the limits and the masking hold whatever is asked. */
describe.each(PRESET_NAMES)("under the %s preset", (preset) => {
beforeAll(() => usePreset(preset));

describe("misbehaving commands are stopped by their limits while the server keeps serving", () => {
  it.each([
    ["a memory hog", "tail /dev/zero", "memory", true],
    ["an infinite CPU loop", "while :; do :; done", "cpu", false],
    ["a fork bomb", "bash bomb.sh", "processes", true],
    ["a huge file write", "head -c 100M /dev/zero > big.bin", "file_size", true],
  ])("%s (%s) → limit %s", async (_name, command, limit, asksAnyway) => {
    // Under strict every one asks; under the others only those an operator rule asks about, and
    // reads of an endless device (/dev/zero), which the policy asks about under every preset.
    const operatorAsks = asksAnyway;
    const run = (async () => {
      const first = await server.call("run_command", { command, timeout_ms: 60_000 }, { prefer: "wait=0" });
      if (first.body.error?.name !== "approval_pending") return { asked: false, callId: first.body.call_id as string, result: first.body };
      const approval = await server.reviewer("POST", `/api/approvals/${first.body.call_id}/approve`, {});
      return { asked: true, callId: first.body.call_id as string, result: approval.body.result };
    })();
    const health = await healthWhile(run);
    const { asked, callId, result } = await run;
    expect(asked).toBe(preset === "strict" || operatorAsks);
    expect(result.ok).toBe(true);
    expect(result.data).toMatchObject({ limit, timed_out: false });
    expect(health.every((s) => s === 200)).toBe(true);
    const [row] = await sql<{ status: string; summary: string }>(server.databaseUrl, `SELECT status, summary FROM "ToolCall" WHERE id = $1`, [callId]);
    expect(row.status).toBe("succeeded");
    // The summary names the limit; what the command left in the workspace (its change set) may follow.
    expect(row.summary).toMatch(new RegExp(`^stopped by limit ${limit} after \\d+ ms \\(boxed\\)(; \\d+ created, \\d+ modified, \\d+ deleted)?$`));
  });

  it("the limits came from the settings and from the matching rules, and were reported", async () => {
    const rows = await sql<{ resultJson: string; decisionJson: string; target: string }>(
      server.databaseUrl,
      `SELECT "resultJson", "decisionJson", target FROM "ToolCall" WHERE tool = 'run_command' AND target IN ('tail /dev/zero', 'bash bomb.sh', 'while :; do :; done')`,
    );
    const by = Object.fromEntries(rows.map((r) => [r.target, { data: JSON.parse(r.resultJson).data, decision: JSON.parse(r.decisionJson) }]));
    expect(by["tail /dev/zero"].decision.options).toEqual({ limits: { memory_mb: 64 } });
    expect(by["tail /dev/zero"].data.limits).toMatchObject({ memory_bytes: 64 * 1024 * 1024, cpu_seconds: 2, file_size_bytes: 1024 * 1024 });
    expect(by["bash bomb.sh"].data.limits).toMatchObject({ processes: 32 });
    expect(by["while :; do :; done"].data.limits).toMatchObject({ cpu_seconds: 2, processes: 1024 });
  });
});

describe("credentials are masked through every door", () => {
  const CAT = "cat credentials.txt";

  function expectMasked(stdout: string): void {
    for (const secret of secrets(server.agentToken)) expect(stdout).not.toContain(secret);
    for (const [kind] of SAMPLES) expect(stdout).toContain(`[REDACTED:${kind}:`);
    expect(stdout).toContain("nothing secret on this line");
  }

  async function expectStoredWithoutSecrets(callId: string): Promise<void> {
    const [row] = await sql(server.databaseUrl, `SELECT * FROM "ToolCall" WHERE id = $1`, [callId]);
    const events = await sql(server.databaseUrl, `SELECT * FROM "Event" WHERE "callId" = $1`, [callId]);
    expect(row).toBeDefined();
    const stored = JSON.stringify({ row, events });
    for (const secret of secrets(server.agentToken)) expect(stored).not.toContain(secret);
    expect(JSON.parse((row as { resultJson: string }).resultJson).data.stdout).toContain("[REDACTED:aws_access_key:20]");
  }

  it("HTTP: run_command cat, read_file and search_files", async () => {
    const cat = await server.call("run_command", { command: CAT });
    expect(cat.status).toBe(200);
    expectMasked(cat.body.data.stdout);
    await expectStoredWithoutSecrets(cat.body.call_id);

    const read = await server.call("read_file", { path: "credentials.txt", limit: 1000 });
    expectMasked(read.body.data.content);
    const search = await server.call("search_files", { pattern: "credentials.txt", query: "=" });
    expect(search.body.ok).toBe(true);
    expect(JSON.stringify(search.body.data)).toContain("[REDACTED:secret_assignment:");
    for (const secret of secrets(server.agentToken)) expect(JSON.stringify(search.body.data)).not.toContain(secret);
  });

  it("MCP with the official SDK client", async () => {
    const client = new Client({ name: "containment-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${server.agentToken}` } } }));
    try {
      const result = (await client.callTool({ name: "run_command", arguments: { command: CAT } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const text = (result.content[0] as { text: string }).text;
      for (const secret of secrets(server.agentToken)) expect(text).not.toContain(secret);
      expect(JSON.stringify(result.structuredContent)).not.toContain(SAMPLES[0][2]);
      const data = JSON.parse(text);
      expectMasked(data.stdout);
      await expectStoredWithoutSecrets(result._meta?.["agent-reach/call_id"] as string);
    } finally {
      await client.close();
    }
  });

  it("CLI subprocess", async () => {
    const res = await runCli(["run-command", "--command", CAT], { env: { AGENT_REACH_URL: server.url, AGENT_REACH_TOKEN: server.agentToken } });
    expect(res.status).toBe(0);
    for (const secret of secrets(server.agentToken)) expect(res.stdout).not.toContain(secret);
    const body = JSON.parse(res.stdout);
    expectMasked(body.data.stdout);
    await expectStoredWithoutSecrets(body.call_id);
  });

  it("the JSONL call log holds no raw value either", () => {
    const log = fs.readFileSync(logFile, "utf8");
    expect(log).toContain('"tool":"run_command"');
    for (const secret of secrets(server.agentToken)) expect(log).not.toContain(secret);
  });

  it(`every call was judged under ${preset}`, async () => {
    const rows = await sql<{ decisionJson: string }>(server.databaseUrl, `SELECT "decisionJson" FROM "ToolCall" WHERE "decisionJson" IS NOT NULL ORDER BY "createdAt" DESC LIMIT 3`);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(JSON.parse(r.decisionJson).preset).toBe(preset);
  });
});
});
