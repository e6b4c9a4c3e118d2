import { beforeAll, describe, expect, it } from "vitest";
import { createAgentToken } from "@/lib/auth/tokens";
import { db } from "@/lib/db";
import { resolveSession } from "@/lib/gateway/sessions";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * Audit sessions belong to the token that opened them (real SQLite): a second token naming the
 * same X-Agent-Session key gets a session of its own, so it cannot join another agent's timeline
 * or use the grants a reviewer scoped to that session.
 */

let workspaceId: string;
beforeAll(async () => {
  await useFreshDatabase();
  workspaceId = (await currentWorkspace()).id;
});

describe("sessions by key", () => {
  it("one token, one key: one session; another token with the same key: its own session", async () => {
    const a = (await createAgentToken("agent-a")).agent;
    const b = (await createAgentToken("agent-b")).agent;
    const first = await resolveSession({ workspaceId, agentId: a.id, door: "http", sessionKey: "shared-name" });
    expect(await resolveSession({ workspaceId, agentId: a.id, door: "http", sessionKey: "shared-name" })).toBe(first);
    const other = await resolveSession({ workspaceId, agentId: b.id, door: "http", sessionKey: "shared-name" });
    expect(other).not.toBe(first);
    const rows = await db().session.findMany({ where: { id: { in: [first, other] } }, select: { id: true, agentId: true, externalId: true } });
    expect(rows.find((r) => r.id === first)).toMatchObject({ agentId: a.id, externalId: "key:shared-name" });
    expect(rows.find((r) => r.id === other)).toMatchObject({ agentId: b.id, externalId: `key:shared-name@${b.id}` });
  });

  it("an agent cannot take the dashboard's session of a reviewer, by any key it sends", async () => {
    const agent = (await createAgentToken("squatter")).agent;
    const squatted = await Promise.all(["dashboard:admin", "dash:dashboard:admin", "key:dashboard:admin"].map((sessionKey) => resolveSession({ workspaceId, agentId: agent.id, door: "http", sessionKey })));
    const dashboard = await resolveSession({ workspaceId, agentId: null, door: "dashboard", sessionKey: "dashboard:admin" });
    expect(squatted).not.toContain(dashboard);
    const row = await db().session.findUniqueOrThrow({ where: { id: dashboard }, select: { agentId: true, externalId: true } });
    expect(row).toEqual({ agentId: null, externalId: "dash:dashboard:admin" });
  });

  it("a reviewer's call naming a session an agent opened gets a session of its own", async () => {
    const agent = (await createAgentToken("opener")).agent;
    const agents = await resolveSession({ workspaceId, agentId: agent.id, door: "http", sessionKey: "opened-by-agent" });
    const reviewers = await resolveSession({ workspaceId, agentId: null, door: "http", sessionKey: "opened-by-agent" });
    expect(reviewers).not.toBe(agents);
    expect((await db().session.findUniqueOrThrow({ where: { id: reviewers } })).externalId).toBe("key:opened-by-agent@reviewer");
  });
});
