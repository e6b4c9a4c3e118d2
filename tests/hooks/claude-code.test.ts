import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startTestServer, type TestServer } from "@/tests/helpers/server";
import { runCli } from "@/tests/cli/run-cli";
import { sql } from "@/tests/helpers/sql";

/**
 * `agent-reach hook claude-code` with Claude Code PreToolUse payloads for
 * Bash, Write, Edit, MultiEdit, Read and an unsupervised tool (tests/fixtures/hooks, in the format
 * of Claude Code's hooks reference), through the real server: each call is recorded as a
 * supervised external call (door "hook"), decided by the policy and the reviewer, never executed
 * by Agent Reach, and answered with Claude Code's PreToolUse decision JSON.
 */

const FIXTURES = path.resolve(__dirname, "../fixtures/hooks");
/** The project directory the payloads were taken in; replaced by the test workspace. */
const RECORDED_ROOT = "/home/dev/acme-app";
const APP_TS = 'const port = 3000;\nconsole.log("listening");\n';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  fs.mkdirSync(path.join(server.workspace, "src"));
  fs.writeFileSync(path.join(server.workspace, "src/app.ts"), APP_TS);
});

afterAll(async () => {
  await server?.stop();
});

/** A fixture with the recorded project root replaced by the test workspace, optionally changed. */
function payload(name: string, change: (p: any) => void = () => {}): string {
  const text = fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8").replaceAll(RECORDED_ROOT, server.workspace);
  const value = JSON.parse(text);
  change(value);
  return JSON.stringify(value);
}

async function hook(input: string, args: string[] = [], env: Record<string, string> = {}) {
  const res = await runCli(["hook", "claude-code", ...args], {
    input,
    env: { AGENT_REACH_URL: server.url, AGENT_REACH_TOKEN: server.agentToken, ...env },
  });
  expect(res.status).toBe(0);
  return { output: JSON.parse(res.stdout), stderr: res.stderr };
}

function decisionOf(output: any): { permissionDecision: string; permissionDecisionReason: string } {
  expect(output.hookSpecificOutput.hookEventName).toBe("PreToolUse");
  return output.hookSpecificOutput;
}

interface CallRow {
  tool: string;
  door: string;
  status: string;
  decision: string | null;
  argsJson: string;
  resultJson: string;
  externalId: string;
}

async function callRow(callId: string): Promise<CallRow> {
  const [row] = await sql<CallRow>(
    server.databaseUrl,
    `SELECT c.tool, c.door, c.status, c.decision, c."argsJson", c."resultJson", s."externalId" FROM "ToolCall" c JOIN "Session" s ON s.id = c."sessionId" WHERE c.id = $1`,
    [callId],
  );
  return row;
}

function callIdOf(reason: string): string {
  const m = /Agent Reach call (call_[0-9a-z]+)/.exec(reason);
  expect(m).not.toBeNull();
  return m![1];
}

async function pendingFor(tool: string, match: (args: any) => boolean) {
  for (;;) {
    const list = await server.reviewer("GET", "/api/approvals");
    const found = list.body.approvals.find((a: { tool: string; args: unknown }) => a.tool === tool && match(a.args));
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("Claude Code PreToolUse hook", () => {
  it("allows a read-only Bash command by policy and records it as a hook call that was not executed", async () => {
    const { output } = await hook(payload("bash-git-status"));
    const decision = decisionOf(output);
    expect(decision.permissionDecision).toBe("allow");
    const row = await callRow(callIdOf(decision.permissionDecisionReason));
    expect(row).toMatchObject({ tool: "run_command", door: "hook", status: "succeeded", decision: "allow" });
    expect(JSON.parse(row.argsJson)).toEqual({ command: "git status --short", cwd: server.workspace });
    expect(JSON.parse(row.resultJson).data.executed).toBe(false);
    expect(row.externalId).toBe("key:5f0c2d9e-8b1a-4c3e-9f27-1d6a0b7e4c11");
  });

  it("holds a Bash command that asks until a reviewer approves, then allows it without running it", async () => {
    const run = hook(payload("bash-build"));
    const pending = await pendingFor("run_command", (a) => a.command.startsWith("touch build.log"));
    const decision = await server.reviewer("POST", `/api/approvals/${pending.call_id}/approve`, {});
    expect(decision.status).toBe(200);
    expect(decision.body.result.data).toMatchObject({ executed: false, decision: "approved" });
    const { output } = await run;
    expect(decisionOf(output)).toMatchObject({ permissionDecision: "allow" });
    expect(decisionOf(output).permissionDecisionReason).toContain("approved by reviewer admin");
    expect(fs.existsSync(path.join(server.workspace, "build.log"))).toBe(false); // Claude Code runs it, not us
    expect(await callRow(pending.call_id)).toMatchObject({ door: "hook", status: "succeeded" });
  });

  it("denies a Bash command the reviewer rejects, with the reviewer's reason for the model", async () => {
    const run = hook(payload("bash-build", (p) => (p.tool_input.command = "touch rejected.log")));
    const pending = await pendingFor("run_command", (a) => a.command === "touch rejected.log");
    await server.reviewer("POST", `/api/approvals/${pending.call_id}/reject`, { reason: "no builds on this branch" });
    const { output } = await run;
    const decision = decisionOf(output);
    expect(decision.permissionDecision).toBe("deny");
    expect(decision.permissionDecisionReason).toMatch(/\(approval_rejected\): .*no builds on this branch/);
    expect((await callRow(pending.call_id)).status).toBe("rejected");
  });

  it("shows the reviewer the diff of a Write, refuses an edited approval, and allows it once approved", async () => {
    const run = hook(payload("write"));
    const pending = await pendingFor("write_file", (a) => a.path.endsWith("src/config.json"));
    expect(pending.preview.diff).toContain('+  "greeting": "Grüß Gott"');
    const edited = await server.reviewer("POST", `/api/approvals/${pending.call_id}/approve`, { content: "{}\n" });
    expect(edited.status).toBe(400);
    expect(edited.body.error.name).toBe("invalid_arguments");
    await server.reviewer("POST", `/api/approvals/${pending.call_id}/approve`, {});
    const { output } = await run;
    expect(decisionOf(output).permissionDecision).toBe("allow");
    expect(fs.existsSync(path.join(server.workspace, "src/config.json"))).toBe(false);
  });

  it("denies an Edit nobody decides within --wait, and the queued call expires", async () => {
    const { output } = await hook(payload("edit"), ["--wait", "1"]);
    const decision = decisionOf(output);
    expect(decision.permissionDecision).toBe("deny");
    expect(decision.permissionDecisionReason).toMatch(/No reviewer decided/);
    const callId = callIdOf(decision.permissionDecisionReason);
    const row = await callRow(callId);
    expect(row).toMatchObject({ tool: "edit_file", door: "hook", status: "expired" });
    expect(JSON.parse(row.argsJson)).toMatchObject({ old_string: "const port = 3000;", replace_all: false });
    const approveLate = await server.reviewer("POST", `/api/approvals/${callId}/approve`, {});
    expect(approveLate.body.error).toMatchObject({ name: "conflict", detail: { reason: "already_decided" } });
    expect(fs.readFileSync(path.join(server.workspace, "src/app.ts"), "utf8")).toBe(APP_TS);
  });

  it("hands an undecided Edit to the user with --on-timeout ask", async () => {
    const { output } = await hook(payload("edit"), ["--wait", "1", "--on-timeout", "ask"]);
    expect(decisionOf(output).permissionDecision).toBe("ask");
  });

  it("shows a MultiEdit as one edit_file with the combined diff", async () => {
    const run = hook(payload("multi-edit"));
    const pending = await pendingFor("edit_file", (a) => a.new_string?.includes("listening on"));
    expect(pending.preview.diff).toContain("+const port = 4000;");
    expect(pending.preview.diff).toContain("+console.log(`listening on ${port}`);");
    await server.reviewer("POST", `/api/approvals/${pending.call_id}/reject`, { reason: "keep the port" });
    expect(decisionOf((await run).output).permissionDecision).toBe("deny");
  });

  it.each([".env", "config/.ENV.local", "keys/id_rsa", "hardlinked.txt"])("a MultiEdit of %s does not read the file into the call's record", async (rel) => {
    const file = path.join(server.workspace, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "TOKEN=HOOK-SECRET-VALUE\nA=1\n");
    if (rel === "hardlinked.txt") fs.linkSync(file, path.join(server.workspace, "hardlinked-other-name.txt"));
    const input = payload("multi-edit", (p) => {
      p.tool_input.file_path = file;
      p.tool_input.edits = [
        { old_string: "A=1", new_string: "A=2" },
        { old_string: "A=2", new_string: "A=3" },
      ];
    });
    const { output } = await hook(input, ["--wait", "0", "--on-timeout", "ask"]);
    const row = await callRow(callIdOf(decisionOf(output).permissionDecisionReason));
    expect(row.tool).toBe("edit_file");
    expect(row.argsJson).not.toContain("HOOK-SECRET-VALUE");
    expect(JSON.parse(row.argsJson)).toMatchObject({ old_string: "A=1", new_string: "A=2" });
  });

  it("allows a Read inside the workspace and denies a Write outside it at once", async () => {
    const read = decisionOf((await hook(payload("read"))).output);
    expect(read.permissionDecision).toBe("allow");
    expect(await callRow(callIdOf(read.permissionDecisionReason))).toMatchObject({ tool: "read_file", status: "succeeded" });
    const outside = decisionOf((await hook(payload("write", (p) => (p.tool_input.file_path = "/etc/agent-reach-hook-test")))).output);
    expect(outside.permissionDecision).toBe("deny");
    expect(outside.permissionDecisionReason).toMatch(/^Agent Reach denied this Write call \(path_outside_workspace\): /);
    expect(await callRow(callIdOf(outside.permissionDecisionReason))).toMatchObject({ tool: "write_file", door: "hook", status: "rejected" });
  });

  it("gives no decision for a tool it does not supervise", async () => {
    expect((await hook(payload("glob"))).output).toEqual({});
  });

  it("fails closed when the gateway is unreachable, and open with --fail-open", async () => {
    const down = { AGENT_REACH_URL: `http://127.0.0.1:${await freePort()}` };
    const closed = await hook(payload("write"), [], down);
    expect(decisionOf(closed.output).permissionDecision).toBe("deny");
    expect(decisionOf(closed.output).permissionDecisionReason).toMatch(/fails closed.*Cannot reach/);
    expect(JSON.parse(closed.stderr).error.name).toBe("fetch_failed");
    const open = await hook(payload("write"), ["--fail-open"], down);
    expect(open.output).toEqual({});
  });

  it.each([
    ["a bad token", payload, { AGENT_REACH_TOKEN: "ar_agent_wrong" }, /token/i],
    ["a payload that is not JSON", () => "{not json", {}, /not valid JSON/],
    ["another hook event", () => JSON.stringify({ hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: {} }), {}, /PreToolUse/],
  ])("denies when the gateway cannot decide: %s", async (_label, input, env, reason) => {
    const { output } = await hook(input("write"), [], env as Record<string, string>);
    expect(decisionOf(output).permissionDecision).toBe("deny");
    expect(decisionOf(output).permissionDecisionReason).toMatch(reason);
  });

  it("asks for git in a repository whose config git would read from a planted place (commondir, a .git file, comment continuations)", async () => {
    const ws = server.workspace;
    const gitRun = (...args: string[]) => execFileSync("git", args, { cwd: ws, stdio: "pipe", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: ws } });
    if (!fs.existsSync(path.join(ws, ".git"))) gitRun("init", "-q");
    const bash = (command: string) => payload("bash-git-status", (p) => (p.tool_input.command = command));
    const decide = async (command: string) => decisionOf((await hook(bash(command), ["--wait", "1", "--on-timeout", "ask"])).output).permissionDecision;
    expect(await decide("git status")).toBe("allow");
    const plant = (dir: string, config: string) => {
      fs.mkdirSync(path.join(ws, dir, "objects"), { recursive: true });
      fs.mkdirSync(path.join(ws, dir, "refs"), { recursive: true });
      fs.writeFileSync(path.join(ws, dir, "HEAD"), "ref: refs/heads/main\n");
      fs.writeFileSync(path.join(ws, dir, "config"), config);
    };
    plant("evil3", "[core]\n\trepositoryformatversion = 0\n# keep in sync with upstream \\\n\tfsmonitor = \"touch /tmp/ar-hook-never; false\"\n");
    fs.mkdirSync(path.join(ws, "sub3"), { recursive: true });
    fs.writeFileSync(path.join(ws, "sub3/.git"), "gitdir: ../evil3\n");
    expect(await decide("git -C sub3 status")).toBe("ask");
    plant("evil", "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch /tmp/ar-hook-never; false\"\n");
    fs.writeFileSync(path.join(ws, ".git/commondir"), "../evil\n");
    try {
      expect(await decide("git status")).toBe("ask");
      expect(await decide("git log -1")).toBe("ask");
    } finally {
      fs.rmSync(path.join(ws, ".git/commondir"));
    }
    expect(await decide("git status")).toBe("allow");
  });
});
