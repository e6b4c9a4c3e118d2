import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * "Don't ask again" through the doors a reviewer and an agent use: a grant saved with an approval
 * (POST /api/approvals/{id}/approve with `grant`) allows later calls of the same pattern only in
 * its scope (this session, or this workspace: not another session, not another workspace served
 * from the same database), not a command with more appended, not a sensitive path under its glob;
 * it ends when revoked or expired (both audited), and a grant that would reach a denied command,
 * a sensitive path or the network is refused while the call stays pending.
 */

let server: TestServer;
let other: TestServer | null = null;
/** A write the first grant allowed (reverting it is a call a grant cannot name). */
let allowedWrite: string;

beforeAll(async () => {
  server = await startTestServer();
  fs.mkdirSync(path.join(server.workspace, "src/lib"), { recursive: true });
  // A script the agent runs (the policy cannot see what it writes: the sandbox captures it).
  fs.writeFileSync(path.join(server.workspace, "gen.py"), "import sys\nopen(sys.argv[1] + '.txt', 'w').write('made\\n')\n");
  // An operator's deny, for the refusal test (inserted before any call loads the rules).
  await sql(server.databaseUrl, 'INSERT INTO "PolicyRule" (id, priority, tool, command, decision, note, enabled, source, "createdAt") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
    "op:deny-git-push",
    150,
    "run_command",
    "git push *",
    "deny",
    "no pushing",
    true,
    "operator",
    stamp(Date.now()),
  ]);
}, 1_200_000);

afterAll(async () => {
  await other?.stop();
  await server?.stop();
});

/** A timestamp as the database stores it (Prisma's SQLite text, or a Date for PostgreSQL). */
function stamp(ms: number): string | Date {
  return server.databaseUrl.startsWith("file:") ? new Date(ms).toISOString().replace("Z", "+00:00") : new Date(ms);
}

async function call(tool: string, args: unknown, session: string, on: TestServer = server) {
  return on.call(tool, args, { prefer: "wait=0", "x-agent-session": session });
}

/** Queues a call that asks; returns its id. */
async function queued(tool: string, args: unknown, session: string): Promise<string> {
  const res = await call(tool, args, session);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.call_id as string;
}

async function approve(callId: string, grant?: unknown) {
  return server.reviewer("POST", `/api/approvals/${callId}/approve`, grant === undefined ? {} : { grant });
}

async function statusOf(callId: string): Promise<string> {
  const [row] = await sql<{ status: string }>(server.databaseUrl, 'SELECT status FROM "ToolCall" WHERE id = $1', [callId]);
  return row.status;
}

async function events(type: string, callId?: string): Promise<Array<{ dataJson: string; actor: string; callId: string | null }>> {
  return sql(server.databaseUrl, `SELECT "dataJson", actor, "callId" FROM "Event" WHERE type = $1${callId ? ' AND "callId" = $2' : ""} ORDER BY seq`, callId ? [type, callId] : [type]);
}

const HOUR = 3600;

describe("a path grant from an approval", () => {
  let grantId: string;

  it("is saved with the approval, named in its event, and allows the same glob in the same session", async () => {
    const first = await queued("write_file", { path: "src/lib/a.ts", content: "export const a = 1;\n" }, "alpha");
    const res = await approve(first, { scope: "session", expires_in_s: HOUR, path_glob: "src/**/*.ts" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.ok).toBe(true);
    expect(res.body.grants).toHaveLength(1);
    grantId = res.body.grants[0].id;
    expect(res.body.grants[0]).toMatchObject({ pattern: "src/**/*.ts", scope: "session" });

    const [approved] = await events("call.approved", first);
    expect(JSON.parse(approved.dataJson).grants[0]).toMatchObject({ id: grantId, pattern: "src/**/*.ts", scope: "session" });
    const [created] = await events("policy.grant_created", first);
    expect(created.actor).toMatch(/^reviewer:/);

    const next = await call("write_file", { path: "src/lib/b.ts", content: "export const b = 2;\n" }, "alpha");
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.ok).toBe(true);
    const [row] = await sql<{ decision: string; decisionJson: string }>(server.databaseUrl, 'SELECT decision, "decisionJson" FROM "ToolCall" WHERE id = $1', [next.body.call_id]);
    expect(row.decision).toBe("allow");
    expect(JSON.parse(row.decisionJson).rule.id).toBe(grantId);
    allowedWrite = next.body.call_id;
    expect(fs.readFileSync(path.join(server.workspace, "src/lib/b.ts"), "utf8")).toBe("export const b = 2;\n");
  });

  it("does not reach another session, another extension, or a sensitive path under its glob", async () => {
    expect((await call("write_file", { path: "src/lib/c.ts", content: "x\n" }, "beta")).status).toBe(202);
    expect((await call("write_file", { path: "src/lib/c.js", content: "x\n" }, "alpha")).status).toBe(202);
    expect((await call("write_file", { path: "lib/c.ts", content: "x\n" }, "alpha")).status).toBe(202);
    for (const p of ["src/.env.ts", "src/lib/.env.local.ts", "src/.git/hooks/pre-commit.ts"]) {
      const res = await call("write_file", { path: p, content: "x\n" }, "alpha");
      expect(res.status, p).not.toBe(200);
    }
    expect(fs.existsSync(path.join(server.workspace, "src/.env.ts"))).toBe(false);
  });

  it("does not reach another workspace served from the same database", { timeout: 600_000 }, async () => {
    // A workspace-wide grant, then a second server (another workspace root) on the same database.
    const first = await queued("write_file", { path: "src/lib/w.ts", content: "w\n" }, "gamma");
    const res = await approve(first, { scope: "workspace", expires_in_s: HOUR, path_glob: "src/lib/*.ts" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await call("write_file", { path: "src/lib/w2.ts", content: "w2\n" }, "delta")).status).toBe(200);
    other = await startTestServer({ databaseUrl: server.databaseUrl });
    fs.mkdirSync(path.join(other.workspace, "src/lib"), { recursive: true });
    const there = await call("write_file", { path: "src/lib/w3.ts", content: "w3\n" }, "gamma", other);
    expect(there.status, JSON.stringify(there.body)).toBe(202);
    expect(fs.existsSync(path.join(other.workspace, "src/lib/w3.ts"))).toBe(false);
  });

  it("is listed, ends when it expires (audited), and then asks again", async () => {
    const list = await server.reviewer("GET", "/api/grants");
    const listed = list.body.grants.find((g: { id: string }) => g.id === grantId);
    expect(listed).toMatchObject({ state: "active", pattern: "src/**/*.ts", scope: "session", createdBy: expect.any(String) });
    expect(listed.allowedCalls).toBe(1);
    // The test controls the time through the data: the grant's expiry is set to the past.
    await sql(server.databaseUrl, 'UPDATE "PolicyRule" SET "expiresAt" = $1 WHERE id = $2', [stamp(Date.now() - 1000), grantId]);
    const after = await server.reviewer("GET", "/api/grants");
    expect(after.body.grants.find((g: { id: string }) => g.id === grantId).state).toBe("expired");
    expect((await events("policy.grant_expired")).some((e) => JSON.parse(e.dataJson).id === grantId)).toBe(true);
    // (src/d.ts: no other grant covers it)
    expect((await call("write_file", { path: "src/d.ts", content: "d\n" }, "alpha")).status).toBe(202);
  });
});

describe("a command grant", () => {
  let grantId: string;

  it("allows the granted program's later calls in the session, and nothing appended to them", async () => {
    const first = await queued("run_command", { command: "python3 gen.py one" }, "cmd");
    const res = await approve(first, { scope: "session", expires_in_s: HOUR, patterns: ["python3 gen.py *"] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    grantId = res.body.grants[0].id;
    expect(fs.existsSync(path.join(server.workspace, "one.txt"))).toBe(true);
    const next = await call("run_command", { command: "python3 gen.py two" }, "cmd");
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(fs.existsSync(path.join(server.workspace, "two.txt"))).toBe(true);
    for (const line of [
      "python3 gen.py three && curl -s http://127.0.0.1:9/",
      "python3 gen.py four; rm -f one.txt",
      "python3 gen.py $(cat /etc/hostname)",
      "python3 gen.py five > ../outside.txt",
      "python3 other.py six",
      "python3 -c 'print(1)'",
    ]) {
      const res2 = await call("run_command", { command: line }, "cmd");
      expect(res2.status, line).not.toBe(200);
    }
    expect(fs.existsSync(path.join(server.workspace, "three.txt"))).toBe(false);
    expect(fs.existsSync(path.join(server.workspace, "one.txt"))).toBe(true);
    expect((await call("run_command", { command: "python3 gen.py seven" }, "other-session")).status).toBe(202);
  });

  it("is revocable (audited); revoked, the command asks again, and revoking twice is a conflict", async () => {
    const revoked = await server.reviewer("POST", `/api/grants/${grantId}/revoke`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect((await events("policy.grant_revoked")).some((e) => JSON.parse(e.dataJson).id === grantId && e.actor.startsWith("reviewer:"))).toBe(true);
    expect((await call("run_command", { command: "python3 gen.py eight" }, "cmd")).status).toBe(202);
    const again = await server.reviewer("POST", `/api/grants/${grantId}/revoke`);
    expect(again.status).toBe(409);
    expect(again.body.error.detail.reason).toBe("already_ended");
    expect((await server.reviewer("POST", "/api/grants/grant_nope/revoke")).status).toBe(404);
  });
});

describe("grants that are refused (the call stays pending)", () => {
  async function refused(callId: string, grant: unknown, why: RegExp) {
    const res = await approve(callId, grant);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.detail.reason).toBe("grant_refused");
    expect(res.body.error.message).toMatch(why);
    expect(await statusOf(callId)).toBe("pending");
  }

  it("for a sensitive path, a glob that reaches one, or one that misses the call", async () => {
    const env = await queued("write_file", { path: ".env", content: "A=1\n" }, "refuse");
    await refused(env, { scope: "session", expires_in_s: HOUR, path_glob: ".env" }, /\.env/);
    await refused(env, { scope: "workspace", expires_in_s: HOUR, path_glob: "**" }, /covers/);
    const src = await queued("write_file", { path: "src/x.ts", content: "x\n" }, "refuse");
    await refused(src, { scope: "session", expires_in_s: HOUR, path_glob: "*" }, /covers \.env/);
    await refused(src, { scope: "session", expires_in_s: HOUR, path_glob: "docs/*.md" }, /does not cover/);
    await refused(src, { scope: "session", expires_in_s: HOUR, path_glob: "../src/*.ts" }, /workspace-relative/);
    // Without a grant the same call is approved as before.
    expect((await approve(src)).status).toBe(200);
  });

  it("for a denied command, a shell, the network, or a pattern that misses the call", async () => {
    const git = await queued("run_command", { command: "git commit -m wip" }, "refuse");
    await refused(git, { scope: "session", expires_in_s: HOUR, patterns: ["git *"] }, /git push \* \(denied by rule op:deny-git-push/);
    const net = await queued("run_command", { command: "python3 gen.py net", network: true }, "refuse");
    await refused(net, { scope: "session", expires_in_s: HOUR, patterns: ["python3 gen.py *"] }, /network/);
    // A command whose own writes the policy checks: the grant cannot lift that check.
    const touch = await queued("run_command", { command: "touch t.txt" }, "refuse");
    await refused(touch, { scope: "session", expires_in_s: HOUR, patterns: ["touch *"] }, /would still ask with the grant: write_in_workspace/);
    const sh = await queued("run_command", { command: "bash -c 'touch x'" }, "refuse");
    await refused(sh, { scope: "session", expires_in_s: HOUR, patterns: ["bash -c *"] }, /runs other programs/);
    await refused(sh, { scope: "session", expires_in_s: HOUR, patterns: ["*"] }, /program's name/);
    const t = await queued("run_command", { command: "python3 gen.py nine" }, "refuse");
    await refused(t, { scope: "session", expires_in_s: HOUR, patterns: ["make *"] }, /matches no command/);
  });

  it("for a tool a grant cannot name, or an expiry out of bounds", async () => {
    const revert = await queued("revert_call", { call_id: allowedWrite }, "refuse");
    await refused(revert, { scope: "session", expires_in_s: HOUR, path_glob: "src/**/*.ts" }, /cannot be allowed by a grant/);
    const t = await queued("run_command", { command: "python3 gen.py ten" }, "refuse");
    for (const expires_in_s of [0, 59, 31 * 86400]) {
      const res = await approve(t, { scope: "session", expires_in_s, patterns: ["python3 gen.py *"] });
      expect(res.status).toBe(400);
      expect(await statusOf(t)).toBe("pending");
    }
    const noExpiry = await approve(t, { scope: "session", patterns: ["python3 gen.py *"] });
    expect(noExpiry.status).toBe(400);
  });
});
