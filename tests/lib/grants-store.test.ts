import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayTest } from "@/tests/helpers/gateway-fixture";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { callTool, type Caller } from "@/lib/gateway/call-tool";
import { approveCall } from "@/lib/approvals/queue";
import { expireGrants, grantsFromCall, listGrants, revokeGrant } from "@/lib/approvals/grants";
import { invalidateRules, loadRules } from "@/lib/policy/rule-store";
import { db } from "@/lib/db";
import { decide } from "@/lib/policy/decide";

/**
 * Grants in process against a real database: saved with an approval, scoped, expiring at a time
 * the test controls (no sleeps), revoked, listed with the calls they allowed, each step audited.
 */

let root: string;
let agent: Caller["agent"];
gatewayTest.beforeAll(({ gateway }) => {
  root = gateway.workspace.root;
  agent = gateway.agent;
  fs.mkdirSync(path.join(root, "src"), { recursive: true });
});

const as = (session: string): Caller => ({ door: "http", agent, sessionKey: session });
const write = (session: string, file: string, content = "x\n") => callTool(as(session), "write_file", { path: file, content }, { waitMs: 0 });

async function grantFrom(session: string, file: string, glob: string, scope: "session" | "workspace" = "session"): Promise<string> {
  const pending = await write(session, file);
  expect(pending.ok ? null : pending.error.name).toBe("approval_pending");
  const decided = await approveCall(pending.call_id!, "admin", undefined, { scope, expires_in_s: 3600, path_glob: glob });
  expect(decided.ok, JSON.stringify(decided)).toBe(true);
  const [g] = await grantsFromCall(pending.call_id!);
  return g.id;
}

describe("grant store", () => {
  it("stores the scope, the reviewer and the call it came from; only its session is allowed", async () => {
    const id = await grantFrom("s1", "src/a.ts", "src/*.ts");
    const row = await db().policyRule.findUnique({ where: { id } });
    const ws = await currentWorkspace();
    expect(row).toMatchObject({ source: "grant", decision: "allow", pathGlob: "src/*.ts", workspaceId: ws.id, createdBy: "admin", enabled: true });
    expect(row?.sessionId).toBeTruthy();
    expect(row!.expiresAt!.getTime() - Date.now()).toBeGreaterThan(3500_000);
    expect((await write("s1", "src/b.ts")).ok).toBe(true);
    const other = await write("s2", "src/c.ts");
    expect(other.ok ? "allowed" : other.error.name).toBe("approval_pending");
    const listed = (await listGrants()).find((g) => g.id === id)!;
    expect(listed).toMatchObject({ state: "active", scope: "session", allowedCalls: 1, createdBy: "admin" });
  });

  it("an expired grant no longer applies (cached or not), and its end is audited once", async () => {
    const id = await grantFrom("s3", "src/d.ts", "src/d*.ts");
    expect((await write("s3", "src/d2.ts")).ok).toBe(true);
    // The cached rules carry the expiry, and each decision compares it with its own time: a
    // cached grant past its expiry does not apply (decided here at a time the test controls).
    const cached = await loadRules();
    const grant = cached.find((r) => r.id === id)!;
    const input = { tool: "write_file", risk: "write" as const, paths: ["src/d9.ts"], workspaceId: grant.workspaceId!, sessionId: grant.sessionId! };
    expect((await decide({ ...input, now: grant.expiresAt! - 1 }, cached)).decision).toBe("allow");
    expect((await decide({ ...input, now: grant.expiresAt! }, cached)).decision).toBe("ask");
    const at = new Date(Date.now() - 1);
    await db().policyRule.update({ where: { id }, data: { expiresAt: at } });
    // The cache still holds the old expiry for up to a second: drop it explicitly (no sleeping).
    invalidateRules();
    const after = await write("s3", "src/d3.ts");
    expect(after.ok ? "allowed" : after.error.name).toBe("approval_pending");
    expect(await expireGrants(new Date())).toBeGreaterThanOrEqual(1);
    expect(await expireGrants(new Date())).toBe(0);
    const events = await db().event.findMany({ where: { type: "policy.grant_expired" } });
    expect(events.filter((e) => JSON.parse(e.dataJson).id === id)).toHaveLength(1);
    expect((await listGrants()).find((g) => g.id === id)?.state).toBe("expired");
  });

  it("revoking ends it at once and is audited; a second revoke is a conflict", async () => {
    const id = await grantFrom("s4", "src/e.ts", "src/e*.ts", "workspace");
    expect((await write("s5", "src/e2.ts")).ok).toBe(true);
    expect(await revokeGrant(id, "admin")).toEqual({ ok: true });
    const again = await write("s5", "src/e3.ts");
    expect(again.ok ? "allowed" : again.error.name).toBe("approval_pending");
    const second = await revokeGrant(id, "admin");
    expect(second.ok ? null : second.error.detail.reason).toBe("already_ended");
    const events = await db().event.findMany({ where: { type: "policy.grant_revoked" } });
    expect(events.some((e) => JSON.parse(e.dataJson).id === id && e.actor === "reviewer:admin")).toBe(true);
    expect((await listGrants()).find((g) => g.id === id)).toMatchObject({ state: "revoked", revokedBy: "admin" });
  });

  it("a refused grant decides nothing", async () => {
    const pending = await write("s6", ".env", "A=1\n");
    const decided = await approveCall(pending.call_id!, "admin", undefined, { scope: "session", expires_in_s: 3600, path_glob: ".env*" });
    expect(decided.ok ? null : decided.error.detail.reason).toBe("grant_refused");
    expect((await db().toolCall.findUnique({ where: { id: pending.call_id! } }))?.status).toBe("pending");
    expect(await grantsFromCall(pending.call_id!)).toEqual([]);
  });
});
