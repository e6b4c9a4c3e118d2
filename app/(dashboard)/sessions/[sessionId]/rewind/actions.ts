"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { rewindAsReviewer } from "@/lib/dashboard/effects";
import type { ActionState } from "../../../_components/action-form";

/**
 * The rewind page's confirm button: rewinds the session to before the chosen call as the signed-in
 * reviewer (the same lib function as POST /api/sessions/{id}/rewind). Form: sessionId, beforeCallId.
 */
export async function rewindAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const sessionId = field(form, "sessionId");
  const beforeCallId = field(form, "beforeCallId");
  const reviewer = await requireReviewerPage(`/sessions/${encodeURIComponent(sessionId)}/rewind?before=${encodeURIComponent(beforeCallId)}`);
  const result = await rewindAsReviewer(sessionId, beforeCallId, reviewer.login, false);
  revalidatePath(`/sessions/${sessionId}`);
  if (result.ok) {
    const c = result.outcome.changes;
    return { ok: true, message: `Rewound ${result.outcome.reverted_calls.length} call(s): ${c.created} created, ${c.modified} modified, ${c.deleted} deleted (call ${result.outcome.call_id}).` };
  }
  const conflicts = result.outcome?.conflicts ?? [];
  return { ok: false, error: { ...result.error, message: `${result.error.message}${conflicts.length ? ` Changed since: ${conflicts.slice(0, 10).map((c) => c.path).join(", ")}` : ""}` } };
}

/** A form field as text: "" when it is missing or a file. */
function field(form: FormData, key: string): string {
  const value = form.get(key);
  return typeof value === "string" ? value : "";
}
