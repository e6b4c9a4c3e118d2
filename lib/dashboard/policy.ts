import picomatch from "picomatch";
import { z } from "zod";
import { db } from "@/lib/db";
import { toErrorBody } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { appendEvent } from "@/lib/audit/events";
import { askPolicy } from "@/lib/gateway/contexts";
import { workspacePreset } from "@/lib/gateway/presets";
import { PRESET_NAMES, type PresetName } from "@/lib/policy/presets";
import { invalidateRules } from "@/lib/gateway/rules";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { RuleOptionsInput } from "@/lib/policy/rule-match";
import type { PolicyVerdict, RuleOptions } from "@/lib/policy/types";
import { getTool, TOOLS } from "@/lib/tools/registry";
import { resolveInWorkspace } from "@/lib/workspace/fence";

/**
 * Policy rules as the dashboard lists and edits them (the PolicyRule table; the engine is
 * lib/policy/decide.ts and reads them through lib/gateway/rules.ts). Every change drops the rule
 * cache and is written to the hash-chained event log with the reviewer as actor.
 * Default rules (source "default") can be edited, reordered and disabled but not deleted: the
 * next start would seed them again.
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
    const stored = readOptions(optionsJson);
    return {
      ...r,
      decision: r.decision as RuleRow["decision"],
      options: stored.ok ? stored.options : null,
      invalidOptions: stored.ok ? null : { text: optionsJson ?? "", problem: stored.path.length > 0 ? `${stored.path.join(".")}: ${stored.problem}` : stored.problem },
      optionsSummary: stored.ok && stored.options ? describeRuleOptions(stored.options) : [],
    };
  });
}

type ReadOptions = { ok: true; options: RuleOptions | null } | { ok: false; problem: string; path: PropertyKey[] };

/**
 * Parses options text with the engine's schema (RuleOptionsInput, lib/policy/rule-match.ts).
 * Blank text, `{}` and `{"limits": {}}` are "no options" (null), so the stored column stays null.
 * @returns the options, or the first problem in words and where it is (path inside the JSON)
 */
function readOptions(text: string | null): ReadOptions {
  if (text === null || text.trim() === "") return { ok: true, options: null };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `not valid JSON (${(err as Error).message})`, path: [] };
  }
  const parsed = RuleOptionsInput.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: issue.message, path: issue.path };
  }
  const { limits, redact } = parsed.data;
  const hasLimits = limits !== undefined && Object.keys(limits).length > 0;
  if (!hasLimits && redact === undefined) return { ok: true, options: null };
  return { ok: true, options: { ...(hasLimits && { limits }), ...(redact !== undefined && { redact }) } };
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

const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .transform((s) => s.trim())
    .transform((s) => (s === "" ? null : s))
    .nullable()
    .default(null);

/** A rule as the form sends it. */
export const RuleInput = z.object({
  tool: z.string().refine((t) => t === "*" || getTool(t) !== undefined, "unknown tool"),
  pathGlob: optionalText(500).superRefine((g, ctx) => {
    const problem = g === null ? null : globProblem(g);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }),
  command: optionalText(500).refine((c) => c === null || c !== "*", "a command pattern needs at least one word before *"),
  decision: z.enum(["allow", "ask", "deny"]),
  note: optionalText(500),
  enabled: z.boolean().default(true),
  /**
   * The rule's options as JSON text (RuleOptionsInput: `limits` for run_command, `redact`), e.g.
   * `{"limits": {"memory_mb": 4096, "cpu_seconds": 0}, "redact": false}`; blank for none.
   */
  options: z
    .string()
    .max(10_000)
    .nullable()
    .default(null)
    .transform((text, ctx) => {
      const read = readOptions(text);
      if (read.ok) return read.options;
      ctx.addIssue({ code: "custom", message: read.problem, path: read.path });
      return z.NEVER;
    }),
}).superRefine((rule, ctx) => {
  if (rule.options?.limits && rule.tool !== "*" && rule.tool !== "run_command") {
    ctx.addIssue({ code: "custom", message: `limits apply to run_command only; this rule is for ${rule.tool}`, path: ["options", "limits"] });
  }
});
export type RuleInput = z.input<typeof RuleInput>;

/** The PolicyRule columns of a parsed rule (options stored as compact JSON, or null). */
function ruleColumns({ options, ...rest }: z.output<typeof RuleInput>) {
  return { ...rest, optionsJson: options ? JSON.stringify(options) : null };
}

/**
 * Why a path glob can never match, or null. Rules match workspace-relative, "/"-separated paths
 * without a leading "/" or "./" (lib/policy/rule-match.ts compiles them with picomatch).
 */
function globProblem(glob: string): string | null {
  if (glob.startsWith("/")) return "paths are relative to the workspace root: drop the leading /";
  if (glob.startsWith("./")) return "paths are written without a leading ./";
  if (glob.includes("\\")) return "use / between path components, not \\";
  try {
    picomatch(glob, { dot: true });
    return null;
  } catch (err) {
    return `not a valid glob (${(err as Error).message})`;
  }
}

/** Result of a rule change: ok, or a message for the form. */
export type RuleChange = { ok: true; id: string } | { ok: false; message: string };

function invalid(error: z.ZodError): RuleChange {
  return { ok: false, message: error.issues.map((i) => `${i.path.join(".") || "rule"}: ${i.message}`).join("; ") };
}

async function changed(type: string, actor: string, data: Record<string, unknown>): Promise<void> {
  invalidateRules();
  await appendEvent({ type, actor: `reviewer:${actor}`, data });
}

/** Adds a rule after every existing one (largest priority + 10). */
export async function createRule(input: RuleInput, actor: string): Promise<RuleChange> {
  const parsed = RuleInput.safeParse(input);
  if (!parsed.success) return invalid(parsed.error);
  const last = await db().policyRule.findFirst({ orderBy: { priority: "desc" }, select: { priority: true } });
  const id = newId("rule");
  const rule = await db().policyRule.create({ data: { id, priority: (last?.priority ?? 0) + 10, ...ruleColumns(parsed.data), source: "operator" } });
  await changed("policy.rule_created", actor, { rule: snapshot(rule) });
  return { ok: true, id };
}

/** Replaces a rule's fields (its place in the order stays). */
export async function updateRule(id: string, input: RuleInput, actor: string): Promise<RuleChange> {
  const parsed = RuleInput.safeParse(input);
  if (!parsed.success) return invalid(parsed.error);
  const before = await db().policyRule.findUnique({ where: { id } });
  if (!before) return { ok: false, message: `No rule ${id}.` };
  const after = await db().policyRule.update({ where: { id }, data: ruleColumns(parsed.data) });
  await changed("policy.rule_updated", actor, { before: snapshot(before), after: snapshot(after) });
  return { ok: true, id };
}

/** Enables or disables a rule. */
export async function setRuleEnabled(id: string, enabled: boolean, actor: string): Promise<RuleChange> {
  const { count } = await db().policyRule.updateMany({ where: { id }, data: { enabled } });
  if (count !== 1) return { ok: false, message: `No rule ${id}.` };
  await changed(enabled ? "policy.rule_enabled" : "policy.rule_disabled", actor, { id });
  return { ok: true, id };
}

/** Deletes an operator rule (a default rule can only be disabled). */
export async function deleteRule(id: string, actor: string): Promise<RuleChange> {
  const rule = await db().policyRule.findUnique({ where: { id } });
  if (!rule) return { ok: false, message: `No rule ${id}.` };
  if (rule.source === "default") return { ok: false, message: "A default rule cannot be deleted (it would come back at the next start); disable it instead." };
  await db().policyRule.delete({ where: { id } });
  await changed("policy.rule_deleted", actor, { rule: snapshot(rule) });
  return { ok: true, id };
}

/**
 * Moves a rule one place earlier ("up") or later ("down") in the evaluation order. Priorities are
 * renumbered 10, 20, 30 … in one transaction, so equal priorities never make the order ambiguous.
 */
export async function moveRule(id: string, direction: "up" | "down", actor: string): Promise<RuleChange> {
  const order = (await listRules()).map((r) => r.id);
  const from = order.indexOf(id);
  if (from < 0) return { ok: false, message: `No rule ${id}.` };
  const to = direction === "up" ? from - 1 : from + 1;
  if (to < 0 || to >= order.length) return { ok: true, id };
  [order[from], order[to]] = [order[to], order[from]];
  await db().$transaction(order.map((ruleId, i) => db().policyRule.update({ where: { id: ruleId }, data: { priority: (i + 1) * 10 } })));
  await changed("policy.rule_moved", actor, { id, direction, position: to + 1 });
  return { ok: true, id };
}

function snapshot(rule: { id: string; priority: number; tool: string; pathGlob: string | null; command: string | null; decision: string; note: string | null; enabled: boolean; optionsJson: string | null }) {
  const { id, priority, tool, pathGlob, command, decision, note, enabled, optionsJson } = rule;
  return { id, priority, tool, pathGlob, command, decision, note, enabled, options: optionsJson };
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
  | { ok: false; message: string };

/**
 * Asks the policy engine about a sample call without running anything: the path is fenced like a
 * real call's (a path outside the workspace is refused before the policy is asked), the command
 * is decided with the workspace root as cwd, with the current rules, under every supervision preset
 * (a write's large-change check needs the content, so it is not part of the answer here).
 */
export async function tryPolicy(sample: TrySample): Promise<TryResult> {
  const parsed = TrySample.safeParse(sample);
  if (!parsed.success) return { ok: false, message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
  const { tool: toolName, path, command, url } = parsed.data;
  const tool = getTool(toolName)!;
  const workspace = await currentWorkspace();
  let paths: string[] = [];
  if (path !== null) {
    try {
      paths = [(await resolveInWorkspace(workspace, path)).relative];
    } catch (err) {
      const body = toErrorBody(err);
      return { ok: false, message: `The call would be refused before the policy is asked: ${body.name}: ${body.message}` };
    }
  }
  const subject = { paths, ...(command !== null && { command: { command } }), ...(url !== null && { url }) };
  const byPreset = [];
  for (const preset of PRESET_NAMES) byPreset.push({ preset, verdict: await askPolicy(tool, workspace, subject, { preset }) });
  const preset = await workspacePreset(workspace.id);
  const verdict = byPreset.find((b) => b.preset === preset)!.verdict;
  return { ok: true, verdict, preset, byPreset, input: { tool: tool.name, paths, command, url } };
}
