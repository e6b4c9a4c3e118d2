"use server";

import { revalidatePath } from "next/cache";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { ruleToolNames, tryPolicy, type TryResult } from "@/lib/dashboard/policy";
import { createRule, deleteRule, moveRule, setRuleEnabled, updateRule, type RuleChange, type RuleInput } from "@/lib/policy/rule-store";
import type { ActionState } from "../_components/action-form";
import { setWorkspacePreset } from "@/lib/policy/preset-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { isPresetName } from "@/lib/policy/presets";

function ruleFromForm(form: FormData): RuleInput {
  const text = (key: string) => String(form.get(key) ?? "");
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

async function done(change: RuleChange, message: string): Promise<ActionState> {
  revalidatePath("/policy");
  return change.ok ? { ok: true, message } : { ok: false, message: change.message };
}

/** Adds a rule at the end of the order. */
export async function createRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await createRule(ruleFromForm(form), reviewer.login, ruleToolNames()), "Rule added at the end.");
}

/** Saves a rule's fields. Form: id + rule fields. */
export async function updateRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await updateRule(String(form.get("id")), ruleFromForm(form), reviewer.login, ruleToolNames()), "Saved.");
}

/** Enables or disables a rule. Form: id, enabled ("true" | "false"). */
export async function toggleRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await setRuleEnabled(String(form.get("id")), form.get("enabled") === "true", reviewer.login), "");
}

/** Moves a rule one place. Form: id, direction ("up" | "down"). */
export async function moveRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await moveRule(String(form.get("id")), form.get("direction") === "up" ? "up" : "down", reviewer.login), "");
}

/** Deletes an operator rule. Form: id. */
export async function deleteRuleAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  return done(await deleteRule(String(form.get("id")), reviewer.login), "");
}

/** The "try it" box: the policy's answer for a sample, nothing runs. Form: tool, path, command, url. */
export async function tryPolicyAction(_prev: TryResult | null, form: FormData): Promise<TryResult> {
  await requireReviewerPage("/policy");
  const text = (key: string) => String(form.get(key) ?? "");
  return tryPolicy({ tool: text("tool"), path: text("path"), command: text("command"), url: text("url") });
}

/** Sets the supervision preset of the workspace this server serves. Form: preset. */
export async function setWorkspacePresetAction(_prev: ActionState, form: FormData): Promise<ActionState> {
  const reviewer = await requireReviewerPage("/policy");
  const preset = String(form.get("preset") ?? "");
  if (!isPresetName(preset)) return { ok: false, message: `Unknown preset “${preset}”.` };
  const workspace = await currentWorkspace();
  await setWorkspacePreset(workspace.id, preset, `reviewer:${reviewer.login}`);
  revalidatePath("/policy");
  return { ok: true, message: `This workspace now uses the ${preset} preset.` };
}
