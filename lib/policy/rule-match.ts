import picomatch from "picomatch";
import { parseCommandPattern, type CommandPattern } from "@/lib/policy/command-pattern";
import type { Decision, PolicyRuleData, RuleRef } from "@/lib/policy/types";

/**
 * Small helpers shared by the policy's path and command halves: rule order, glob matching, and
 * combining decisions (deny beats ask beats allow, DESIGN.md "Policy").
 */

const SEVERITY: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/** The stronger of two decisions (deny > ask > allow). */
export function maxDecision(a: Decision, b: Decision): Decision {
  return SEVERITY[a] >= SEVERITY[b] ? a : b;
}

/** Orders decisions strongest first (for sorting reasons). */
export function bySeverityDesc(a: Decision, b: Decision): number {
  return SEVERITY[b] - SEVERITY[a];
}

/**
 * The enabled rules that apply to `tool` (`tool` equal, or `"*"`), lowest priority number first
 * (ties by id, so the order is stable).
 */
export function activeRules(rules: readonly PolicyRuleData[], tool: string): PolicyRuleData[] {
  return rules
    .filter((r) => r.enabled && (r.tool === "*" || r.tool === tool))
    .sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The reference stored with a decision. */
export function ruleRef(rule: PolicyRuleData): RuleRef {
  return { id: rule.id, note: rule.note };
}

const globCache = new Map<string, (p: string) => boolean>();
const patternCache = new Map<string, CommandPattern>();
const CACHE_LIMIT = 500;

function cached<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let v = cache.get(key);
  if (v === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    v = make();
    cache.set(key, v);
  }
  return v;
}

/**
 * True when the workspace-relative path `relative` ("/"-separated, "" for the root) matches the
 * picomatch glob `glob` (dot files included). A glob picomatch rejects matches nothing.
 */
export function globMatches(glob: string, relative: string): boolean {
  const test = cached(globCache, glob, () => {
    try {
      return picomatch(glob, { dot: true });
    } catch {
      return () => false;
    }
  });
  return test(relative);
}

/** The parsed form of a rule's command pattern (cached). */
export function commandPatternOf(rule: PolicyRuleData): CommandPattern {
  return cached(patternCache, rule.command ?? "", () => parseCommandPattern(rule.command ?? ""));
}

/** A rule that names neither a path nor a command: it applies to every call of its tool. */
export function isToolRule(rule: PolicyRuleData): boolean {
  return !rule.pathGlob && !rule.command;
}
