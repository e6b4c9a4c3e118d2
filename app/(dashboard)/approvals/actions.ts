"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { approveCall, rejectCall } from "@/lib/approvals/queue";
import { GrantRequest, grantsFromCall } from "@/lib/approvals/grants";
import { formatTime } from "@/lib/dashboard/format";
import { decidedCall, describeDecision, previewEditedWrite, previewWithContext, type DecisionOutcome, type EditPreview } from "@/lib/dashboard/approvals";
import { requireReviewerPage } from "@/lib/dashboard/auth";

const CallId = z.string().min(1).max(100);
const Reason = z.string().max(2000);
const Content = z.string();

/**
 * Approves a pending call (it runs now, once) as the signed-in reviewer; with `grant`, also allows
 * its pattern from now on (checked first: a refused grant decides nothing and says why).
 */
export async function approveAction(callId: string, grant?: unknown): Promise<DecisionOutcome> {
  const id = CallId.parse(callId);
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const request = grant === undefined || grant === null ? undefined : GrantRequest.parse(grant);
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
  const id = CallId.parse(callId);
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const request = grant === undefined || grant === null ? undefined : GrantRequest.parse(grant);
  const result = await approveCall(id, reviewer.login, { content: Content.parse(content) }, request);
  const outcome = await withGrants(describeDecision(id, result, "Approved", await decidedCall(id)), id, request !== undefined && result.ok);
  revalidatePath("/approvals");
  return outcome;
}

/**
 * Rejects a pending call with a reason the agent receives (error 602). The dashboard requires a
 * reason: an empty one is refused here (nothing is decided) so the agent always learns why.
 */
export async function rejectAction(callId: string, reason: string): Promise<DecisionOutcome> {
  const id = CallId.parse(callId);
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const text = Reason.parse(reason).trim();
  if (text === "") {
    const call = await decidedCall(id);
    return { ok: false, callId: id, status: "pending", tool: call.tool, target: call.target, verb: "Rejected", revertHref: null, message: "Not rejected: give the agent a reason, so it knows what to do instead." };
  }
  const result = await rejectCall(id, reviewer.login, text);
  const outcome = describeDecision(id, result, "Rejected", await decidedCall(id));
  revalidatePath("/approvals");
  return outcome;
}

/** The diff a pending editable call would make with the reviewer's value (nothing is written). */
export async function previewEditAction(callId: string, content: string): Promise<EditPreview> {
  const id = CallId.parse(callId);
  await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  return previewEditedWrite(id, Content.parse(content));
}

/** The pending file change with `context` lines around each change (0 or more; -1: the whole file). */
export async function contextDiffAction(callId: string, context: number): Promise<{ ok: true; diff: string } | { ok: false; message: string }> {
  const id = CallId.parse(callId);
  const lines = z.number().int().min(-1).max(100_000).parse(context);
  await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  return previewWithContext(id, lines === -1 ? Infinity : lines);
}
