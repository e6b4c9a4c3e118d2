import { db } from "@/lib/db";
import { callTool } from "@/lib/gateway/call-tool";
import { rewindSession, type RewindOutcome } from "@/lib/effects/rewind";
import type { ChangesSummary } from "@/lib/effects/stage";
import type { Envelope } from "@/lib/result";
import type { ErrorBody } from "@/lib/errors";
import { getTool } from "@/lib/tools/registry";

/**
 * The dashboard's view of file changes: a call's change set (what a command or a revert changed,
 * with its combined diff) and the reviewer's undo actions, which go through the same code as the
 * agent's revert_call and the rewind door.
 */

/** A call's change set as the call page shows it. */
export interface CallChanges {
  /** Journal state: held | applying | applied | discarded. */
  status: string;
  recovery: string | null;
  summary: ChangesSummary;
  /** Combined unified diff (capped when stored). */
  diff: string;
}

/** The change set of a call, or null when it has none (not a command, or it changed nothing). */
export async function getCallChanges(callId: string): Promise<CallChanges | null> {
  const set = await db().changeSet.findUnique({ where: { callId } });
  if (!set) return null;
  const { diff, ...summary } = JSON.parse(set.summaryJson) as ChangesSummary & { diff?: string };
  return { status: set.status, recovery: set.recovery, summary, diff: diff ?? "" };
}

/** True when the call has file changes a revert could undo (any tool). */
export async function isRevertible(callId: string): Promise<boolean> {
  const set = await db().changeSet.findUnique({ where: { callId }, select: { status: true, summaryJson: true } });
  if (set) return set.status === "applied" && (JSON.parse(set.summaryJson) as ChangesSummary).total_files > 0;
  const call = await db().toolCall.findUnique({ where: { id: callId }, select: { tool: true, status: true, shaAfter: true } });
  return !!call && getTool(call.tool)?.changes === "file" && call.status === "succeeded" && !!call.shaAfter;
}

/**
 * Reverts a call as reviewer `login`: a revert_call through the gateway (recorded, fenced,
 * policy-checked; the reviewer's click is the approval when the policy asks), in the
 * reviewer's dashboard session.
 * @returns the revert call's envelope (conflict 605 lists the files that changed since)
 */
export async function revertCallAsReviewer(callId: string, login: string): Promise<Envelope> {
  return callTool({ door: "dashboard", agent: null, reviewer: login, sessionKey: `dashboard:${login}` }, "revert_call", { call_id: callId }, { waitMs: 0 });
}

/** Rewinds a session (or previews it) as reviewer `login`; see lib/effects/rewind.ts. */
export async function rewindAsReviewer(sessionId: string, beforeCallId: string, login: string, dryRun: boolean): Promise<{ ok: true; outcome: RewindOutcome } | { ok: false; error: ErrorBody; outcome?: RewindOutcome }> {
  return rewindSession({ sessionRef: sessionId, beforeCallId, login, dryRun });
}

/** A call of a session that changed files, for the timeline's rewind list. */
export interface ChangingCall {
  id: string;
  tool: string;
  createdAt: Date;
  summary: string | null;
  target: string | null;
}

/**
 * The session's calls that changed files (newest first, at most `limit`): file tools that wrote,
 * and calls whose change set was applied. Reads the session's calls a page at a time and only
 * their change sets (`pageSize` calls a query), so the cost follows the session, not the whole log.
 */
export async function changingCalls(sessionId: string, limit = 100, pageSize = 500): Promise<ChangingCall[]> {
  const out: ChangingCall[] = [];
  let cursor: { id: string } | undefined;
  for (;;) {
    const page = await db().toolCall.findMany({
      where: { sessionId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: pageSize,
      ...(cursor && { cursor, skip: 1 }),
      select: { id: true, tool: true, createdAt: true, summary: true, target: true, status: true, shaAfter: true },
    });
    if (page.length === 0) return out;
    const applied = new Set(
      (await db().changeSet.findMany({ where: { callId: { in: page.map((c) => c.id) }, status: "applied" }, select: { callId: true } })).map((c) => c.callId),
    );
    for (const c of page) {
      const wrote = getTool(c.tool)?.changes === "file" && c.status === "succeeded" && c.shaAfter !== null;
      if (!wrote && !applied.has(c.id)) continue;
      out.push({ id: c.id, tool: c.tool, createdAt: c.createdAt, summary: c.summary, target: c.target });
      if (out.length >= limit) return out;
    }
    if (page.length < pageSize) return out;
    cursor = { id: page[page.length - 1].id };
  }
}

