"use server";

import { z } from "zod";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { markReviewed, revertFromReview } from "@/lib/dashboard/review";
import { errorBody, type ErrorBody } from "@/lib/errors";

const Ids = z.array(z.string().min(1).max(100)).min(1).max(500);

/**
 * What a review action answers: a sentence for the reviewer, or the error as the API answers it
 * (lib/errors.ts), and the calls it concerned.
 */
export type ReviewActionState = { ok: true; message: string; callIds?: string[] } | { ok: false; error: ErrorBody; callIds?: string[] } | null;

/** A form field as text: "" when it is missing or a file. */
function field(form: FormData, key: string): string {
  const value = form.get(key);
  return typeof value === "string" ? value : "";
}

/**
 * "Mark reviewed" on the review page: one call (form field `callId`) or every call shown (form
 * field `callIds`, comma-separated), as the signed-in reviewer; audited per call.
 */
export async function markReviewedAction(_prev: ReviewActionState, form: FormData): Promise<ReviewActionState> {
  const sessionId = field(form, "sessionId");
  const reviewer = await requireReviewerPage(`/sessions/${encodeURIComponent(sessionId)}/review`);
  const raw = field(form, "callIds") || field(form, "callId");
  const parsed = Ids.safeParse(raw.split(",").filter(Boolean));
  if (!parsed.success) return { ok: false, error: errorBody("invalid_arguments", "Nothing to mark.", { issues: [{ path: "callIds", message: "between 1 and 500 call ids" }] }) };
  const marked = await markReviewed(parsed.data, reviewer.login);
  // No revalidation: the cards stay in view with their new state (the page reloads fresh).
  return { ok: true, message: marked.length === 1 ? "Marked reviewed." : `${marked.length} changes marked reviewed.`, callIds: marked };
}

/**
 * "Revert" on the review page: undoes one call's changes through revert_call as the signed-in
 * reviewer (backed up; a file changed since is a conflict and nothing changes), then marks it
 * reviewed. Form: sessionId, callId.
 */
export async function revertFromReviewAction(_prev: ReviewActionState, form: FormData): Promise<ReviewActionState> {
  const sessionId = field(form, "sessionId");
  const reviewer = await requireReviewerPage(`/sessions/${encodeURIComponent(sessionId)}/review`);
  const parsed = z.string().min(1).max(100).safeParse(field(form, "callId"));
  if (!parsed.success) return { ok: false, error: errorBody("invalid_arguments", "Not reverted: no call was named.", { issues: [{ path: "callId", message: "a call id is required" }] }) };
  const callId = parsed.data;
  const envelope = await revertFromReview(callId, reviewer.login);
  if (envelope.ok) {
    const c = (envelope.data as { changes?: { created: number; modified: number; deleted: number } }).changes;
    return { ok: true, message: `Reverted${c ? `: ${c.created} created, ${c.modified} modified, ${c.deleted} deleted` : ""} (revert call ${envelope.call_id}).`, callIds: [callId] };
  }
  const conflicts = (envelope.error.detail.conflicts as Array<{ path: string; reason?: string }> | undefined) ?? [];
  return {
    ok: false,
    error: { ...envelope.error, message: `Not reverted: ${envelope.error.message}${conflicts.length ? ` Changed since: ${conflicts.slice(0, 10).map((c) => c.path).join(", ")}` : ""}` },
    callIds: [callId],
  };
}
