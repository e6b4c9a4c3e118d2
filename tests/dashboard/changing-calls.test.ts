import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayTest } from "@/tests/helpers/gateway-fixture";
import { callTool, type Caller } from "@/lib/gateway/call-tool";
import { changingCalls } from "@/lib/dashboard/effects";
import { db } from "@/lib/db";
import { setWorkspacePreset } from "@/lib/policy/preset-store";

/**
 * The session page's list of calls that changed files: file tools that wrote and calls with an
 * applied change set, newest first, read a page of the session's calls at a time (a session of
 * other calls, or calls of other sessions, must not hide or add entries).
 */
let agent: Caller["agent"];
gatewayTest.beforeAll(async ({ gateway }) => {
  const { workspace } = gateway;
  await setWorkspacePreset(workspace.id, "balanced", "test");
  agent = gateway.agent;
  fs.writeFileSync(path.join(workspace.root, "a.txt"), "one\n");
});

const as = (session: string): Caller => ({ door: "http", agent, sessionKey: session });

describe("changingCalls", () => {
  it("lists the writes of its own session, newest first, across pages, and stops at the limit", async () => {
    const w1 = await callTool(as("s1"), "write_file", { path: "a.txt", content: "two\n" }, { waitMs: 0 });
    expect(w1.ok, JSON.stringify(w1)).toBe(true);
    await callTool(as("s1"), "read_file", { path: "a.txt" }, { waitMs: 0 });
    await callTool(as("other"), "write_file", { path: "c.txt", content: "elsewhere\n" }, { waitMs: 0 });
    await callTool(as("s1"), "read_file", { path: "a.txt" }, { waitMs: 0 });
    const w2 = await callTool(as("s1"), "write_file", { path: "b.txt", content: "bee\n" }, { waitMs: 0 });
    await callTool(as("s1"), "read_file", { path: "b.txt" }, { waitMs: 0 });
    const w3 = await callTool(as("s1"), "edit_file", { path: "b.txt", old_string: "bee", new_string: "bea" }, { waitMs: 0 });
    expect(w3.ok, JSON.stringify(w3)).toBe(true);
    const sessionId = (await db().toolCall.findUnique({ where: { id: w1.call_id! } }))!.sessionId;

    for (const pageSize of [1, 2, 500]) {
      expect((await changingCalls(sessionId, 100, pageSize)).map((c) => c.id)).toEqual([w3.call_id, w2.call_id, w1.call_id]);
    }
    expect((await changingCalls(sessionId, 2, 2)).map((c) => c.id)).toEqual([w3.call_id, w2.call_id]);
  });
});
