"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { splitOutputs } from "@/lib/dashboard/calls";
import { revealCallOutput } from "@/lib/redact/reveal";
import { revertCallAsReviewer } from "@/lib/dashboard/effects";
import type { ErrorBody } from "@/lib/errors";
import type { ActionState } from "../../_components/action-form";

/**
 * What the "Reveal masked values" button shows: the call's output unmasked, split like the stored
 * one (text outputs and the other fields), with the marker kinds revealed; or why not. It lives
 * only in the reviewer's page: never stored, never in a URL.
 */
export type RevealState =
  | { ok: true; outputs: { name: string; text: string }[]; rest: unknown; revealed: Record<string, number> }
  | { ok: false; error: ErrorBody }
  | null;

/**
 * Reveals a call's masked output to the signed-in reviewer (lib/redact/reveal.ts: only when a
 * current rule has `{"redact": false}` for the call's paths; logged as `secret.revealed`).
 * Form: callId. Refreshes the page so its event log shows the reveal.
 */
export async function revealOutputAction(_prev: RevealState, form: FormData): Promise<RevealState> {
  const callId = field(form, "callId");
  const reviewer = await requireReviewerPage(`/calls/${encodeURIComponent(callId)}`);
  const result = await revealCallOutput(callId, reviewer.login);
  if (!result.ok) return { ok: false, error: result.error };
  revalidatePath(`/calls/${callId}`);
  return { ok: true, ...splitOutputs(result.data), revealed: result.revealed };
}

/**
 * The "Revert this call" button: undoes the call's file changes as the signed-in reviewer, through
 * revert_call (lib/dashboard/effects.ts). Form: callId. Answers where the revert went, or the
 * conflicts that stopped it (nothing is changed then).
 */
export async function revertCallAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const callId = field(form, "callId");
  const reviewer = await requireReviewerPage(`/calls/${encodeURIComponent(callId)}`);
  const envelope = await revertCallAsReviewer(callId, reviewer.login);
  revalidatePath(`/calls/${callId}`);
  if (envelope.ok) {
    const data = envelope.data as { changes?: { created: number; modified: number; deleted: number } };
    const c = data.changes;
    return { ok: true, message: `Reverted${c ? `: ${c.created} created, ${c.modified} modified, ${c.deleted} deleted` : ""} (call ${envelope.call_id}).` };
  }
  const conflicts = (envelope.error.detail.conflicts as Array<{ path: string }> | undefined) ?? [];
  return { ok: false, error: { ...envelope.error, message: `${envelope.error.message}${conflicts.length ? ` Changed since: ${conflicts.slice(0, 10).map((c) => c.path).join(", ")}` : ""}` } };
}

/** A form field as text: "" when it is missing or a file. */
function field(form: FormData, key: string): string {
  const value = form.get(key);
  return typeof value === "string" ? value : "";
}
