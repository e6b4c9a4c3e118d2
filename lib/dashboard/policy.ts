import { z } from "zod";
import { db } from "@/lib/db";
import { errorBody, toErrorBody, type ErrorBody } from "@/lib/errors";
import { askPolicy } from "@/lib/gateway/contexts";
import { workspacePreset } from "@/lib/policy/preset-store";
import { PRESET_NAMES, type PresetName } from "@/lib/policy/presets";
import { optionalText, readRuleOptions } from "@/lib/policy/rule-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { PolicyVerdict, RuleOptions } from "@/lib/policy/types";
import { getTool, TOOLS } from "@/lib/tools/registry";
import { resolveInWorkspace } from "@/lib/workspace/fence";

/**
 * Policy rules as the dashboard's policy page reads them, and its "try it" box. The rules are
 * stored, changed and audited by lib/policy/rule-store.ts; the engine is lib/policy/decide.ts.
 */

/** A rule as listed. */
export interface RuleRow {
  id: string;
  priority: number;
  tool: string;
  pathGlob: string | null;
  command: string | null;
  decision: "allow" | "ask" | "deny";
  note: string | null;
  enabled: boolean;
  source: string;
  /** The stored options (PolicyRule.optionsJson), or null when the rule has none. */
  options: RuleOptions | null;
  /** The stored options text when it does not parse (the engine ignores it), else null. */
  invalidOptions: { text: string; problem: string } | null;
  /** The options in short words for the list, e.g. ["memory 4096 MiB", "CPU time no limit"]. */
  optionsSummary: string[];
}

/**
 * Every rule in evaluation order (priority, then id), enabled or not; grants made from approvals
 * are listed on their own (lib/approvals/grants.ts listGrants).
 */
export async function listRules(): Promise<RuleRow[]> {
  const rows = await db().policyRule.findMany({ where: { source: { not: "grant" } }, orderBy: [{ priority: "asc" }, { id: "asc" }] });
  return rows.map(({ optionsJson, ...r }) => {
    const stored = readRuleOptions(optionsJson);
    return {
      ...r,
      decision: r.decision as RuleRow["decision"],
      options: stored.ok ? stored.options : null,
      invalidOptions: stored.ok ? null : { text: optionsJson ?? "", problem: stored.path.length > 0 ? `${stored.path.join(".")}: ${stored.problem}` : stored.problem },
      optionsSummary: stored.ok && stored.options ? describeRuleOptions(stored.options) : [],
    };
  });
}

const LIMIT_WORDS: Record<keyof NonNullable<RuleOptions["limits"]>, [label: string, unit: string]> = {
  memory_mb: ["memory", "MiB"],
  processes: ["processes", ""],
  cpu_seconds: ["CPU time", "s"],
  file_size_mb: ["file size", "MiB"],
  address_space_mb: ["address space", "MiB"],
  timeout_ms: ["timeout ≤", "ms"],
  output_chars: ["output ≤", "chars"],
};

/**
 * A rule's options in short words for the rule list, limits in the order of LIMIT_WORDS then
 * masking: `{"limits": {"memory_mb": 4096, "cpu_seconds": 0}, "redact": false}` →
 * `["memory 4096 MiB", "CPU time no limit", "secrets unmasked"]` (0 lifts a limit,
 * lib/exec/limits.ts RuleLimitsInput; the timeout and output cap cannot be 0).
 */
export function describeRuleOptions(options: RuleOptions): string[] {
  const limits = options.limits ?? {};
  const words = Object.entries(LIMIT_WORDS).flatMap(([key, [label, unit]]) => {
    const value = limits[key as keyof typeof limits];
    if (value === undefined) return [];
    return [value === 0 ? `${label} no limit` : `${label} ${value.toLocaleString("en-US")}${unit ? ` ${unit}` : ""}`];
  });
  if (options.redact !== undefined) words.push(options.redact ? "secrets masked" : "secrets unmasked");
  return words;
}

/** Active agent tokens with a preset of their own (they do not follow the workspace's). */
export async function countPresetOverrides(): Promise<number> {
  return db().agent.count({ where: { preset: { not: null }, revokedAt: null } });
}

/** Tool names a rule may name ("*" for every tool). */
export function ruleToolNames(): string[] {
  return ["*", ...TOOLS.map((t) => t.name)];
}

/** A tool as the "try it" box offers it, with the argument its sample call needs. */
export interface TryTool {
  name: string;
  /** The sample's field: a command line for commands, a URL for fetches, else a path. */
  field: "command" | "url" | "path";
}

/** The tools the "try it" box offers (registry order), each with its sample field, from its risk. */
export function tryTools(): TryTool[] {
  return TOOLS.map((t) => ({ name: t.name, field: t.risk === "exec" ? "command" : t.risk === "network" ? "url" : "path" }));
}

/** A sample for the "try it" box. */
export const TrySample = z.object({
  tool: z.string().refine((t) => getTool(t) !== undefined, "unknown tool"),
  /** A path argument (file tools), relative to the workspace root or absolute inside it. */
  path: optionalText(4096),
  /** A command line (run_command). */
  command: optionalText(100_000),
  /** A URL (fetch_url). */
  url: optionalText(8192),
});
export type TrySample = z.input<typeof TrySample>;

/** What the policy would answer for a sample, or why the call would not even reach the policy. */
export type TryResult =
  | {
      ok: true;
      /** The answer under the workspace's preset. */
      verdict: PolicyVerdict;
      /** The workspace's preset. */
      preset: PresetName;
      /** The answer under every preset, in PRESET_NAMES order (side by side on the policy page). */
      byPreset: Array<{ preset: PresetName; verdict: PolicyVerdict }>;
      input: { tool: string; paths: string[]; command: string | null; url: string | null };
    }
  | { ok: false; error: ErrorBody };

/**
 * Asks the policy engine about a sample call without running anything: the path is fenced like a
 * real call's (a path outside the workspace is refused before the policy is asked), the command
 * is decided with the workspace root as cwd, with the current rules, under every supervision preset
 * (a write's large-change check needs the content, so it is not part of the answer here).
 * @returns the answers, or the API's error: `invalid_arguments` (an unknown tool or a malformed
 *   sample; `detail.issues`), or the fence's refusal (e.g. `path_outside_workspace`). Never throws
 *   for a sample a reviewer can send.
 */
export async function tryPolicy(sample: TrySample): Promise<TryResult> {
  const parsed = TrySample.safeParse(sample);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
    return { ok: false, error: errorBody("invalid_arguments", issues.map((i) => `${i.path}: ${i.message}`).join("; "), { issues }) };
  }
  const { tool: toolName, path, command, url } = parsed.data;
  const tool = getTool(toolName)!;
  const workspace = await currentWorkspace();
  let paths: string[] = [];
  if (path !== null) {
    try {
      paths = [(await resolveInWorkspace(workspace, path)).relative];
    } catch (err) {
      const body = toErrorBody(err);
      return { ok: false, error: { ...body, message: `The call would be refused before the policy is asked: ${body.name}: ${body.message}` } };
    }
  }
  const subject = { paths, ...(command !== null && { command: { command } }), ...(url !== null && { url }) };
  const byPreset = [];
  for (const preset of PRESET_NAMES) byPreset.push({ preset, verdict: await askPolicy(tool, workspace, subject, { preset }) });
  const preset = await workspacePreset(workspace.id);
  const verdict = byPreset.find((b) => b.preset === preset)!.verdict;
  return { ok: true, verdict, preset, byPreset, input: { tool: tool.name, paths, command, url } };
}
