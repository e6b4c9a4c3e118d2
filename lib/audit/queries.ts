import { db } from "@/lib/db";
import type { Envelope } from "@/lib/result";
import { decisionColumn, resultColumn } from "@/lib/audit/record";
import type { PolicyVerdict } from "@/lib/policy/types";

/** A call as the status endpoint and get_call describe it (snake_case, times as ISO strings). */
export interface CallSummary {
  call_id: string;
  tool: string;
  door: string;
  session_id: string;
  agent_id: string | null;
  status: string;
  decision: string | null;
  error: string | null;
  path: string | null;
  reviewer: string | null;
  review_reason: string | null;
  created_at: string;
  decided_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  expires_at: string | null;
  duration_ms: number | null;
}

/**
 * One call with its stored envelope (null until it finished) and the policy verdict recorded when
 * it was decided (redacted as stored; null when none was recorded or it does not parse), so a
 * status answer names the same reasons the call's own 601 did, also after a restart.
 * @returns null when no call has this id.
 */
export async function getCallWithResult(callId: string): Promise<{ summary: CallSummary; envelope: Envelope | null; verdict: PolicyVerdict | null } | null> {
  const row = await db().toolCall.findUnique({ where: { id: callId } });
  if (!row) return null;
  return {
    summary: {
      call_id: row.id,
      tool: row.tool,
      door: row.door,
      session_id: row.sessionId,
      agent_id: row.agentId,
      status: row.status,
      decision: row.decision,
      error: row.errorName,
      path: row.pathResolved,
      reviewer: row.reviewer,
      review_reason: row.reviewReason,
      created_at: row.createdAt.toISOString(),
      decided_at: row.decidedAt?.toISOString() ?? null,
      started_at: row.startedAt?.toISOString() ?? null,
      finished_at: row.finishedAt?.toISOString() ?? null,
      expires_at: row.expiresAt?.toISOString() ?? null,
      duration_ms: row.durationMs,
    },
    envelope: resultColumn.decode(row.resultJson),
    verdict: decisionColumn.decode(row.decisionJson),
  };
}

/** A row of the recent-calls list. */
export interface RecentCall {
  id: string;
  tool: string;
  door: string;
  status: string;
  decision: string | null;
  errorName: string | null;
  target: string | null;
  summary: string | null;
  createdAt: Date;
  durationMs: number | null;
}

/** The newest calls first (at most `limit`, default 100). */
export async function listRecentCalls(limit = 100): Promise<RecentCall[]> {
  return db().toolCall.findMany({
    orderBy: { createdAt: "desc" },
    take: limit,
    select: { id: true, tool: true, door: true, status: true, decision: true, errorName: true, target: true, summary: true, createdAt: true, durationMs: true },
  });
}
