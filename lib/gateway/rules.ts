import { db } from "@/lib/db";
import { ruleOptionsOf } from "@/lib/audit/record";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { parseRuleOptions } from "@/lib/policy/rule-match";
import type { Decision, PolicyRuleData, RuleOptions } from "@/lib/policy/types";

/**
 * Policy rules as stored in the PolicyRule table: loaded for every call (cached briefly, and
 * dropped on every change made through this module) and seeded from lib/policy/default-rules.ts.
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
