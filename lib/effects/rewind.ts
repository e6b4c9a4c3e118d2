import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { errorBody, ToolError, toErrorBody, type ErrorBody } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { failure, success, type Envelope } from "@/lib/result";
import { finishCall, recordReceived, transition } from "@/lib/audit/calls";
import { backupStoreFor } from "@/lib/backups/store";
import type { Conflict } from "@/lib/effects/call-hooks";
import { changesOfCall, executeUndo, planUndo, previewUndo, sessionCallsFrom } from "@/lib/effects/revert";
import type { ChangesSummary } from "@/lib/effects/stage";
import { resolveSession } from "@/lib/gateway/sessions";
import { currentWorkspace } from "@/lib/workspace/register-workspace";

/**
 * Session rewind: "put the workspace back as it was before call N". Every change of the session
 * from call N on (write_file, edit_file, restore_backup, run_command, revert_call) is undone,
 * newest first, combined per path into one change set: a path must still hold what the
 * session's last change left there, else it is a conflict and nothing is changed; a path that
 * already holds what it held before the call (an earlier rewind or revert put it back) is left
 * alone, and a call none of whose paths is left to undo is not listed. The rewind is
 * one reviewer action in the audit log (a call `rewind_session` in the reviewer's dashboard
 * session, with its own backups and change set), so it can itself be reverted with revert_call.
 */

/** What a rewind did, or would do (`dry_run`). */
export interface RewindOutcome {
  /** The rewind's own call id (null for a dry run or a refused rewind). */
  call_id: string | null;
  session_id: string;
  before_call_id: string;
  dry_run: boolean;
  /** The calls whose changes are undone, newest first. */
  reverted_calls: Array<{ call_id: string; tool: string; created_at: string; files: number }>;
  conflicts: Conflict[];
  not_revertible: string[];
  changes: ChangesSummary;
  /** Combined unified diff of the rewind. */
  diff: string;
}

/**
 * Finds a session by its id (`ses_…`, as the timeline shows it) or by the agent's own key (the
 * X-Agent-Session value, or an MCP session id).
 * @throws ToolError `not_found`
 */
export async function findSession(ref: string, workspaceId: string): Promise<{ id: string }> {
  const byId = await db().session.findFirst({ where: { id: ref, workspaceId }, select: { id: true } });
  if (byId) return byId;
  const byKey = await db().session.findFirst({ where: { workspaceId, externalId: { in: [`key:${ref}`, `mcp:${ref}`, ref] } }, select: { id: true } });
  if (byKey) return byKey;
  throw new ToolError("not_found", `No session ${JSON.stringify(ref)} in this workspace.`, { reason: "session_not_found", session_id: ref });
}

/**
 * Rewinds (or, with `dryRun`, previews rewinding) session `sessionRef` to just before call
 * `beforeCallId`, as reviewer `login`.
 * @returns `{ok: true, outcome}`, or `{ok: false, error, outcome?}`: `not_found` (session or
 *   call), `conflict` (605, outcome lists the conflicts; nothing changed), `write_failed`
 */
export async function rewindSession(input: { sessionRef: string; beforeCallId: string; login: string; dryRun: boolean }): Promise<{ ok: true; outcome: RewindOutcome } | { ok: false; error: ErrorBody; outcome?: RewindOutcome }> {
  const workspace = await currentWorkspace();
  let sessionId: string;
  let calls: Awaited<ReturnType<typeof sessionCallsFrom>>;
  try {
    sessionId = (await findSession(input.sessionRef, workspace.id)).id;
    calls = await sessionCallsFrom(sessionId, input.beforeCallId);
  } catch (err) {
    return { ok: false, error: toErrorBody(err) };
  }
  const perCall = [];
  for (const c of calls) perCall.push({ call: c, rows: await changesOfCall(c.id, workspace) });
  const withRows = perCall.filter((p) => p.rows.length > 0);
  // Paths already back as they were (this rewind ran before, or a revert undid them) are not
  // conflicts: nothing would be overwritten there. A call all of whose paths are back is not
  // listed as one to undo, so a rewind that ran shows nothing left instead of "changed since".
  const plan = await planUndo(workspace, withRows.map((p) => p.rows), { skipUndone: true });
  const undone = new Set(plan.alreadyUndone);
  const changing = withRows.filter((p) => !p.rows.every((r) => undone.has(r.path)));
  const preview = await previewUndo(workspace, plan);
  const outcome: RewindOutcome = {
    call_id: null,
    session_id: sessionId,
    before_call_id: input.beforeCallId,
    dry_run: input.dryRun,
    reverted_calls: changing.map((p) => ({ call_id: p.call.id, tool: p.call.tool, created_at: p.call.createdAt.toISOString(), files: p.rows.length })),
    conflicts: plan.conflicts,
    not_revertible: plan.notRevertible,
    changes: { ...preview.summary, status: input.dryRun ? "held" : "applied" },
    diff: preview.diff,
  };
  if (input.dryRun) return { ok: true, outcome };
  if (plan.conflicts.length > 0) {
    return { ok: false, error: errorBody("conflict", `${plan.conflicts.length} file(s) changed after the session's last change to them; nothing was rewound.`, { conflicts: plan.conflicts.slice(0, 100) }), outcome };
  }

  // One reviewer action in the audit log: the rewind's own call.
  const config = getConfig();
  const callId = newId("call");
  const actor = `reviewer:${input.login}`;
  const ownSession = await resolveSession({ workspaceId: workspace.id, agentId: null, door: "dashboard", sessionKey: `dashboard:${input.login}` });
  await recordReceived({
    id: callId,
    sessionId: ownSession,
    workspaceId: workspace.id,
    agentId: null,
    door: "dashboard",
    tool: "rewind_session",
    args: { session_id: sessionId, before_call_id: input.beforeCallId },
    hostId: config.hostId,
    actor,
  });
  const startedAt = new Date();
  await transition(callId, ["received"], "running", {
    actor,
    eventData: { session_id: sessionId, before_call_id: input.beforeCallId, calls: outcome.reverted_calls.length },
    decision: "allow",
    decisionJson: JSON.stringify({ decision: "allow", rule: null, reasons: ["a reviewer's own action"] }),
    reviewer: input.login,
    target: `rewind ${sessionId} to before ${input.beforeCallId}`,
    startedAt,
  });
  const resultBase = { session_id: sessionId, before_call_id: input.beforeCallId, reverted_calls: outcome.reverted_calls };
  let envelope: Envelope;
  try {
    const done = await executeUndo({ callId, workspace, plan, backups: backupStoreFor(workspace.id, callId), result: resultBase });
    outcome.changes = done.summary;
    outcome.diff = done.diff;
    outcome.call_id = callId;
    envelope = success(callId, { ...resultBase, changes: done.summary });
    await finishCall(callId, ["running"], "succeeded", envelope, {
      actor,
      startedAt,
      notes: { summary: `rewound ${outcome.reverted_calls.length} call(s): ${done.summary.created} created, ${done.summary.modified} modified, ${done.summary.deleted} deleted` },
    });
    // The reviewer who undid these calls has dealt with them: they leave the review stream.
    await db().toolCall.updateMany({ where: { id: { in: outcome.reverted_calls.map((c) => c.call_id) }, reviewedAt: null }, data: { reviewedAt: new Date(), reviewedBy: input.login } });
    return { ok: true, outcome };
  } catch (err) {
    const body = toErrorBody(err);
    envelope = failure(callId, body);
    await finishCall(callId, ["running"], body.name === "conflict" ? "conflict" : "failed", envelope, { actor, startedAt });
    return { ok: false, error: body, outcome: { ...outcome, call_id: callId } };
  }
}
