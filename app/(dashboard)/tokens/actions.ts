"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { createAgent, revokeAgentToken, type NewAgentResult } from "@/lib/auth/agents";
import type { ActionState } from "../_components/action-form";
import { setAgentPreset } from "@/lib/policy/preset-store";
import { isPresetName } from "@/lib/policy/presets";

/** Creates an agent token; the result holds the token, shown once. Form: name, workspaceId, preset ("" = the workspace's). */
export async function createTokenAction(_prev: NewAgentResult | null, form: FormData): Promise<NewAgentResult> {
  const reviewer = await requireReviewerPage("/tokens");
  const preset = String(form.get("preset") ?? "");
  if (preset !== "" && !isPresetName(preset)) return { ok: false, message: `Unknown preset “${preset}”.` };
  const result = await createAgent({ name: String(form.get("name") ?? ""), workspaceId: String(form.get("workspaceId") ?? ""), preset }, reviewer.login);
  revalidatePath("/tokens");
  return result;
}

/** Sets a token's supervision preset. Form: agentId, preset ("" = follow the workspace's). */
export async function setTokenPresetAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/tokens");
  const preset = String(form.get("preset") ?? "");
  if (preset !== "" && !isPresetName(preset)) return { ok: false, message: `Unknown preset “${preset}”.` };
  const found = await setAgentPreset(String(form.get("agentId")), preset === "" ? null : preset, `reviewer:${reviewer.login}`);
  revalidatePath("/tokens");
  return found ? { ok: true, message: preset ? `Preset: ${preset}.` : "Follows the workspace's preset." } : { ok: false, message: "No such token." };
}

/** Revokes an agent token. Form: agentId. */
export async function revokeTokenAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/tokens");
  const result = await revokeAgentToken(String(form.get("agentId")), reviewer.login);
  revalidatePath("/tokens");
  return result.ok ? { ok: true } : { ok: false, message: result.message };
}
