"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { createAgent, revokeAgentToken, type NewAgentResult } from "@/lib/auth/agents";
import type { ActionState } from "../_components/action-form";
import { setAgentPreset } from "@/lib/policy/preset-store";
import { isPresetName } from "@/lib/policy/presets";
import { errorBody } from "@/lib/errors";

/** A form field as text: "" when it is missing or a file. */
function field(form: FormData, key: string): string {
  const value = form.get(key);
  return typeof value === "string" ? value : "";
}

function unknownPreset(preset: string) {
  return { ok: false as const, error: errorBody("invalid_arguments", `Unknown preset “${preset}”.`, { issues: [{ path: "preset", message: "unknown preset" }] }) };
}

/** Creates an agent token; the result holds the token, shown once. Form: name, workspaceId, preset ("" = the workspace's). */
export async function createTokenAction(_prev: NewAgentResult | null, form: FormData): Promise<NewAgentResult> {
  const reviewer = await requireReviewerPage("/tokens");
  const preset = field(form, "preset");
  if (preset !== "" && !isPresetName(preset)) return unknownPreset(preset);
  const result = await createAgent({ name: field(form, "name"), workspaceId: field(form, "workspaceId"), preset }, reviewer.login);
  revalidatePath("/tokens");
  return result;
}

/** Sets a token's supervision preset. Form: agentId, preset ("" = follow the workspace's). */
export async function setTokenPresetAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/tokens");
  const preset = field(form, "preset");
  if (preset !== "" && !isPresetName(preset)) return unknownPreset(preset);
  const agentId = field(form, "agentId");
  const found = await setAgentPreset(agentId, preset === "" ? null : preset, `reviewer:${reviewer.login}`);
  revalidatePath("/tokens");
  return found ? { ok: true, message: preset ? `Preset: ${preset}.` : "Follows the workspace's preset." } : { ok: false, error: errorBody("not_found", "No such token.", { agent_id: agentId }) };
}

/** Revokes an agent token. Form: agentId. */
export async function revokeTokenAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/tokens");
  const result = await revokeAgentToken(field(form, "agentId"), reviewer.login);
  revalidatePath("/tokens");
  return result.ok ? { ok: true } : { ok: false, error: result.error };
}
