"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { setWebhookUrl } from "@/lib/dashboard/settings";
import type { ActionState } from "../_components/action-form";

/** Saves (or, when empty, removes) the webhook URL. Form: webhookUrl. */
export async function saveWebhookAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/settings");
  const result = await setWebhookUrl(String(form.get("webhookUrl") ?? ""), reviewer.login);
  revalidatePath("/settings");
  return result.ok ? { ok: true, message: "Saved." } : { ok: false, message: result.message };
}
