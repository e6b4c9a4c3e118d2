"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { approveCall, rejectCall } from "@/lib/approvals/queue";
import { GrantRequest, grantsFromCall } from "@/lib/approvals/grants";
import { formatTime } from "@/lib/dashboard/format";
import { decidedCall, describeDecision, previewEditedWrite, previewWithContext, type DecisionOutcome, type EditPreview } from "@/lib/dashboard/approvals";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { errorBody, type ErrorBody } from "@/lib/errors";

const CallId = z.string().min(1).max(100);
const Reason = z.string().max(2000);
const Content = z.string();

/** An argument the client sent that does not parse: `invalid_arguments`, naming it. */
function badArgument(what: string, issue: string | undefined): ErrorBody {
  return errorBody("invalid_arguments", `Not a valid ${what}${issue ? `: ${issue}` : ""}.`, { issues: [{ path: what, message: issue ?? "invalid" }] });
}

/** The decision banner for a request refused before anything was decided. */
function refused(callId: unknown, verb: "Approved" | "Rejected", error: ErrorBody): DecisionOutcome {
  const id = typeof callId === "string" ? callId.slice(0, 100) : "";
  return { ok: false, callId: id, status: null, tool: null, target: null, verb, revertHref: null, error, message: `Not ${verb.toLowerCase()}: ${error.message}` };
}

/** The call id, grant and content of a decision, parsed; or why not. Never throws. */
function decisionArgs(callId: unknown, grant: unknown, content?: unknown): { ok: true; id: string; grant: GrantRequest | undefined; content: string | undefined } | { ok: false; error: ErrorBody } {
  const id = CallId.safeParse(callId);
  if (!id.success) return { ok: false, error: badArgument("call id", id.error.issues[0]?.message) };
  const request = grant === undefined || grant === null ? { success: true as const, data: undefined } : GrantRequest.safeParse(grant);
  if (!request.success) return { ok: false, error: badArgument("grant", request.error.issues.map((i) => `${i.path.join(".") || "grant"}: ${i.message}`).join("; ")) };
  const text = content === undefined ? { success: true as const, data: undefined } : Content.safeParse(content);
  if (!text.success) return { ok: false, error: badArgument("content", text.error.issues[0]?.message) };
  return { ok: true, id: id.data, grant: request.data, content: text.data };
}

/**
 * Approves a pending call (it runs now, once) as the signed-in reviewer; with `grant`, also allows
 * its pattern from now on (checked first: a refused grant decides nothing and says why).
 */
export async function approveAction(callId: string, grant?: unknown): Promise<DecisionOutcome> {
  const args = decisionArgs(callId, grant);
  if (!args.ok) return refused(callId, "Approved", args.error);
  const { id, grant: request } = args;
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const result = await approveCall(id, reviewer.login, undefined, request);
  const outcome = await withGrants(describeDecision(id, result, "Approved", await decidedCall(id)), id, request !== undefined && result.ok);
  revalidatePath("/approvals");
  return outcome;
}

/** The decision sentence, followed by the grants the approval created (when it made any). */
async function withGrants(outcome: DecisionOutcome, callId: string, made: boolean): Promise<DecisionOutcome> {
  if (!made) return outcome;
  const grants = await grantsFromCall(callId);
  if (grants.length === 0) return outcome;
  const text = grants.map((g) => `“${g.pattern}” (${g.scope === "session" ? "this session" : "this workspace"}, until ${g.expiresAt ? formatTime(g.expiresAt) : "revoked"}, ${g.id})`).join(", ");
  return { ...outcome, message: `${outcome.message} Don't ask again: ${text}.` };
}

/**
 * Approves a pending editable call (write_file's content, edit_file's new_string) with the
 * reviewer's value of that argument; the log keeps both.
 */
export async function approveEditedAction(callId: string, content: string, grant?: unknown): Promise<DecisionOutcome> {
  const args = decisionArgs(callId, grant, content ?? null);
  if (!args.ok) return refused(callId, "Approved", args.error);
  const { id, grant: request } = args;
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const result = await approveCall(id, reviewer.login, { content: args.content! }, request);
  const outcome = await withGrants(describeDecision(id, result, "Approved", await decidedCall(id)), id, request !== undefined && result.ok);
  revalidatePath("/approvals");
  return outcome;
}

/**
 * Rejects a pending call with a reason the agent receives (error 602). The dashboard requires a
 * reason: an empty one is refused here (nothing is decided) so the agent always learns why.
 */
export async function rejectAction(callId: string, reason: string): Promise<DecisionOutcome> {
  const args = decisionArgs(callId, undefined);
  if (!args.ok) return refused(callId, "Rejected", args.error);
  const id = args.id;
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const parsedReason = Reason.safeParse(reason);
  if (!parsedReason.success) return refused(id, "Rejected", badArgument("reason", parsedReason.error.issues[0]?.message));
  const text = parsedReason.data.trim();
  if (text === "") {
    const call = await decidedCall(id);
    const error = errorBody("invalid_arguments", "Give the agent a reason, so it knows what to do instead.", { issues: [{ path: "reason", message: "a reason is required" }] });
    return { ok: false, callId: id, status: "pending", tool: call.tool, target: call.target, verb: "Rejected", revertHref: null, error, message: "Not rejected: give the agent a reason, so it knows what to do instead." };
  }
  const result = await rejectCall(id, reviewer.login, text);
  const outcome = describeDecision(id, result, "Rejected", await decidedCall(id));
  revalidatePath("/approvals");
  return outcome;
}

/** The diff a pending editable call would make with the reviewer's value (nothing is written). */
export async function previewEditAction(callId: string, content: string): Promise<EditPreview> {
  const args = decisionArgs(callId, undefined, content ?? null);
  if (!args.ok) return args;
  await requireReviewerPage(`/approvals?call=${encodeURIComponent(args.id)}`);
  return previewEditedWrite(args.id, args.content!);
}

/** The pending file change with `context` lines around each change (0 or more; -1: the whole file). */
export async function contextDiffAction(callId: string, context: number): Promise<{ ok: true; diff: string } | { ok: false; error: ErrorBody }> {
  const args = decisionArgs(callId, undefined);
  if (!args.ok) return args;
  const lines = z.number().int().min(-1).max(100_000).safeParse(context);
  if (!lines.success) return { ok: false, error: badArgument("number of context lines", lines.error.issues[0]?.message) };
  await requireReviewerPage(`/approvals?call=${encodeURIComponent(args.id)}`);
  return previewWithContext(args.id, lines.data === -1 ? Infinity : lines.data);
}
