import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayTest } from "@/tests/helpers/gateway-fixture";
import { callTool, type Caller } from "@/lib/gateway/call-tool";
import { approveCall } from "@/lib/approvals/queue";
import { invalidateRules } from "@/lib/policy/rule-store";
import { loadReview, markReviewed, revertFromReview, unseenCounts, unseenTotal } from "@/lib/dashboard/review";
import { db } from "@/lib/db";

/**
 * The review stream's reads and actions against a real database: which calls count as changes
 * that applied without asking (not reads, not approved calls, not no-op writes, not the
 * reviewer's own reverts), marking reviewed (once, audited), and reverting (conflicts refused).
 */

let root: string;
let agent: Caller["agent"];
gatewayTest.beforeAll(async ({ gateway }) => {
  await db().policyRule.update({ where: { id: "default:write-file" }, data: { enabled: false } });
  await db().policyRule.create({ data: { id: "op:allow-write", priority: 150, tool: "write_file", decision: "allow", note: "test", source: "operator" } });
  invalidateRules();
  root = gateway.workspace.root;
  agent = gateway.agent;
  fs.writeFileSync(path.join(root, "a.txt"), "one\n");
});

const as = (session: string): Caller => ({ door: "http", agent, sessionKey: session });

describe("review stream", () => {
  let sessionId: string;
  const ids: Record<string, string> = {};

  it("lists allowed changes with their diffs, and only those", async () => {
    const w1 = await callTool(as("r1"), "write_file", { path: "a.txt", content: "two\n" }, { waitMs: 0 });
    expect(w1.ok, JSON.stringify(w1)).toBe(true);
    ids.w1 = w1.call_id!;
    const same = await callTool(as("r1"), "write_file", { path: "a.txt", content: "two\n" }, { waitMs: 0 });
    expect(same.ok).toBe(true);
    const created = await callTool(as("r1"), "write_file", { path: "b.txt", content: "bee\n" }, { waitMs: 0 });
    ids.created = created.call_id!;
    await callTool(as("r1"), "read_file", { path: "a.txt" }, { waitMs: 0 });
    // An edit asks (default rule) and is approved: a reviewer already saw it.
    const edit = await callTool(as("r1"), "edit_file", { path: "b.txt", old_string: "bee", new_string: "bea" }, { waitMs: 0 });
    expect(edit.ok ? null : edit.error.name).toBe("approval_pending");
    expect((await approveCall(edit.call_id!, "admin")).ok).toBe(true);
    sessionId = (await db().toolCall.findUnique({ where: { id: ids.w1 } }))!.sessionId;

    expect((await unseenCounts()).get(sessionId)).toBe(2);
    const review = await loadReview(sessionId);
    expect(review.items.map((i) => i.callId)).toEqual([ids.w1, ids.created]);
    expect(review.items[0]).toMatchObject({ tool: "write_file", allowedBy: "op:allow-write", created: false });
    expect(review.items[0].diff).toContain("-one");
    expect(review.items[0].diff).toContain("+two");
    expect(review.items[1]).toMatchObject({ created: true, additions: 1 });
  });

  it("marks reviewed once, audited, and only calls of the stream", async () => {
    const readCall = await db().toolCall.findFirst({ where: { sessionId, tool: "read_file" } });
    expect(await markReviewed([ids.w1, readCall!.id, "call_unknown"], "admin")).toEqual([ids.w1]);
    expect(await markReviewed([ids.w1], "admin")).toEqual([]);
    const events = await db().event.findMany({ where: { type: "call.reviewed", callId: ids.w1 } });
    expect(events.map((e) => e.actor)).toEqual(["reviewer:admin"]);
    expect((await unseenCounts([sessionId])).get(sessionId)).toBe(1);
    expect((await loadReview(sessionId, "all")).items.find((i) => i.callId === ids.w1)?.reviewedBy).toBe("admin");
  });

  it("reverts through revert_call (then marks reviewed); a file changed since is a conflict", async () => {
    // b.txt was edited (approved) after it was created: reverting the creation conflicts.
    const conflict = await revertFromReview(ids.created, "admin");
    expect(conflict.ok ? null : conflict.error.name).toBe("conflict");
    expect(fs.readFileSync(path.join(root, "b.txt"), "utf8")).toBe("bea\n");
    expect((await unseenCounts([sessionId])).get(sessionId)).toBe(1);
    // a.txt is still as the reviewed write left it: that one reverts.
    const reverted = await revertFromReview(ids.w1, "admin");
    expect(reverted.ok, JSON.stringify(reverted)).toBe(true);
    expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("one\n");
    // The reviewer's revert is not itself an unseen change.
    expect(await unseenTotal()).toBe(1);
  });
});
