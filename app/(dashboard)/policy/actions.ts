"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { ruleToolNames, tryPolicy, type TryResult } from "@/lib/dashboard/policy";
import { createRule, deleteRule, moveRule, setRuleEnabled, updateRule, type RuleChange, type RuleInput } from "@/lib/policy/rule-store";
import type { ActionState } from "../_components/action-form";
import { setWorkspacePreset } from "@/lib/policy/preset-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { isPresetName } from "@/lib/policy/presets";
import { errorBody } from "@/lib/errors";

/** The rule fields of a form; a field that is missing or not text reads as "" (the store says why that is wrong). */
function ruleFromForm(form: FormData): RuleInput {
  const text = (key: string) => field(form, key);
  return {
    tool: text("tool"),
    pathGlob: text("pathGlob"),
    command: text("command"),
    decision: text("decision") as RuleInput["decision"],
    note: text("note"),
    enabled: form.get("enabled") !== null,
    options: text("options"),
  };
}

/** A form field as text: "" when it is missing or a file. */
function field(form: FormData, key: string): string {
  const value = form.get(key);
  return typeof value === "string" ? value : "";
}

async function done(change: RuleChange, message: string): Promise<ActionState> {
  revalidatePath("/policy");
  return change.ok ? { ok: true, message } : { ok: false, error: change.error };
}

/** Adds a rule at the end of the order. */
export async function createRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await createRule(ruleFromForm(form), reviewer.login, ruleToolNames()), "Rule added at the end.");
}

/** Saves a rule's fields. Form: id + rule fields. */
export async function updateRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await updateRule(field(form, "id"), ruleFromForm(form), reviewer.login, ruleToolNames()), "Saved.");
}

/** Enables or disables a rule. Form: id, enabled ("true" | "false"). */
export async function toggleRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await setRuleEnabled(field(form, "id"), form.get("enabled") === "true", reviewer.login), "");
}

/** Moves a rule one place. Form: id, direction ("up" | "down"). */
export async function moveRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await moveRule(field(form, "id"), form.get("direction") === "up" ? "up" : "down", reviewer.login), "");
}

/** Deletes an operator rule. Form: id. */
export async function deleteRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await deleteRule(field(form, "id"), reviewer.login), "");
}

/** The "try it" box: the policy's answer for a sample, nothing runs. Form: tool, path, command, url. */
export async function tryPolicyAction(_prev: TryResult | null, form: FormData): Promise<TryResult> {
  await requireReviewerPage("/policy");
  return tryPolicy({ tool: field(form, "tool"), path: field(form, "path"), command: field(form, "command"), url: field(form, "url") });
}

/** Sets the supervision preset of the workspace this server serves. Form: preset. */
export async function setWorkspacePresetAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  const preset = field(form, "preset");
  if (!isPresetName(preset)) return { ok: false, error: errorBody("invalid_arguments", `Unknown preset “${preset}”.`, { issues: [{ path: "preset", message: "unknown preset" }] }) };
  const workspace = await currentWorkspace();
  await setWorkspacePreset(workspace.id, preset, `reviewer:${reviewer.login}`);
  revalidatePath("/policy");
  return { ok: true, message: `This workspace now uses the ${preset} preset.` };
}
