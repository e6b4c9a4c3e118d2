import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "@/tests/helpers/sql";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

/**
 * Recursive and indirect reads of sensitive files through the doors an agent uses: search_files
 * over HTTP skips them (and says so), run_command's `grep -r` asks over HTTP, and the Claude Code
 * hook door (no sandbox, no redaction) asks for `grep -r`, `rg --hidden`, `git show :.env`,
 * `git log -p -- .env` with the sensitive file and its rule named.
 */

let server: TestServer;
const KEY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB";

beforeAll(async () => {
  server = await startTestServer();
  fs.writeFileSync(path.join(server.workspace, ".env"), "PASSWORD=hunter2\nSECRET=abc\n");
  fs.mkdirSync(path.join(server.workspace, "keys"));
  fs.writeFileSync(path.join(server.workspace, "keys/id_ed25519"), `-----BEGIN OPENSSH PRIVATE KEY-----\n${KEY}\n-----END OPENSSH PRIVATE KEY-----\n`);
  fs.mkdirSync(path.join(server.workspace, "src"));
  fs.writeFileSync(path.join(server.workspace, "src/app.ts"), "const PASSWORD_LABEL = 'Password';\n");
});

afterAll(async () => {
  await server?.stop();
});

async function hook(command: string): Promise<{ permissionDecision: string; permissionDecisionReason: string }> {
  const res = await fetch(`${server.url}/api/hooks/claude-code?on_timeout=deny`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.agentToken}`, "content-type": "application/json", prefer: "wait=0" },
    body: JSON.stringify({
      session_id: "sensitive-reads",
      cwd: server.workspace,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command, description: "sensitive read test" },
      tool_use_id: "toolu_sensitive_reads",
    }),
  });
  expect(res.status).toBe(200);
  return (await res.json()).hook_output.hookSpecificOutput;
}

describe("HTTP door", () => {
  it("search_files does not return key bodies or SECRET=abc, and says what it skipped", async () => {
    for (const args of [{ query: "PASSWORD|b3Bl", regex: true, path: "." }, { query: "SECRET=abc" }, { query: "b3Bl", path: "keys" }]) {
      const res = await server.call("search_files", args);
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.body);
      expect(text).not.toContain("SECRET=abc");
      expect(text).not.toContain("b3Bl");
      expect(text).not.toContain("hunter2");
      expect(res.body.data.files_skipped.sensitive).toBeGreaterThanOrEqual(1);
      expect(res.body.data.note).toMatch(/read_file/);
    }
    const res = await server.call("search_files", { query: "PASSWORD" });
    expect(res.body.data.matches.map((m: { path: string }) => m.path)).toEqual(["src/app.ts"]);
  });

  it("run_command grep -r over a tree with a key asks, naming the key and its rule, and runs nothing", async () => {
    const res = await server.call("run_command", { command: "grep -rh b3Bl keys" }, { prefer: "wait=0" });
    expect(res.body.error.name).toBe("approval_pending");
    expect(res.body.error.detail.reasons.join("\n")).toContain("keys/id_ed25519: needs approval by rule default:sensitive-ssh-keys");
  });

  it("run_command grep -r over a clean tree is still allowed", async () => {
    const res = await server.call("run_command", { command: "grep -rn PASSWORD src" });
    expect(res.status).toBe(200);
    expect(res.body.data.stdout).toContain("PASSWORD_LABEL");
  });
});

describe("Claude Code hook door", () => {
  it.each([
    ["grep -r PASSWORD .", ".env: needs approval by rule default:sensitive-env"],
    ["grep -r -A1 BEGIN keys", "keys/id_ed25519: needs approval by rule default:sensitive-ssh-keys"],
    ["grep --recur -h b3Bl keys", "keys/id_ed25519"],
    ["rg --hidden SECRET", ".env"],
    ["rg b3Bl", "keys/id_ed25519"],
    ["git show :.env", ".env: needs approval by rule default:sensitive-env"],
    ["git show @:.env", ".env"],
    ["git show :0:.env", ".env"],
    ["git log -p -- .env", ".env"],
  ])("asks for %s", async (command, reason) => {
    const out = await hook(command);
    expect(out.permissionDecision).not.toBe("allow");
    // Nobody decides within the hook's wait, so the answer is the expiry; the policy's reasons are on the call's record.
    const callId = /Agent Reach call (call_[0-9a-z]+)/.exec(out.permissionDecisionReason)![1];
    const [row] = await sql<{ decisionJson: string }>(server.databaseUrl, `SELECT "decisionJson" FROM "ToolCall" WHERE id = $1`, [callId]);
    expect(JSON.parse(row.decisionJson).decision).toBe("ask");
    expect(row.decisionJson).toContain(reason);
  });

  it("allows grep -r over a clean tree", async () => {
    expect((await hook("grep -rn PASSWORD src")).permissionDecision).toBe("allow");
  });
});
