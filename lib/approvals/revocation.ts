import { db } from "@/lib/db";
import { errorBody } from "@/lib/errors";
import { failure, type Envelope } from "@/lib/result";
import { finishCall, type CallStatus } from "@/lib/audit/calls";

/**
 * What revoking an agent token does to the calls that token made and that have not run yet: a
 * revoked credential must not keep acting through its queue. Every such call ends "rejected" with
 * `approval_rejected` (602), `detail.reason` "token revoked", so the agent's waiters (HTTP
 * `Prefer: wait`, `GET /api/calls/{id}?wait=`, get_call, MCP) learn it like any rejection.
 *
 * Revocation and approval can race; the order of the checks makes the outcome well defined:
 * revoking sets `Agent.revokedAt` first, then ends the agent's pending and approved calls; an
 * approved call re-checks the token right after it moved to "running" and before its tool runs.
 * So a call runs only when its approval and its start both happened before the revocation.
 */

/** The `detail.reason` of a call ended by revocation. */
export const TOKEN_REVOKED_REASON = "token revoked";

/** The 602 envelope of a call whose agent token was revoked before it ran. */
export function revokedEnvelope(callId: string): Envelope {
  return failure(
    callId,
    errorBody("approval_rejected", "The agent token that made this call was revoked before it ran; it was not run.", {
      reason: TOKEN_REVOKED_REASON,
      call_id: callId,
    }),
  );
}

/** True when `agentId` names an agent whose token is revoked (false for null: a call without an agent). */
export async function isAgentRevoked(agentId: string | null): Promise<boolean> {
  if (!agentId) return false;
  const agent = await db().agent.findUnique({ where: { id: agentId }, select: { revokedAt: true } });
  return agent?.revokedAt != null;
}

/**
 * Ends one call of a revoked agent from `from` (conditional, like every transition).
 * @returns the envelope when this caller ended it, else null (it had moved on).
 */
export async function endRevokedCall(callId: string, from: CallStatus[]): Promise<Envelope | null> {
  const envelope = revokedEnvelope(callId);
  const done = await finishCall(callId, from, "rejected", envelope, {
    actor: "system",
    extra: { reviewReason: TOKEN_REVOKED_REASON, decidedAt: new Date() },
  });
  return done ? envelope : null;
}

/**
 * Ends every pending or approved-but-not-started call of `agentId` (call after setting its
 * `revokedAt`).
 * @returns the ids of the calls it ended.
 */
export async function endCallsOfRevokedAgent(agentId: string): Promise<string[]> {
  const rows = await db().toolCall.findMany({ where: { agentId, status: { in: ["pending", "approved"] } }, select: { id: true, status: true } });
  const ended: string[] = [];
  for (const row of rows) {
    if (await endRevokedCall(row.id, [row.status as CallStatus])) ended.push(row.id);
  }
  return ended;
}
