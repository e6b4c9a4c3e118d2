import { db } from "@/lib/db";
import { newId } from "@/lib/ids";

/** One id per process start, so calls without a session header group per token per start. */
const START_ID = newId("start").slice(-10);

/**
 * How long a resolved session id is reused without touching the database (ms). Within it, the
 * session's `lastCallAt` is refreshed at most once (the dashboard shows it to the minute).
 */
const CACHE_MS = 30_000;

interface Cached {
  id: string;
  at: number;
}

const globalForSessions = globalThis as unknown as { agentReachSessions?: Map<string, Cached> };

function cache(): Map<string, Cached> {
  globalForSessions.agentReachSessions ??= new Map();
  return globalForSessions.agentReachSessions;
}

/**
 * The audit Session a call belongs to: the agent's own session key (`X-Agent-Session` header,
 * MCP session id, hook session id) when given, else one session per agent token per server start.
 * A key another token (or, for a reviewer's call, any token) opened first gets this caller's own
 * session (`<key>@<agent id>`, `<key>@reviewer`); the dashboard's keys are apart (`dash:`). The id is
 * cached per (workspace, agent, key) for 30 s, so a busy agent costs one upsert per 30 s
 * instead of one per call.
 * @returns the Session id (created on first use, `lastCallAt` refreshed).
 */
export async function resolveSession(input: {
  workspaceId: string;
  agentId: string | null;
  door: string;
  sessionKey: string | null;
}): Promise<string> {
  // The dashboard's own sessions (a reviewer's restores and rewinds) have a namespace of their
  // own: an agent's X-Agent-Session, whatever it says, never names one of them.
  const namespace = input.door === "mcp" ? "mcp" : input.door === "dashboard" ? "dash" : "key";
  const externalId = input.sessionKey ? `${namespace}:${input.sessionKey.slice(0, 200)}` : `auto:${input.agentId ?? "anonymous"}:${START_ID}`;
  const key = `${input.workspaceId}\0${input.agentId ?? ""}\0${externalId}`;
  const hit = cache().get(key);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.id;
  const now = new Date();
  const upsert = (id: string) =>
    db().session.upsert({
      where: { workspaceId_externalId: { workspaceId: input.workspaceId, externalId: id } },
      create: { id: newId("ses"), workspaceId: input.workspaceId, agentId: input.agentId, externalId: id, door: input.door, startedAt: now, lastCallAt: now },
      update: { lastCallAt: now },
      select: { id: true, agentId: true },
    });
  let session = await upsert(externalId);
  // A session belongs to the token that opened it: another token naming the same key gets a
  // session of its own, so it neither joins that session's timeline nor inherits the "don't ask
  // again" grants a reviewer scoped to it.
  if (session.agentId !== input.agentId) session = await upsert(`${externalId}@${input.agentId ?? "reviewer"}`);
  if (cache().size > 10_000) cache().clear();
  cache().set(key, { id: session.id, at: Date.now() });
  return session.id;
}
