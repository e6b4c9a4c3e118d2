"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { createAgent, revokeAgentToken, type NewAgentResult } from "@/lib/dashboard/tokens";
import type { ActionState } from "../_components/action-form";

/** Creates an agent token; the result holds the token, shown once. Form: name, workspaceId. */
export async function createTokenAction(_prev: NewAgentResult | null, form: FormData): Promise<NewAgentResult> {
  const reviewer = await requireReviewerPage("/tokens");
  const result = await createAgent({ name: String(form.get("name") ?? ""), workspaceId: String(form.get("workspaceId") ?? "") }, reviewer.login);
  revalidatePath("/tokens");
  return result;
}

/** Revokes an agent token. Form: agentId. */
export async function revokeTokenAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/tokens");
  const result = await revokeAgentToken(String(form.get("agentId")), reviewer.login);
  revalidatePath("/tokens");
  return result.ok ? { ok: true } : { ok: false, message: result.message };
}
