import picomatch from "picomatch";
import { z } from "zod";
import { db } from "@/lib/db";
import { errorBody, type ErrorBody } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { appendEvent } from "@/lib/audit/events";
import { ruleOptionsOf } from "@/lib/audit/record";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { parseRuleOptions, RuleOptionsInput } from "@/lib/policy/rule-match";
import type { Decision, PolicyRuleData, RuleOptions } from "@/lib/policy/types";

/**
 * The rule store: policy rules in the PolicyRule table. The engine loads them for every call
 * (cached for a second per process); they are seeded from lib/policy/default-rules.ts, and a
 * reviewer creates, edits, reorders, disables and deletes them here. Every change made through
 * this module drops this process's cache at once (other processes see it within the second) and
 * is written to the hash-chained event log with the reviewer as actor. Default rules (source
 * "default") can be edited, reordered and disabled but not deleted: the next start would seed
 * them again. Grants (source "grant") are checked, made and ended by lib/approvals/grants.ts,
 * which keeps their rows through the grant functions at the end of this module.
 */
const CACHE_MS = 1000;
const globalForRules = globalThis as unknown as { agentReachRules?: { at: number; rules: PolicyRuleData[] } };

/** All rules ordered by priority (then id), enabled and disabled. */
export async function loadRules(): Promise<PolicyRuleData[]> {
  const cached = globalForRules.agentReachRules;
  if (cached && Date.now() - cached.at < CACHE_MS) return cached.rules;
  const rows = await db().policyRule.findMany({ orderBy: [{ priority: "asc" }, { id: "asc" }] });
  const rules = rows.map((r) => ({
    id: r.id,
    priority: r.priority,
    tool: r.tool,
    pathGlob: r.pathGlob,
    command: r.command,
    decision: r.decision as Decision,
    note: r.note,
    // A revoked grant is kept for the record and never applies.
    enabled: r.enabled && r.revokedAt === null,
    options: storedOptions(r.id, r.optionsJson),
    source: r.source,
    workspaceId: r.workspaceId,
    sessionId: r.sessionId,
    // Compared with the time of each decision (rule-match.ts ruleInScope), so the cache never keeps an expired grant alive.
    expiresAt: r.expiresAt?.getTime() ?? null,
  }));
  globalForRules.agentReachRules = { at: Date.now(), rules };
  return rules;
}

/**
 * A rule's stored options. Options that do not parse (edited behind the policy editor's back) are
 * ignored with a warning on the server console: the rule still decides, and the built-in limits
 * and masking, which are the safe side, apply.
 */
function storedOptions(id: string, json: string | null): RuleOptions | null {
  try {
    return parseRuleOptions(json);
  } catch (e) {
    console.warn(`[agent-reach] policy rule ${id}: ${(e as Error).message}; its options are ignored`);
    return null;
  }
}

/**
 * The rule options the policy recorded for a call when it decided (ToolCall.decisionJson, the
 * verdict's `options`): an approved call runs with the limits its reviewer saw.
 * @returns the options, or null when the call has none (or no decision was recorded)
 */
export async function callRuleOptions(callId: string): Promise<RuleOptions | null> {
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { decisionJson: true } });
  return ruleOptionsOf(row?.decisionJson);
}

/** Forgets the cached rules (call after any change). */
export function invalidateRules(): void {
  globalForRules.agentReachRules = undefined;
}

/**
 * Inserts every default rule that is not in the table yet (by id). Rules the operator changed or
 * disabled are left as they are.
 * @returns the number of rules inserted.
 */
export async function seedDefaultRules(): Promise<number> {
  const existing = new Set((await db().policyRule.findMany({ select: { id: true } })).map((r) => r.id));
  const missing = DEFAULT_RULES.filter((r) => !existing.has(r.id));
  for (const rule of missing) {
    await db().policyRule.create({
      data: {
        id: rule.id,
        priority: rule.priority,
        tool: rule.tool,
        pathGlob: rule.pathGlob,
        command: rule.command,
        decision: rule.decision,
        note: rule.note,
        enabled: rule.enabled,
        optionsJson: rule.options ? JSON.stringify(rule.options) : null,
        source: "default",
      },
    });
  }
  invalidateRules();
  return missing.length;
}

type ReadOptions = { ok: true; options: RuleOptions | null } | { ok: false; problem: string; path: PropertyKey[] };

/**
 * Parses rule options text with the engine's schema (RuleOptionsInput, lib/policy/rule-match.ts).
 * Blank text, `{}` and `{"limits": {}}` are "no options" (null), so the stored column stays null.
 * @returns the options, or the first problem in words and where it is (path inside the JSON)
 */
export function readRuleOptions(text: string | null): ReadOptions {
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

/** An optional text field of a form: trimmed, at most `max` characters, empty → null. */
export const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .transform((s) => s.trim())
    .transform((s) => (s === "" ? null : s))
    .nullable()
    .default(null);

/**
 * A rule as a reviewer sends it. `tool` is checked against the tool names the caller passes to
 * createRule / updateRule (the registry's: the policy sits below it and cannot read it).
 */
export const RuleInput = z
  .object({
    tool: z.string().max(100),
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
        const read = readRuleOptions(text);
        if (read.ok) return read.options;
        ctx.addIssue({ code: "custom", message: read.problem, path: read.path });
        return z.NEVER;
      }),
  })
  .superRefine((rule, ctx) => {
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

/**
 * Result of a rule change: ok, or the error as the API would answer it (lib/errors.ts):
 * `invalid_arguments` (a field is wrong: `detail.issues` lists `{path, message}`; the message
 * names them), `not_found` (no such rule), `forbidden` (`detail.reason` "default_rule": a default
 * rule cannot be deleted).
 */
export type RuleChange = { ok: true; id: string } | { ok: false; error: ErrorBody };

function noRule(id: string): RuleChange {
  return { ok: false, error: errorBody("not_found", `No rule ${id}.`, { rule_id: id }) };
}

/** Parses a rule, checking its tool against `tools` ("*" is always allowed). Never throws. */
function parseRule(input: unknown, tools: readonly string[]): { ok: true; rule: z.output<typeof RuleInput> } | { ok: false; change: RuleChange } {
  const parsed = RuleInput.superRefine((r, ctx) => {
    if (r.tool !== "*" && !tools.includes(r.tool)) ctx.addIssue({ code: "custom", message: "unknown tool", path: ["tool"] });
  }).safeParse(input);
  if (parsed.success) return { ok: true, rule: parsed.data };
  const issues = parsed.error.issues.map((i) => ({ path: i.path.join(".") || "rule", message: i.message }));
  return { ok: false, change: { ok: false, error: errorBody("invalid_arguments", issues.map((i) => `${i.path}: ${i.message}`).join("; "), { issues }) } };
}

async function changed(type: string, actor: string, data: Record<string, unknown>): Promise<void> {
  invalidateRules();
  await appendEvent({ type, actor: `reviewer:${actor}`, data });
}

/**
 * Adds an operator rule after every existing one (largest priority + 10).
 * @param tools the tool names a rule may name (the registry's)
 */
export async function createRule(input: RuleInput, actor: string, tools: readonly string[]): Promise<RuleChange> {
  const parsed = parseRule(input, tools);
  if (!parsed.ok) return parsed.change;
  const last = await db().policyRule.findFirst({ orderBy: { priority: "desc" }, select: { priority: true } });
  const id = newId("rule");
  const rule = await db().policyRule.create({ data: { id, priority: (last?.priority ?? 0) + 10, ...ruleColumns(parsed.rule), source: "operator" } });
  await changed("policy.rule_created", actor, { rule: snapshot(rule) });
  return { ok: true, id };
}

/** Replaces a rule's fields (its place in the order stays). @param tools as for createRule */
export async function updateRule(id: string, input: RuleInput, actor: string, tools: readonly string[]): Promise<RuleChange> {
  const parsed = parseRule(input, tools);
  if (!parsed.ok) return parsed.change;
  const before = await db().policyRule.findUnique({ where: { id } });
  if (!before) return noRule(id);
  const after = await db().policyRule.update({ where: { id }, data: ruleColumns(parsed.rule) });
  await changed("policy.rule_updated", actor, { before: snapshot(before), after: snapshot(after) });
  return { ok: true, id };
}

/** Enables or disables a rule. */
export async function setRuleEnabled(id: string, enabled: boolean, actor: string): Promise<RuleChange> {
  const { count } = await db().policyRule.updateMany({ where: { id }, data: { enabled } });
  if (count !== 1) return noRule(id);
  await changed(enabled ? "policy.rule_enabled" : "policy.rule_disabled", actor, { id });
  return { ok: true, id };
}

/** Deletes an operator rule (a default rule can only be disabled). */
export async function deleteRule(id: string, actor: string): Promise<RuleChange> {
  const rule = await db().policyRule.findUnique({ where: { id } });
  if (!rule) return noRule(id);
  if (rule.source === "default") {
    return { ok: false, error: errorBody("forbidden", "A default rule cannot be deleted (it would come back at the next start); disable it instead.", { reason: "default_rule", rule_id: id }) };
  }
  await db().policyRule.delete({ where: { id } });
  await changed("policy.rule_deleted", actor, { rule: snapshot(rule) });
  return { ok: true, id };
}

/**
 * Moves a rule one place earlier ("up") or later ("down") in the evaluation order of the rules a
 * reviewer edits (grants are left out). Priorities are renumbered 10, 20, 30 … in one
 * transaction, so equal priorities never make the order ambiguous.
 */
export async function moveRule(id: string, direction: "up" | "down", actor: string): Promise<RuleChange> {
  const rows = await db().policyRule.findMany({ where: { source: { not: "grant" } }, orderBy: [{ priority: "asc" }, { id: "asc" }], select: { id: true } });
  const order = rows.map((r) => r.id);
  const from = order.indexOf(id);
  if (from < 0) return noRule(id);
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

/**
 * Grant rows. A grant ("don't ask again", source "grant") is a PolicyRule row scoped to a workspace
 * or session with an expiry; lib/approvals/grants.ts checks it, decides when it ends and writes its
 * audit events, and keeps its rows here. Each write drops this process's rule cache.
 */

/** A grant's stored row: the PolicyRule columns a grant uses. */
export interface GrantRow {
  id: string;
  tool: string;
  pathGlob: string | null;
  command: string | null;
  enabled: boolean;
  workspaceId: string | null;
  sessionId: string | null;
  expiresAt: Date | null;
  createdAt: Date;
  createdFromCallId: string | null;
  createdBy: string | null;
  revokedAt: Date | null;
  revokedBy: string | null;
}

/** A new grant to store: an allow rule with its scope, expiry (ms since the epoch) and origin. */
export interface NewGrantRow extends Pick<PolicyRuleData, "id" | "priority" | "tool" | "pathGlob" | "command" | "decision" | "note"> {
  workspaceId: string;
  sessionId: string | null;
  expiresAt: number;
  createdFromCallId: string;
  createdBy: string;
}

const grantColumns = {
  id: true,
  tool: true,
  pathGlob: true,
  command: true,
  enabled: true,
  workspaceId: true,
  sessionId: true,
  expiresAt: true,
  createdAt: true,
  createdFromCallId: true,
  createdBy: true,
  revokedAt: true,
  revokedBy: true,
} as const;

/** Stores one grant (enabled, source "grant") and drops the rule cache. */
export async function insertGrantRule(grant: NewGrantRow): Promise<void> {
  await db().policyRule.create({ data: { ...grant, enabled: true, source: "grant", expiresAt: new Date(grant.expiresAt) } });
  invalidateRules();
}

/** Grants still enabled and not revoked whose expiry is at or before `now` (at most `limit`). */
export async function dueGrantRows(now: Date, limit = 500): Promise<GrantRow[]> {
  return db().policyRule.findMany({ where: { source: "grant", enabled: true, revokedAt: null, expiresAt: { lte: now } }, select: grantColumns, take: limit });
}

/**
 * Marks an expired grant ended (disabled), if it is still enabled, and drops the rule cache.
 * @returns true when this call ended it (false: already ended, by another process or a revoke)
 */
export async function endGrantRow(id: string): Promise<boolean> {
  const { count } = await db().policyRule.updateMany({ where: { id, source: "grant", enabled: true }, data: { enabled: false } });
  if (count === 1) invalidateRules();
  return count === 1;
}

/**
 * Revokes a grant as reviewer `login` (revokedAt now, disabled), if it has not ended yet, and
 * drops the rule cache.
 * @returns true when this call revoked it (false: already revoked or expired)
 */
export async function revokeGrantRow(id: string, login: string, now = new Date()): Promise<boolean> {
  const { count } = await db().policyRule.updateMany({ where: { id, source: "grant", revokedAt: null, enabled: true }, data: { revokedAt: now, revokedBy: login, enabled: false } });
  if (count === 1) invalidateRules();
  return count === 1;
}

/** One grant by id, or null (also when `id` names a rule that is not a grant). */
export async function findGrantRow(id: string): Promise<GrantRow | null> {
  const row = await db().policyRule.findUnique({ where: { id }, select: { ...grantColumns, source: true } });
  if (!row || row.source !== "grant") return null;
  const { source: _source, ...grant } = row;
  return grant;
}

/**
 * Grants newest first: the ones still in force (enabled, not revoked) and any made at or after
 * `since`, at most `limit`.
 */
export async function listGrantRows(since: Date, limit = 200): Promise<GrantRow[]> {
  return db().policyRule.findMany({
    where: { source: "grant", OR: [{ enabled: true, revokedAt: null }, { createdAt: { gte: since } }] },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: grantColumns,
    take: limit,
  });
}

/** The grants made while approving call `callId`, by id. */
export async function grantRowsFromCall(callId: string): Promise<GrantRow[]> {
  return db().policyRule.findMany({ where: { source: "grant", createdFromCallId: callId }, orderBy: { id: "asc" }, select: grantColumns });
}
