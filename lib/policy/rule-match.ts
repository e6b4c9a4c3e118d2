import picomatch from "picomatch";
import { z } from "zod";
import { RuleLimitsInput, type RuleLimits } from "@/lib/exec/limits";
import { parseCommandPattern, type CommandPattern } from "@/lib/policy/command-pattern";
import type { Decision, PolicyRuleData, RuleOptions, RuleRef } from "@/lib/policy/types";

/**
 * Small helpers shared by the policy's path and command halves: rule order, glob matching, and
 * combining decisions (deny beats ask beats allow).
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

/** Where and when a call is decided, for scoped and expiring rules (grants). */
export interface RuleScope {
  workspaceId?: string;
  sessionId?: string;
  /** ms since the epoch; default Date.now(). */
  now?: number;
}

/**
 * True when `rule` holds for a call in `scope`: its workspace and session (when it names them)
 * are the call's, and it has not expired. A scoped rule never holds for a call whose scope is
 * unknown (a workspace- or session-scoped grant needs the call to say where it is).
 */
export function ruleInScope(rule: PolicyRuleData, scope: RuleScope = {}): boolean {
  if (rule.workspaceId && rule.workspaceId !== scope.workspaceId) return false;
  if (rule.sessionId && rule.sessionId !== scope.sessionId) return false;
  if (rule.expiresAt !== undefined && rule.expiresAt !== null && rule.expiresAt <= (scope.now ?? Date.now())) return false;
  return true;
}

/** The rules that hold in `scope` (see ruleInScope), in their given order. */
export function rulesInScope(rules: readonly PolicyRuleData[], scope: RuleScope = {}): PolicyRuleData[] {
  return rules.filter((r) => ruleInScope(r, scope));
}

/**
 * The enabled rules that apply to `tool` (`tool` equal, or `"*"`) and hold in `scope` (scoped
 * grants of another workspace or session, and expired ones, are skipped), lowest priority number
 * first (ties by id, so the order is stable).
 */
export function activeRules(rules: readonly PolicyRuleData[], tool: string, scope?: RuleScope): PolicyRuleData[] {
  return rules
    .filter((r) => r.enabled && (r.tool === "*" || r.tool === tool) && ruleInScope(r, scope))
    .sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The reference stored with a decision, naming where the rule comes from (by its id's prefix). */
export function ruleRef(rule: PolicyRuleData): RuleRef {
  // A rule loaded from the table may say itself that it was granted on an approval.
  const granted = (rule as { source?: unknown }).source === "grant";
  return { id: rule.id, note: rule.note, source: granted ? "grant" : ruleSource(rule.id) };
}

/** Where a rule comes from, by its id: `default:…` seeded, `preset:…` a preset's, `grant:…` an approval's, else an operator's. */
export function ruleSource(id: string): NonNullable<RuleRef["source"]> {
  if (id.startsWith("default:")) return "default";
  if (id.startsWith("preset:")) return "preset";
  if (id.startsWith("grant:") || id.startsWith("grant_")) return "grant";
  return "operator";
}

/**
 * How rule globs match: dot files included, and `*` / `**` also match names holding a newline
 * (picomatch's regular expressions use `.`, which without the `s` flag skips "\n", so
 * `**\/.env*` would miss `a\nb/.env`).
 */
export const GLOB_OPTIONS = { dot: true, flags: "s" } as const;

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
 * The same options, ignoring letter case: how the globs of ask and deny rules match (see
 * `ruleGlobMatches`). picomatch takes `flags` over `nocase`, so the `i` flag is set here.
 */
export const GLOB_OPTIONS_NOCASE = { dot: true, flags: "si", nocase: true } as const;

/**
 * True when the workspace-relative path `relative` ("/"-separated, "" for the root) matches the
 * picomatch glob `glob` (dot files included); with `nocase`, ignoring letter case (`.ENV` matches
 * `.env*`). A glob picomatch rejects matches nothing.
 */
export function globMatches(glob: string, relative: string, nocase = false): boolean {
  return globTest(glob, nocase)(relative);
}

function globTest(glob: string, nocase: boolean): (p: string) => boolean {
  return cached(globCache, `${nocase ? "i" : "c"}:${glob}`, () => {
    try {
      return picomatch(glob, nocase ? GLOB_OPTIONS_NOCASE : GLOB_OPTIONS);
    } catch {
      return () => false;
    }
  });
}

/**
 * True when `rule`'s path glob matches `relative`. The globs of ask and deny rules ignore letter
 * case, so a secret spelled `.ENV`, `certs/SERVER.KEY` or `ID_RSA` (common on Windows exports, and
 * the same file on a case-insensitive disk) is asked about like `.env`: more matches there only
 * mean more asking. Allow rules (grants included) match case-sensitively, so no spelling widens
 * what they allow. Every path check of the policy and the sandbox's secret mask go through here.
 */
export function ruleGlobMatches(rule: Pick<PolicyRuleData, "pathGlob" | "decision">, relative: string): boolean {
  return !!rule.pathGlob && globMatches(rule.pathGlob, relative, rule.decision !== "allow");
}

/** The parsed form of a rule's command pattern (cached). */
export function commandPatternOf(rule: PolicyRuleData): CommandPattern {
  return cached(patternCache, rule.command ?? "", () => parseCommandPattern(rule.command ?? ""));
}

/** A rule that names neither a path nor a command: it applies to every call of its tool. */
export function isToolRule(rule: PolicyRuleData): boolean {
  return !rule.pathGlob && !rule.command;
}

/**
 * A rule's options as stored in PolicyRule.optionsJson and sent by the policy editor, e.g.
 * `{"limits": {"memory_mb": 4096, "timeout_ms": 300000}}` or `{"redact": false}`.
 */
export const RuleOptionsInput = z
  .object({
    limits: RuleLimitsInput.optional().describe("run_command resource limits for the commands this rule matches."),
    redact: z.boolean().optional().describe("false: no secret masking for what this rule matches; reviewers may reveal masked values."),
    review_effects: z.boolean().optional().describe("true: run the command at once and hold its file changes for a reviewer's approval."),
    network: z.boolean().optional().describe("true: the commands this rule matches run in the sandbox with the host's network (none otherwise)."),
  })
  .strict();

/**
 * Parses a stored optionsJson value.
 * @returns the options, or null for null/empty text
 * @throws Error with a readable message when the text is not JSON or not valid options
 */
export function parseRuleOptions(json: string | null): RuleOptions | null {
  if (json === null || json.trim() === "") return null;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error("options are not valid JSON");
  }
  const parsed = RuleOptionsInput.safeParse(raw);
  if (!parsed.success) throw new Error(`invalid options: ${parsed.error.issues.map((i) => `${i.path.join(".") || "options"}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/**
 * Combines the options of the rules that apply to a call, given in evaluation order (priority,
 * then id): for each limit, and for `redact`, the first rule that sets it wins. (Decisions
 * combine otherwise: the strongest matching decision wins, lib/policy/decide.ts.)
 * @returns the combined options, or undefined when no rule sets any
 */
export function combineRuleOptions(rules: readonly PolicyRuleData[]): RuleOptions | undefined {
  const limits: Record<string, number> = {};
  let redact: boolean | undefined;
  let reviewEffects: boolean | undefined;
  let network: boolean | undefined;
  for (const { options } of rules) {
    if (!options) continue;
    reviewEffects ??= options.review_effects;
    for (const [key, value] of Object.entries(options.limits ?? {})) {
      if (value !== undefined && !(key in limits)) limits[key] = value;
    }
    redact ??= options.redact;
    network ??= options.network;
  }
  const hasLimits = Object.keys(limits).length > 0;
  if (!hasLimits && redact === undefined && network === undefined && reviewEffects === undefined) return undefined;
  return {
    ...(hasLimits && { limits: limits as RuleLimits }),
    ...(redact !== undefined && { redact }),
    ...(network !== undefined && { network }),
    ...(reviewEffects !== undefined && { review_effects: reviewEffects }),
  };
}

/**
 * The path rule that keeps `relative` (workspace-relative, "/"-separated) from being read
 * without review, or null: the first enabled rule of `tool` (or "*"), in priority order, with a
 * `pathGlob` matching the path and a decision other than allow. This is the match decide() makes
 * for a read_file call on that path, so recursive and indirect readers (search_files, `grep -r`,
 * `git show :path`) treat a file exactly as reading it would.
 */
export function sensitivePathRule(relative: string, rules: readonly PolicyRuleData[], tool = "read_file"): PolicyRuleData | null {
  for (const rule of activeRules(rules, tool)) {
    if (rule.pathGlob && !rule.command && rule.decision !== "allow" && ruleGlobMatches(rule, relative)) return rule;
  }
  return null;
}

/**
 * Sensitive-path rules that guard repository internals (`.git`: its hooks and config run
 * programs), not secrets: the sandbox keeps those read-only instead of hiding them.
 */
export const REPOSITORY_INTERNALS_RULES: ReadonlySet<string> = new Set(["default:sensitive-git-dir", "default:sensitive-git-dir-nested"]);

/** Tests a workspace-relative path against the secret-path rules (see `secretPathMatcher`). */
export interface SecretMatcher {
  (relative: string): boolean;
  /** Identifies the rule globs the matcher was built from (equal keys: equal answers). */
  key: string;
}

/**
 * The workspace's secret paths as one predicate: exactly the paths `sensitivePathRule` finds a
 * rule for (what read_file would have to ask or deny for, letter case ignored), less the
 * repository-internals rules.
 * This is the one definition of a secret the sandbox masks (lib/exec/workspace-secrets.ts).
 * @param rules the policy rules in force (enabled and disabled; disabled ones are skipped)
 */
export function secretPathMatcher(rules: readonly PolicyRuleData[]): SecretMatcher {
  const globs: string[] = [];
  for (const rule of activeRules(rules, "read_file")) {
    if (rule.pathGlob && !rule.command && rule.decision !== "allow" && !REPOSITORY_INTERNALS_RULES.has(rule.id)) globs.push(rule.pathGlob);
  }
  // Secret rules are never allow rules, so they match ignoring letter case (see ruleGlobMatches).
  const tests = [...new Set(globs)].map((g) => globTest(g, true));
  const matcher = ((relative: string) => tests.some((t) => t(relative))) as SecretMatcher;
  matcher.key = [...new Set(globs)].sort().join("\u0000");
  return matcher;
}
