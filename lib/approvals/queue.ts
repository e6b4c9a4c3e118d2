import { notifyPendingWebhook } from "@/lib/notify/webhook";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { errorBody } from "@/lib/errors";
import { failure, success, type Envelope, type Result } from "@/lib/result";
import { finishCall, isFinal, transition } from "@/lib/audit/calls";
import { getTool } from "@/lib/tools/registry";
import type { ToolPreview } from "@/lib/tools/define-tool";
import type { PolicyVerdict } from "@/lib/policy/types";
import { executeCall } from "@/lib/gateway/execute";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { endRevokedCall, isAgentRevoked } from "@/lib/approvals/revocation";
import { expireCall, isOverdue, waitForAnswer } from "@/lib/approvals/wait";
import { startExecutor } from "@/lib/approvals/executor";
import { argsColumn, pendingColumn, presetOf, queuedTargetSha256, ruleOptionsOf } from "@/lib/audit/record";
import { planFacts, planGrant, saveGrant, type GrantPlan, type GrantRequest } from "@/lib/approvals/grants";
import { applyHeldEffects, discardHeldEffects, dropHeldEffects, isHeldEffects } from "@/lib/effects/call-hooks";

/**
 * The approval queue. A call the policy answers `ask` for sits in status "pending" with its exact
 * arguments (execArgsJson), the policy verdict and, for writes, the target's sha256 and the
 * proposed diff computed at queue time (pendingJson). A reviewer approves (optionally with edited
 * content), rejects with a reason, or lets it expire. Every decision is one conditional update,
 * so a call runs at most once however many reviewers, tabs or instances approve it.
 */

export type { PendingDetail } from "@/lib/audit/record";

/** Outcome of a reviewer's decision request. */
export type DecisionResult = Result<{ status: string; envelope: Envelope | null }>;

export { waitForAnswer, waitForOutcome, withdrawCall } from "@/lib/approvals/wait";

/**
 * Ends every pending call whose `expiresAt` has passed (the server's periodic sweep and the
 * pending list). Waiters and approvals check their own call instead. @returns how many.
 */
export async function expireDue(): Promise<number> {
  const due = await db().toolCall.findMany({
    where: { status: "pending", expiresAt: { lt: new Date() } },
    select: { id: true },
    take: 500,
  });
  let count = 0;
  for (const { id } of due) if (await expireCall(id)) count++;
  return count;
}

/**
 * Approves a pending call, which then runs once with its exact queued arguments, or with the
 * reviewer's edited value of the tool's editable argument (`content`: write_file's content,
 * edit_file's new_string; ToolDefinition.editable), which the log keeps beside the original.
 * A held change set (the call is pending with `pendingJson.effects`: its command already ran) is
 * approved the same way; approving applies it (lib/effects/call-hooks.ts).
 * With `grant`, the approval also allows the call's pattern from now on (lib/approvals/grants.ts):
 * the grant is checked first (a refused grant answers `invalid_arguments`, detail.reason
 * "grant_refused", and nothing is decided), the approval's event lists the rules it creates, and
 * they are saved right after the approval.
 * @returns the call's envelope once it ran (null if the owning instance has not run it within the
 *   wait bound; it still will). When the command ran and its file changes were held for a
 *   reviewer, status "pending" and the held result envelope (`changes.status` "held"): the
 *   effect waits for its own approval (state machine: lib/approvals/wait.ts); `not_found`, `approval_expired`, `invalid_arguments`
 *   (content given for a tool that is not editable) or `conflict` (detail.reason "already_decided") otherwise.
 */
export async function approveCall(callId: string, reviewer: string, edit?: { content?: string }, grant?: GrantRequest): Promise<DecisionResult> {
  const row = await db().toolCall.findUnique({ where: { id: callId } });
  if (!row) return { ok: false, error: errorBody("not_found", `No call ${callId}.`, { call_id: callId }) };
  if (isOverdue(row)) {
    await expireCall(callId);
    return alreadyDecided(callId, "expired");
  }
  if (row.status !== "pending" || !row.execArgsJson) return alreadyDecided(callId, row.status);
  if (await isAgentRevoked(row.agentId)) {
    await endRevokedCall(callId, ["pending"]);
    return alreadyDecided(callId, "rejected");
  }
  const tool = getTool(row.tool);
  if (!tool) return { ok: false, error: errorBody("unknown_tool", `Tool ${row.tool} is no longer registered.`) };

  const queuedArgs = argsColumn.decode(row.execArgsJson);
  if (!queuedArgs) return { ok: false, error: errorBody("invalid_arguments", "The queued arguments of this call cannot be read back.", { call_id: callId }) };
  let args = queuedArgs;
  let editedArgsJson: string | null = null;
  if (edit?.content !== undefined) {
    if (pendingColumn.decode(row.pendingJson)?.external) {
      return { ok: false, error: errorBody("invalid_arguments", "This call is carried out by the agent's own tool (a hook): it can be approved or rejected, not edited.") };
    }
    if (!tool.editable) {
      return { ok: false, error: errorBody("invalid_arguments", `A ${row.tool} call cannot be approved with edited content.`) };
    }
    args = { ...args, [tool.editable.field]: edit.content };
    editedArgsJson = argsColumn.encode(args);
  }
  if (!tool.input.safeParse(args).success) {
    return { ok: false, error: errorBody("invalid_arguments", "The edited arguments are not valid for this tool.") };
  }

  // A grant is checked before anything is decided: a refused grant leaves the call pending.
  let plan: GrantPlan | null = null;
  if (grant) {
    if (isHeldEffects(row.pendingJson)) return { ok: false, error: errorBody("invalid_arguments", "Grant refused: a held change set is approved on its own, never by a grant.", { reason: "grant_refused" }) };
    const checked = await planGrant(row, args, grant, reviewer);
    if (!checked.ok) return checked;
    plan = checked.plan;
  }

  const actor = `reviewer:${reviewer}`;
  startExecutor();
  const approved = await transition(callId, ["pending"], "approved", {
    actor,
    eventData: { edited: editedArgsJson !== null, ...(plan && { grants: planFacts(plan) }) },
    reviewer,
    decidedAt: new Date(),
    ...(editedArgsJson && { editedArgsJson }),
  });
  if (!approved) {
    const now = await db().toolCall.findUnique({ where: { id: callId }, select: { status: true } });
    return alreadyDecided(callId, now?.status ?? "unknown");
  }
  if (plan) await saveGrant(plan, reviewer);
  // The executor of the instance that owns the workspace runs the call when it sees the approval
  // (this process's bus, LISTEN/NOTIFY, or the sweep); this request only waits for the outcome.
  // A command whose change set is held answers at once with its held result (status "pending").
  const envelope = await waitForAnswer(callId, getConfig().approvalWaitMaxMs);
  const final = await db().toolCall.findUnique({ where: { id: callId }, select: { status: true } });
  return { ok: true, status: final?.status ?? "unknown", envelope };
}

/**
 * Runs an approved call on this instance, once: the approved → running move is conditional, so
 * when several instances or requests try, exactly one runs it.
 * @returns the call's envelope, or null when this caller did not get to run it (someone else
 *   did, it is not approved, or this instance does not own its workspace).
 */
export async function runApproved(callId: string): Promise<Envelope | null> {
  const row = await db().toolCall.findUnique({ where: { id: callId } });
  const workspace = await currentWorkspace();
  if (!row || row.status !== "approved" || row.workspaceId !== workspace.id) return null;
  if (!(await ownsWorkspace(workspace.id))) return null;
  // A held change set: the command already ran; approving applies its effect.
  if (isHeldEffects(row.pendingJson)) return applyHeldEffects(callId, workspace, `reviewer:${row.reviewer ?? "unknown"}`);
  const tool = getTool(row.tool);
  const argsJson = row.editedArgsJson ?? row.execArgsJson;
  if (!tool || !argsJson) return null;
  const parsed = tool.input.safeParse(argsColumn.decode(argsJson));
  const actor = `reviewer:${row.reviewer ?? "unknown"}`;
  const pending = pendingColumn.decode(row.pendingJson);
  if (await isAgentRevoked(row.agentId)) return endRevokedCall(callId, ["approved"]);
  if (pending?.external) {
    // Decide only: the agent's own tool runs it once the waiting hook answers "allow".
    const envelope = success(callId, { executed: false, decision: "approved", reviewer: row.reviewer });
    return (await finishCall(callId, ["approved"], "succeeded", envelope, { actor })) ? envelope : null;
  }
  const host = getConfig().hostId;
  if (!(await transition(callId, ["approved"], "running", { actor, startedAt: new Date(), eventData: { host } }))) return null;
  // Revoked between the check above and the start: the call has not run, so it does not.
  if (await isAgentRevoked(row.agentId)) return endRevokedCall(callId, ["running"]);
  if (!parsed.success) {
    const envelope = failure(callId, errorBody("invalid_arguments", "The approved arguments are no longer valid for this tool."));
    await finishCall(callId, ["running"], "failed", envelope, { actor });
    return envelope;
  }
  const queuedSha = queuedTargetSha256(row.pendingJson);
  return executeCall({
    callId,
    tool,
    args: parsed.data,
    workspace,
    notes: {},
    actor,
    ...(queuedSha !== undefined && { queuedTargetSha256: queuedSha }),
    ruleOptions: ruleOptionsOf(row.decisionJson),
    preset: presetOf(row.decisionJson) ?? undefined,
  });
}

/** True when this instance owns the workspace (it registered it last), so it runs its approved calls. */
async function ownsWorkspace(workspaceId: string): Promise<boolean> {
  const owner = await db().workspace.findUnique({ where: { id: workspaceId }, select: { hostId: true } });
  return owner?.hostId === getConfig().hostId;
}

/** How old an approval must be before the sweep runs it in place of the executor (ms). */
const BACKLOG_GRACE_MS = 3000;

/**
 * Runs every approved call of this instance's workspace that nobody has started (approvals
 * decided on another instance, or left approved by a restart).
 * @returns how many it ran.
 */
export async function runApprovedBacklog(): Promise<number> {
  const workspace = await currentWorkspace();
  if (!(await ownsWorkspace(workspace.id))) return 0;
  const rows = await db().toolCall.findMany({
    // Fallback only: the executor runs fresh approvals as they are announced.
    where: { workspaceId: workspace.id, status: "approved", decidedAt: { lt: new Date(Date.now() - BACKLOG_GRACE_MS) } },
    orderBy: { decidedAt: "asc" },
    select: { id: true },
    take: 50,
  });
  let ran = 0;
  for (const { id } of rows) if (await runApproved(id)) ran++;
  return ran;
}

/** What the log records as the reason of a rejection given without one. */
export const NO_REASON_GIVEN = "no reason given";

/**
 * Rejects a pending call; the agent receives `approval_rejected` (602) with the reason. An empty
 * reason is accepted (the reviewer API allows it) and recorded as "no reason given", so neither
 * the agent nor the log reads it as an explanation.
 * @returns the rejected envelope, or `not_found` / `conflict` (already decided).
 */
export async function rejectCall(callId: string, reviewer: string, givenReason: string): Promise<DecisionResult> {
  const reason = givenReason.trim() === "" ? NO_REASON_GIVEN : givenReason;
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { status: true, pendingJson: true } });
  if (!row) return { ok: false, error: errorBody("not_found", `No call ${callId}.`, { call_id: callId }) };
  const envelope =
    (row.status === "pending" && isHeldEffects(row.pendingJson) ? await discardHeldEffects(callId, reason, reviewer) : null) ??
    failure(
      callId,
      errorBody("approval_rejected", givenReason.trim() === "" ? `A reviewer rejected this call (${NO_REASON_GIVEN}).` : `A reviewer rejected this call: ${reason}`, {
        reason,
        reviewer,
      }),
    );
  const done = await finishCall(callId, ["pending"], "rejected", envelope, {
    actor: `reviewer:${reviewer}`,
    extra: { reviewer, reviewReason: reason, decidedAt: new Date() },
  });
  if (!done) {
    const now = await db().toolCall.findUnique({ where: { id: callId }, select: { status: true } });
    return alreadyDecided(callId, now?.status ?? row.status);
  }
  await dropHeldEffects(callId);
  return { ok: true, status: "rejected", envelope };
}

function alreadyDecided(callId: string, status: string): DecisionResult {
  return {
    ok: false,
    error: errorBody("conflict", `Call ${callId} is not pending any more (status: ${status}).`, {
      reason: "already_decided",
      call_id: callId,
      status,
    }),
  };
}

/** A pending call as the reviewer API and the dashboard show it. */
export interface PendingCallView {
  call_id: string;
  tool: string;
  session_id: string;
  agent_id: string | null;
  created_at: string;
  expires_at: string | null;
  /** The exact arguments that will run when approved. */
  args: unknown;
  path: string | null;
  preview: ToolPreview;
  verdict: PolicyVerdict | null;
}

/** Pending calls, oldest first (at most `limit`). */
export async function listPending(limit = 200): Promise<PendingCallView[]> {
  await expireDue();
  const rows = await db().toolCall.findMany({ where: { status: "pending" }, orderBy: { createdAt: "asc" }, take: limit });
  return rows.map((row) => {
    const pending = pendingColumn.decode(row.pendingJson);
    return {
      call_id: row.id,
      tool: row.tool,
      session_id: row.sessionId,
      agent_id: row.agentId,
      created_at: row.createdAt.toISOString(),
      expires_at: row.expiresAt?.toISOString() ?? null,
      args: argsColumn.decode(row.execArgsJson) ?? argsColumn.decode(row.argsJson) ?? {},
      path: row.pathResolved,
      preview: pending?.preview ?? {},
      verdict: pending?.verdict ?? null,
    };
  });
}

/**
 * Calls this host left "running" when it stopped are marked "interrupted" at start: they may or
 * may not have taken effect, and they are never run again. Calls it left "received" (the server
 * stopped after writing the call's first row and before the policy decided; nothing ran) are
 * marked "interrupted" too, so no row stays in a state nobody will ever move it out of. An
 * interrupted write that had saved its backup gets that backup's id and the old bytes' sha256 on
 * its row (the reviewer can restore them). Pending
 * calls stay pending; approved calls that never started are run by `runApprovedBacklog`.
 * @returns how many were marked.
 */
export async function markInterrupted(hostId: string): Promise<number> {
  const rows = await db().toolCall.findMany({ where: { hostId, status: { in: ["received", "running"] } }, select: { id: true, status: true } });
  let count = 0;
  for (const row of rows) {
    const ran = row.status === "running";
    const message = ran
      ? "The server stopped while this call was running; check the file before retrying."
      : "The server stopped before this call was decided; it did not run. Retry it.";
    const envelope = failure(row.id, errorBody("internal", message, { reason: "interrupted", started: ran }));
    // A write saves its backup right before its rename: when one exists, the write may have
    // replaced the file, and the row points at the old bytes.
    const backup = ran ? await db().backup.findFirst({ where: { callId: row.id }, select: { id: true, blobSha: true } }) : null;
    const extra = backup ? { backupId: backup.id, shaBefore: backup.blobSha } : {};
    if (await finishCall(row.id, [row.status as "received" | "running"], "interrupted", envelope, { actor: "system", extra })) count++;
  }
  return count;
}

/**
 * Tells the configured webhook that a call waits, with a link to it (format and sending:
 * lib/notify/webhook.ts). Best effort: failures are logged, never raised. Bounded to 5 s.
 */
export async function notifyPending(callId: string): Promise<void> {
  try {
    await notifyPendingWebhook(callId);
  } catch (err) {
    console.warn(`[agent-reach] webhook for ${callId} failed: ${(err as Error).message}`);
  }
}
