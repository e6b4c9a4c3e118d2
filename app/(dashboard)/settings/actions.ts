"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { setWebhookFormat, setWebhookUrl, testWebhook } from "@/lib/notify/webhook";
import type { ActionState } from "../_components/action-form";
import { errorBody } from "@/lib/errors";

/** Saves (or, when empty, removes) the webhook URL and its payload format. Form: webhookUrl, webhookFormat. */
export async function saveWebhookAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/settings");
  const url = form.get("webhookUrl");
  const result = await setWebhookUrl(typeof url === "string" ? url : "", reviewer.login);
  if (!result.ok) return { ok: false, error: result.error };
  const format = form.get("webhookFormat");
  if (typeof format === "string" && format !== "") {
    const saved = await setWebhookFormat(format, reviewer.login);
    if (!saved.ok) return { ok: false, error: saved.error };
  }
  revalidatePath("/settings");
  return { ok: true, message: "Saved." };
}

/** Sends a test message to the saved webhook and says what its server answered. */
export async function testWebhookAction(_prev: ActionState, _form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/settings");
  const result = await testWebhook(reviewer.login);
  return result.ok
    ? { ok: true, message: `Test sent: the server answered HTTP ${result.status} in ${result.ms} ms.` }
    : { ok: false, error: errorBody("fetch_failed", `The test did not arrive: ${result.message}.`, { status: result.status }) };
}
