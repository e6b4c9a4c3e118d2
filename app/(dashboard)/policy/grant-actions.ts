"use server";

import { revalidatePath } from "next/cache";
import { revokeGrant } from "@/lib/approvals/grants";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import type { ActionState } from "../_components/action-form";

/** Revokes a grant as the signed-in reviewer (audited); form field `grantId`. */
export async function revokeGrantAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  const id = String(form.get("grantId") ?? "");
  const result = await revokeGrant(id, reviewer.login);
  revalidatePath("/policy");
  return result.ok ? { ok: true, message: "Revoked: those calls ask again." } : { ok: false, error: result.error };
}
