import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * Two `next start` instances on one PostgreSQL database serving one workspace: an
 * approval decided on either instance runs exactly once, on the instance that owns the workspace
 * (the one that registered it last), and an agent waiting on the other instance gets its result.
 * Runs in the "postgres" project only (PostgreSQL is the store for several instances).
 */

const sha256 = (s: string) => crypto.createHash("sha256").update(s).digest("hex");

let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-multi-")));
  // Instances on one database share the audit key (the signed chain head and checkpoints are
  // verified by whichever instance is asked), as the README asks of several instances.
  const env = { AGENT_REACH_AUDIT_KEY: crypto.randomBytes(32).toString("hex") };
  a = await startTestServer({ workspace, env });
  b = await startTestServer({ workspace, databaseUrl: a.databaseUrl, env });
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

async function runningHosts(callId: string): Promise<string[]> {
  const rows = await sql<{ dataJson: string }>(a.databaseUrl, `SELECT "dataJson" FROM "Event" WHERE "callId" = $1 AND type = 'call.running'`, [callId]);
  return rows.map((r) => JSON.parse(r.dataJson).host);
}

async function pendingOn(server: TestServer, file: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const list = await server.reviewer("GET", "/api/approvals");
    const found = list.body.approvals.find((x: { args: { path: string } }) => x.args.path === file);
    if (found) return found.call_id;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${file} never showed up as pending`);
}

describe("several instances on one PostgreSQL database", () => {
  it.each([
    ["queued on A, approved on B (the owner)", () => a, () => b, "one.txt"],
    ["queued on B, approved on A (not the owner)", () => b, () => a, "two.txt"],
  ])("%s: 50 concurrent approvals through both instances run it once, on the owner, and the waiting agent gets the result", async (_label, agentSide, reviewerSide, file) => {
    const owner = b; // registered the workspace last
    fs.writeFileSync(path.join(a.workspace, file), "before\n");
    const waiting = agentSide().call("write_file", { path: file, content: "after\n" }, { prefer: "wait=60" });
    const callId = await pendingOn(reviewerSide(), file);
    // 50 approvals at once: most through the reviewer's instance, every fifth through the other one.
    const decisions = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 5 === 4 ? (reviewerSide() === a ? b : a) : reviewerSide()).reviewer("POST", `/api/approvals/${callId}/approve`, {})),
    );
    expect(decisions.filter((d) => d.status === 200)).toHaveLength(1);
    expect(decisions.filter((d) => d.status === 409)).toHaveLength(49);

    const agent = await waiting;
    expect(agent.status).toBe(200);
    expect(agent.body.call_id).toBe(callId);
    expect(agent.body.data.sha256).toBe(sha256("after\n"));
    expect(fs.readFileSync(path.join(a.workspace, file), "utf8")).toBe("after\n");

    expect(await runningHosts(callId)).toEqual([`test-${new URL(owner.url).port}`]);
    const backups = await sql<{ n: string }>(a.databaseUrl, `SELECT COUNT(*) AS n FROM "Backup" WHERE "callId" = $1`, [callId]);
    expect(Number(backups[0].n)).toBe(1);
  });

  it("keeps one linear hash chain while both instances append", async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).call("read_file", { path: "one.txt" })),
    );
    const verify = await a.reviewer("GET", "/api/audit/verify");
    expect(verify.body.ok).toBe(true);
  });

  it("shows every instance's events on the other's live stream", async () => {
    const controller = new AbortController();
    const res = await fetch(`${a.url}/api/events`, { headers: { authorization: `Bearer ${a.reviewerToken}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const call = await b.call("list_directory", { path: "." });
    let text = "";
    const deadline = Date.now() + 10_000;
    while (!text.includes(call.body.call_id) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    expect(text).toContain(call.body.call_id);
  });
});
