import { db } from "@/lib/db";
import { errorBody, toErrorBody, type ErrorBody } from "@/lib/errors";
import { listPending, type DecisionResult, type PendingCallView } from "@/lib/approvals/queue";
import { readOnlyContext } from "@/lib/gateway/contexts";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { getTool } from "@/lib/tools/registry";
import type { ToolPreview } from "@/lib/tools/define-tool";
import { targetState, type TargetState } from "@/lib/dashboard/files";
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from "diff";
import { diffTexts } from "@/lib/diff/unified";
import { readWorkspaceFile } from "@/lib/dashboard/files";
import { sha256Hex } from "@/lib/workspace/text";
import { callOutcome, finalDecision, sessionName, type CallOutcome } from "@/lib/dashboard/outcome";
import { argsColumn, pendingColumn } from "@/lib/audit/record";
import { grantSuggestions } from "@/lib/approvals/grants";
import { isHeldEffects } from "@/lib/effects/call-hooks";
import { GRANT_EXPIRY_CHOICES } from "@/lib/policy/grants";
import { sandboxStatus } from "@/lib/exec/sandbox";

/**
 * Reads for the approvals inbox: the pending calls of lib/approvals/queue.ts plus what a reviewer
 * needs beside them: who asked (agent, session), whether the target file changed since the diff
 * was computed, and, for a write_file, the exact proposed content to edit.
 */

/** An earlier call of the same session, as the inbox lists it for context. */
export interface SessionCall {
  id: string;
  tool: string;
  target: string | null;
  createdAt: string;
  outcome: CallOutcome;
  /** "auto-allowed", "approved", "rejected", "expired", "denied", "pending" or "—". */
  decision: string;
}

/** How many earlier calls of the session the inbox shows beside a pending call. */
export const SESSION_CONTEXT_CALLS = 8;

/** One pending call as the inbox shows it. */
export interface InboxItem extends PendingCallView {
  /** The agent token's name. */
  agentName: string | null;
  door: string;
  /** The name the agent gave its session (X-Agent-Session value), not the internal id. */
  sessionName: string;
  /** What the agent said the call is for (the Claude Code hook's `description`), or null. */
  description: string | null;
  /** The session's calls before this one, newest first (at most SESSION_CONTEXT_CALLS). */
  earlier: SessionCall[];
  /** Calls of the session before this one in all (earlier may show fewer). */
  earlierTotal: number;
  /** For calls about one file (preview.path): that file's state now. */
  target: TargetState | null;
  /** For run_command: the command exactly as it will run and its cwd argument (null = root). */
  command: { command: string; cwd: string | null } | null;
  /** A decide-only call (a hook): the agent's own tool carries it out once approved; not editable. */
  external: boolean;
  /**
   * A command that asks because it reads a secret, and will run in the sandbox, where the
   * workspace's secret files read empty: approving runs it but shows it no secret.
   */
  secretsStayMasked: boolean;
  /**
   * The argument a reviewer may edit before approving (the tool's `editable` field: write_file's
   * content, edit_file's new_string) and its proposed value; null when the call is not editable.
   */
  editable: { field: string; label: string; value: string } | null;
  /**
   * The pending change can be shown with more context than the queued diff (the tool proposes one
   * file's new text: ToolDefinition.proposedText; previewWithContext).
   */
  moreContext: boolean;
  /** @deprecated same as `editable.value`; kept for readers of the old shape. */
  proposedContent: string | null;
  /** The "don't ask again" grant the card offers, or null when none can be made for this call. */
  grantOffer: GrantOfferView | null;
}

/** What the approval card offers to allow from now on (lib/approvals/grants.ts). */
export interface GrantOfferView {
  tool: string;
  kind: "command" | "path";
  /** Suggested command patterns (one per asking simple command) or path globs (broadest first). */
  suggestions: string[];
  expiryChoices: ReadonlyArray<{ seconds: number; label: string }>;
}

/** Pending calls, oldest first, with agent and session names, context and target state. */
export async function loadInbox(): Promise<{ items: InboxItem[]; workspaceRoot: string }> {
  const [pending, workspace] = await Promise.all([listPending(), currentWorkspace()]);
  const ids = pending.map((p) => p.call_id);
  const [calls, received] = await Promise.all([
    db().toolCall.findMany({
      where: { id: { in: ids } },
      select: { id: true, door: true, pendingJson: true, session: { select: { externalId: true } } },
    }),
    db().event.findMany({ where: { callId: { in: ids }, type: "call.received" }, select: { callId: true, dataJson: true } }),
  ]);
  const rows = new Map(calls.map((c) => [c.id, c]));
  const descriptions = new Map(received.map((e) => [e.callId, describedAs(e.dataJson)]));
  const external = new Set(calls.filter((c) => pendingColumn.decode(c.pendingJson)?.external === true).map((c) => c.id));
  const agentIds = [...new Set(pending.map((p) => p.agent_id).filter((id): id is string => id !== null))];
  const agents = await db().agent.findMany({ where: { id: { in: agentIds } }, select: { id: true, name: true } });
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const boxed = sandboxStatus().available;
  const items = await Promise.all(
    pending.map(async (p): Promise<InboxItem> => {
      const args = (p.args ?? {}) as Record<string, unknown>;
      const tool = getTool(p.tool);
      const field = tool?.editable && !external.has(p.call_id) ? tool.editable : null;
      const value = field ? args[field.field] : undefined;
      const editable = field && typeof value === "string" ? { ...field, value } : null;
      const context = await sessionContext(p.session_id, new Date(p.created_at), p.call_id);
      return {
        ...p,
        agentName: p.agent_id ? (names.get(p.agent_id) ?? null) : null,
        door: rows.get(p.call_id)?.door ?? "unknown",
        sessionName: sessionName(rows.get(p.call_id)?.session.externalId ?? p.session_id),
        description: descriptions.get(p.call_id) ?? null,
        earlier: context.calls,
        earlierTotal: context.total,
        target: await targetState(workspace, p.preview),
        command: p.tool === "run_command" && typeof args.command === "string" ? { command: args.command, cwd: typeof args.cwd === "string" ? args.cwd : null } : null,
        external: external.has(p.call_id),
        secretsStayMasked: tool?.risk === "exec" && !external.has(p.call_id) && boxed && (p.verdict?.risks ?? []).some((r) => r.kind === "reads_secret"),
        editable,
        moreContext: tool?.proposedText !== undefined,
        proposedContent: editable?.value ?? null,
        grantOffer: external.has(p.call_id) || isHeldEffects(rows.get(p.call_id)?.pendingJson ?? null) ? null : offerFor(p),
      };
    }),
  );
  return { items, workspaceRoot: workspace.root };
}

/** The grant the card offers for a pending call, or null. */
function offerFor(p: PendingCallView): GrantOfferView | null {
  const offer = grantSuggestions(p.tool, p.verdict, p.preview.path ?? null);
  return offer ? { tool: p.tool, ...offer, expiryChoices: GRANT_EXPIRY_CHOICES } : null;
}

/** The `description` recorded in a call's received event, or null. */
function describedAs(dataJson: string): string | null {
  try {
    const data = JSON.parse(dataJson) as { description?: unknown };
    return typeof data.description === "string" && data.description.trim() !== "" ? data.description : null;
  } catch {
    return null;
  }
}

/** The session's calls created before `before` (newest first), and how many there are. */
async function sessionContext(sessionId: string, before: Date, exclude: string): Promise<{ calls: SessionCall[]; total: number }> {
  const where = { sessionId, createdAt: { lte: before }, id: { not: exclude } };
  const [rows, total] = await Promise.all([
    db().toolCall.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: SESSION_CONTEXT_CALLS,
      select: { id: true, tool: true, target: true, status: true, errorName: true, summary: true, decision: true, reviewer: true, createdAt: true },
    }),
    db().toolCall.count({ where }),
  ]);
  return {
    total,
    calls: rows.map((r) => ({ id: r.id, tool: r.tool, target: r.target, createdAt: r.createdAt.toISOString(), outcome: callOutcome(r), decision: finalDecision(r) })),
  };
}

/** Number of calls waiting for a reviewer. */
export async function countPending(): Promise<number> {
  return db().toolCall.count({ where: { status: "pending" } });
}

/**
 * Outcome of previewing a reviewer's edit: the write's diff with the edit (`preview`) and the
 * edit itself as a unified diff of the editable argument, agent's proposal → reviewer's value.
 */
export type EditPreview = { ok: true; preview: ToolPreview; againstProposal: string } | { ok: false; error: ErrorBody };

/** The call is not pending any more (or has no queued arguments): `conflict`, reason "not_pending". */
function notPending(callId: string): { ok: false; error: ErrorBody } {
  return { ok: false, error: errorBody("conflict", "This call is not waiting for approval any more.", { reason: "not_pending", call_id: callId }) };
}

/**
 * The diff a pending call would make with the reviewer's value of its editable argument
 * (write_file's content, edit_file's new_string) instead of the agent's, computed by the tool's
 * own preview (same encoding, BOM, line-ending and matching rules as the write). Writes nothing.
 * @returns the preview, or the error: `conflict` (reason "not_pending": the call is not waiting
 *   any more, or there is no such call), `invalid_arguments` (the tool has no editable argument,
 *   or the edited arguments do not parse), or the tool's own refusal (e.g. `encoding_unsupported`,
 *   `edit_no_match` for an edit whose old_string no longer matches). Never throws for bad input.
 */
export async function previewEditedWrite(callId: string, content: string): Promise<EditPreview> {
  if (typeof callId !== "string" || typeof content !== "string") return { ok: false, error: errorBody("invalid_arguments", "A call id and the edited text are required.") };
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { tool: true, status: true, execArgsJson: true } });
  if (!row || row.status !== "pending" || !row.execArgsJson) return notPending(callId);
  const tool = getTool(row.tool);
  if (!tool?.editable || !tool.preview) return { ok: false, error: errorBody("invalid_arguments", `A ${row.tool} call cannot be edited before approval.`, { reason: "not_editable", tool: row.tool }) };
  const original = argsColumn.decode(row.execArgsJson) as Record<string, unknown>;
  const parsed = tool.input.safeParse({ ...original, [tool.editable.field]: content });
  if (!parsed.success) return { ok: false, error: errorBody("invalid_arguments", `The edited arguments are not valid for ${row.tool}: ${parsed.error.issues[0]?.message ?? "invalid"}.`) };
  const proposal = typeof original[tool.editable.field] === "string" ? (original[tool.editable.field] as string) : "";
  const field = tool.editable.field;
  try {
    const preview = await tool.preview(parsed.data, readOnlyContext(callId, await currentWorkspace()));
    return { ok: true, preview, againstProposal: diffTexts(`agent's ${field}`, `your ${field}`, proposal, content).diff };
  } catch (err) {
    return { ok: false, error: toErrorBody(err) };
  }
}

/** What the inbox tells the reviewer after a decision. */
export interface DecisionOutcome {
  /** False when the decision was refused or the approved call then failed. */
  ok: boolean;
  callId: string;
  /** The call's status afterwards, when known. */
  status: string | null;
  /** The call decided on, named: its tool and its target (path, command or URL). */
  tool: string | null;
  target: string | null;
  /** The verb of the decision made ("Approved", "Rejected"). */
  verb: "Approved" | "Rejected";
  message: string;
  /**
   * The error, as the API answers it, when the decision was refused (e.g. `conflict` for a call
   * already decided, `invalid_arguments` for a malformed request) or the approved call ended with
   * one; null otherwise (a command that ran and exited non-zero is not an error of the call).
   */
  error: ErrorBody | null;
  /** Where to undo it: the backup of the bytes an approved write replaced, when there is one. */
  revertHref: string | null;
}

/** The tool, target and backup of a call, to name it in the decision banner. */
export async function decidedCall(callId: string): Promise<{ tool: string | null; target: string | null; backupId: string | null; reason: string | null; summary: string | null }> {
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { tool: true, target: true, backupId: true, reviewReason: true, summary: true } });
  return { tool: row?.tool ?? null, target: row?.target ?? null, backupId: row?.backupId ?? null, reason: row?.reviewReason ?? null, summary: row?.summary ?? null };
}

/**
 * Turns the queue's answer to a decision into one sentence for the reviewer, naming the call, e.g.
 * "Approved write_file src/app.ts: the call ran and succeeded." or "Rejected run_command
 * curl …; the agent was told: “…”", or "Approved, but the call ended with conflict (605): …".
 * A command that ran but exited non-zero says so ("the command exited 4").
 */
export function describeDecision(
  callId: string,
  result: DecisionResult,
  verb: "Approved" | "Rejected",
  call: { tool: string | null; target: string | null; backupId?: string | null; reason?: string | null; summary?: string | null } = { tool: null, target: null },
): DecisionOutcome {
  const base = { callId, tool: call.tool, target: call.target, verb, revertHref: null as string | null, error: null as ErrorBody | null };
  const named = call.tool ? `${call.tool}${call.target ? ` ${call.target}` : ""}` : `call ${callId}`;
  if (!result.ok) {
    const reason = result.error.detail.reason === "already_decided" ? "it was already decided" : result.error.message;
    return { ...base, ok: false, error: result.error, status: typeof result.error.detail.status === "string" ? result.error.detail.status : null, message: `Not ${verb.toLowerCase()} (${named}): ${reason}` };
  }
  if (verb === "Rejected") {
    const told = call.reason ? `the agent was told: “${call.reason}”` : "no reason was given (the agent was told only that a reviewer rejected it)";
    return { ...base, ok: true, status: result.status, message: `Rejected ${named}; ${told}.` };
  }
  const revertHref = call.backupId ? `/backups/${call.backupId}` : null;
  if (result.envelope === null) return { ...base, ok: true, status: result.status, message: `Approved ${named}; the instance that serves this workspace will run it.` };
  if (result.envelope.ok) {
    const data = result.envelope.data as { exit_code?: unknown } | null;
    const failure = call.tool === "run_command" ? callOutcome({ tool: "run_command", status: "succeeded", summary: call.summary }) : null;
    if (failure?.failed) return { ...base, ok: false, status: result.status, revertHref, message: `Approved ${named}: it ran, and the command failed (${failure.label}).` };
    const exit = call.tool === "run_command" && typeof data?.exit_code === "number" ? ` (exit ${data.exit_code})` : "";
    return { ...base, ok: true, status: result.status, revertHref, message: `Approved ${named}: the call ran and ${result.status}${exit}.` };
  }
  const error = result.envelope.error;
  return { ...base, ok: false, error, status: result.status, revertHref, message: `Approved ${named}, but the call ended with ${error.name} (${error.code}): ${error.message}` };
}

/** A call that waited for a reviewer and ended without one: expired, or withdrawn by the system. */
export interface MissedCall {
  id: string;
  tool: string;
  target: string | null;
  sessionId: string;
  createdAt: Date;
  endedAt: Date | null;
  /** "expired" (nobody decided in time) or "withdrawn" (ended by the system, e.g. its token was revoked). */
  how: "expired" | "withdrawn";
  reason: string | null;
}

/** How far back the "missed" list looks (ms). */
export const MISSED_WINDOW_MS = 7 * 86_400_000;

/**
 * Calls that asked for a reviewer and ended without a reviewer's decision in the last
 * MISSED_WINDOW_MS, newest first: expired ones, and ones the system withdrew (rejected or
 * interrupted with no reviewer).
 */
export async function loadMissed(limit = 50, now = new Date()): Promise<MissedCall[]> {
  const rows = await db().toolCall.findMany({
    where: {
      decision: "ask",
      createdAt: { gte: new Date(now.getTime() - MISSED_WINDOW_MS) },
      OR: [{ status: "expired" }, { status: { in: ["rejected", "interrupted"] }, reviewer: null }],
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
    select: { id: true, tool: true, target: true, sessionId: true, createdAt: true, finishedAt: true, status: true, reviewReason: true, errorName: true },
  });
  return rows.map((r) => ({
    id: r.id,
    tool: r.tool,
    target: r.target,
    sessionId: r.sessionId,
    createdAt: r.createdAt,
    endedAt: r.finishedAt,
    how: r.status === "expired" ? "expired" : "withdrawn",
    reason: r.reviewReason ?? r.errorName,
  }));
}

/** Context lines a reviewer can ask for around each change (beyond it: the whole file). */
export const MORE_CONTEXT_LINES = 25;

/**
 * The pending change of a call that proposes a file's new text (the tool's `proposedText`:
 * write_file, edit_file) as a unified diff with `context` lines
 * around each change (Infinity: the whole file), for reading more of the file than the queued
 * diff's three lines. Computed from the file as it is now and the call's exact arguments, for
 * display only: it is refused when the file changed since the call was queued (the queued diff
 * and its conflict warning then stand). Writes nothing.
 * @returns the diff, or why none can be shown: `conflict` (reason "not_pending": not waiting any
 *   more or no such call; reason "changed_since": the file changed since the diff was computed),
 *   `invalid_arguments` (not a one-file change, or a context that is not a number ≥ 0), or the
 *   tool's own refusal. Never throws for bad input.
 */
export async function previewWithContext(callId: string, context: number): Promise<{ ok: true; diff: string } | { ok: false; error: ErrorBody }> {
  if (typeof callId !== "string" || typeof context !== "number" || Number.isNaN(context) || context < 0) {
    return { ok: false, error: errorBody("invalid_arguments", "A call id and a number of context lines (0 or more) are required.") };
  }
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { tool: true, status: true, execArgsJson: true, pendingJson: true } });
  if (!row || row.status !== "pending" || !row.execArgsJson) return notPending(callId);
  const tool = getTool(row.tool);
  if (!tool?.proposedText) return { ok: false, error: errorBody("invalid_arguments", "Only file changes have more context.", { reason: "not_a_file_change", tool: row.tool }) };
  const preview = (JSON.parse(row.pendingJson ?? "{}") as { preview?: ToolPreview }).preview ?? {};
  if (preview.path === undefined) return { ok: false, error: errorBody("invalid_arguments", "The call is not about one file.", { reason: "not_a_file_change", tool: row.tool }) };
  const workspace = await currentWorkspace();
  try {
    const bytes = await readWorkspaceFile(workspace, preview.path);
    const now = bytes === null ? null : sha256Hex(bytes);
    if (now !== (preview.targetSha256 ?? null)) {
      return { ok: false, error: errorBody("conflict", "The file changed since the diff was computed; only the queued diff is shown.", { reason: "changed_since", path: preview.path }) };
    }
    const args = JSON.parse(row.execArgsJson) as Record<string, unknown>;
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) return { ok: false, error: errorBody("invalid_arguments", "The call's arguments are not valid for this tool any more.") };
    let { before, after } = tool.proposedText(parsed.data, bytes);
    // Line endings are compared as LF here (the queued diff above reports their changes).
    before = before.replace(/\r\n/g, "\n");
    after = after.replace(/\r\n/g, "\n");
    const lines = Number.isFinite(context) ? Math.max(0, Math.floor(context)) : Math.max(before.split("\n").length, after.split("\n").length);
    const patch = structuredPatch(`a/${preview.path}`, `b/${preview.path}`, before, after, undefined, undefined, { context: lines });
    return { ok: true, diff: formatPatch(patch, FILE_HEADERS_ONLY) };
  } catch (err) {
    return { ok: false, error: toErrorBody(err) };
  }
}
