import { db } from "@/lib/db";
import { newId } from "@/lib/ids";

/** One id per process start, so calls without a session header group per token per start. */
const START_ID = newId("start").slice(-10);

/**
 * The audit Session a call belongs to: the agent's own session key (`X-Agent-Session` header,
 * MCP session id, hook session id) when given, else one session per agent token per server start.
 * @returns the Session id (created on first use, `lastCallAt` refreshed).
 */
export async function resolveSession(input: {
  workspaceId: string;
  agentId: string | null;
  door: string;
  sessionKey: string | null;
}): Promise<string> {
  const externalId = input.sessionKey
    ? `${input.door === "mcp" ? "mcp" : "key"}:${input.sessionKey.slice(0, 200)}`
    : `auto:${input.agentId ?? "anonymous"}:${START_ID}`;
  const now = new Date();
  const session = await db().session.upsert({
    where: { workspaceId_externalId: { workspaceId: input.workspaceId, externalId } },
    create: { id: newId("ses"), workspaceId: input.workspaceId, agentId: input.agentId, externalId, door: input.door, startedAt: now, lastCallAt: now },
    update: { lastCallAt: now },
    select: { id: true },
  });
  return session.id;
}
