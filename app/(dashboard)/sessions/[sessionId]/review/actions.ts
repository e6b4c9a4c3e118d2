"use server";

import { z } from "zod";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { markReviewed, revertFromReview } from "@/lib/dashboard/review";

const Ids = z.array(z.string().min(1).max(100)).min(1).max(500);

/** What a review action answers: a sentence for the reviewer, and the calls it concerned. */
export type ReviewActionState = { ok: boolean; message: string; callIds?: string[] } | null;

/**
 * "Mark reviewed" on the review page: one call (form field `callId`) or every call shown (form
 * field `callIds`, comma-separated), as the signed-in reviewer; audited per call.
 */
export async function markReviewedAction(_prev: ReviewActionState, form: FormData): Promise<ReviewActionState> {
  const sessionId = String(form.get("sessionId") ?? "");
  const reviewer = await requireReviewerPage(`/sessions/${sessionId}/review`);
  const raw = form.get("callIds") ?? form.get("callId") ?? "";
  const parsed = Ids.safeParse(String(raw).split(",").filter(Boolean));
  if (!parsed.success) return { ok: false, message: "Nothing to mark." };
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
  const sessionId = String(form.get("sessionId") ?? "");
  const callId = z.string().min(1).max(100).parse(String(form.get("callId") ?? ""));
  const reviewer = await requireReviewerPage(`/sessions/${sessionId}/review`);
  const envelope = await revertFromReview(callId, reviewer.login);
  if (envelope.ok) {
    const c = (envelope.data as { changes?: { created: number; modified: number; deleted: number } }).changes;
    return { ok: true, message: `Reverted${c ? `: ${c.created} created, ${c.modified} modified, ${c.deleted} deleted` : ""} (revert call ${envelope.call_id}).`, callIds: [callId] };
  }
  const conflicts = (envelope.error.detail.conflicts as Array<{ path: string; reason?: string }> | undefined) ?? [];
  return {
    ok: false,
    message: `Not reverted: ${envelope.error.message}${conflicts.length ? ` Changed since: ${conflicts.slice(0, 10).map((c) => c.path).join(", ")}` : ""}`,
    callIds: [callId],
  };
}
