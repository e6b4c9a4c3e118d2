import { classifyCommandLine } from "@/lib/policy/command-policy";
import { liftByPathGrant } from "@/lib/policy/grants";
import { activeRules, bySeverityDesc, combineRuleOptions, isToolRule, ruleGlobMatches, maxDecision, ruleRef } from "@/lib/policy/rule-match";
import fs from "node:fs";
import path from "node:path";
import { gitConfigPaths } from "@/lib/policy/git-config-paths";
import { diskView, gitDirsAbove, overlayView, type ShapeType } from "@/lib/policy/git-shape";
import { FILE_WRITE_TOOLS, largeChangeReason, PRESETS, type PresetSpec } from "@/lib/policy/presets";
import { RiskSet } from "@/lib/policy/risks";
import type { Decision, PolicyInput, PolicyRuleData, PolicyVerdict } from "@/lib/policy/types";

/**
 * The one place that decides allow / ask / deny for a tool call: no other module judges a call.
 *
 * - Rules apply when enabled and their `tool` is the call's tool or `"*"`; they are read in
 *   priority order (lower number first, ties by id).
 * - A rule with a `pathGlob` matches when one of the call's workspace-relative paths matches the
 *   picomatch glob (`dot: true`, so `.env*` and `.git/**` match dot files; the globs of ask and
 *   deny rules ignore letter case, allow rules' do not: rule-match.ts ruleGlobMatches); a rule with neither
 *   path nor command matches every call of its tool; a rule with a `command` pattern applies to
 *   run_command only (see command-policy.ts).
 * - Among the matching rules deny beats ask beats allow; the deciding rule is the first (by
 *   priority) matching rule with the winning decision. No matching rule → ask.
 * - run_command: every simple command of the line gets its own decision (`parts`); the call's
 *   decision is the strongest part; anything the parser cannot classify asks. When the command
 *   will not run inside the sandbox (`input.boxed` absent or false), a part a rule allows still
 *   asks unless the policy models everything that program does (command-knowledge.ts
 *   `isStaticallyModelled`); when the sandbox is unavailable (`sandboxProblem`) every command asks.
 * - A path tool naming an existing regular file with more than one hard link asks, naming the
 *   link count (docs/SECURITY.md "Hard links"), when `input.workspaceRoot` is given.
 * - Rules scoped to another workspace or session, and expired ones, do not apply (rule-match.ts
 *   `ruleInScope`); a grant (grants.ts) turns only a generic ask into allow.
 * - Every verdict carries `risks`: the dangers named for the reviewer (risks.ts), and `preset`:
 *   the supervision preset it was judged under (`input.preset`, default "strict"; presets.ts).
 *   The rules must already be the preset's (`rulesForPreset`); here the preset's built-in checks
 *   apply: under a relaxed preset a boxed, captured command's writes inside the workspace do not
 *   ask, a boxed recursive read may walk `.git`, and a file write the rules allow still asks when
 *   it lands in a git directory found by its shape or is a large deletion or rewrite.
 * - Options (run_command limits, `redact`; lib/policy/types.ts RuleOptions) come from the rules
 *   that apply to the call, whatever their decision: for a path tool every matching rule, for a
 *   command the rule that decided each part plus the tool's rules without path or command. For
 *   each setting the first of them in evaluation order wins (`combineRuleOptions`).
 *
 * @param input the call as the gateway sees it after fencing (paths relative, cwd absolute)
 * @param rules all rules (disabled ones are skipped here)
 * @returns the verdict with the deciding rule and short reasons (strongest first)
 * Never throws for any input an agent can send.
 */
export async function decide(input: PolicyInput, rules: PolicyRuleData[]): Promise<PolicyVerdict> {
  const preset = input.preset ?? "strict";
  return { ...(await decideUnder(input, rules, PRESETS[preset])), preset };
}

async function decideUnder(input: PolicyInput, rules: PolicyRuleData[], spec: PresetSpec): Promise<PolicyVerdict> {
  const scope = { workspaceId: input.workspaceId, sessionId: input.sessionId, now: input.now ?? Date.now() };
  const active = activeRules(rules, input.tool, scope);
  if (input.command) {
    const boxed = input.boxed === true && !input.sandboxProblem;
    const relaxed = {
      ...(spec.checks.boxedWritesApply && boxed && input.captured && { boxedWrites: true }),
      ...(spec.checks.boxedWalksIntoGit && boxed && { gitWalks: true }),
    };
    const c = await classifyCommandLine(
      {
        ...input.command,
        boxed: input.boxed ?? false,
        ...(input.sandboxProblem && { sandboxProblem: input.sandboxProblem }),
        ...(input.grants?.network && { network: true }),
        ...(Object.keys(relaxed).length > 0 && { relaxed }),
      },
      rules,
      scope,
    );
    const deciding = new Set(c.parts.map((p) => p.rule?.id));
    const applying = active.filter((r) => deciding.has(r.id) || isToolRule(r));
    const verdict = withOptions({ decision: c.decision, rule: c.rule, reasons: c.reasons, parts: c.parts, risks: c.risks }, applying);
    if (verdict.options?.network) {
      verdict.risks = [{ kind: "leaves_sandbox", text: "a rule grants this command the host's network from inside the sandbox" }, ...c.risks];
    }
    return verdict;
  }
  const verdict = liftByPathGrant(decideByPath(input, active), input, active);
  const risks = new RiskSet();
  if (input.risk === "network") risks.add("network_egress", `${input.tool} sends a request${input.url ? ` to ${hostOf(input.url)}` : ""} over the network`);
  for (const p of input.paths) {
    for (const rule of active) {
      if (input.risk === "read" && rule.pathGlob && rule.decision !== "allow" && ruleGlobMatches(rule, p)) {
        risks.add("reads_secret", `${input.tool} reads ${p || "."}${rule.note ? ` (${rule.note})` : ""}`);
      }
    }
  }
  // A hard-linked file's content may be a file outside the workspace; reads show it, and so do
  // the diff and backup of a write (docs/SECURITY.md "Hard links").
  const links = input.workspaceRoot ? await hardLinked(input.workspaceRoot, input.paths) : [];
  for (const l of links) {
    if (verdict.decision === "allow") {
      verdict.decision = "ask";
      verdict.rule = null;
      verdict.reasons = [];
    }
    verdict.reasons.unshift(`hard_link: ${l.path} has ${l.links} hard links; the other names may be outside the workspace`);
    risks.add("reads_secret", `${l.path} is hard-linked (${l.links} names): its content may be a file outside the workspace`);
  }
  if ((FILE_WRITE_TOOLS as readonly string[]).includes(input.tool) && verdict.decision === "allow") {
    const why = await presetWriteCheck(input, spec);
    if (why) {
      verdict.decision = "ask";
      verdict.rule = { id: `preset:${spec.name}:${why.check}`, note: why.note, source: "preset" };
      verdict.reasons = [why.reason];
      if (why.check === "large-change") risks.add("large_change", why.reason.replace(/^large_change: /, ""));
    }
  }
  verdict.risks = risks.list();
  return verdict;
}

/**
 * A relaxed preset's checks on a file write the rules allowed: a write into a git directory found
 * by its shape, to a path the person's git configuration runs (lib/policy/git-config-paths.ts),
 * and a large deletion or rewrite. @returns the check that asks, or null
 */
async function presetWriteCheck(input: PolicyInput, spec: PresetSpec): Promise<{ check: string; note: string; reason: string } | null> {
  if (spec.checks.gitDirectories && input.workspaceRoot) {
    for (const p of input.paths) {
      const gitDir = await insideGitDirectory(input.workspaceRoot, p);
      if (gitDir !== null) {
        return {
          check: "git-directories",
          note: "repository internals (hooks and config run programs when anyone runs git)",
          reason: `git_directory: ${p || "."} is inside the git directory ${gitDir || "."} (its hooks and config run programs when anyone runs git)`,
        };
      }
    }
  }
  if (spec.checks.gitDirectories && input.workspaceRoot) {
    const named = await gitConfigPaths(input.workspaceRoot);
    for (const p of input.paths) {
      const why = named.why(p);
      if (why) {
        return {
          check: "git-config-paths",
          note: "paths the repository's git configuration runs (hooks directory, included config, programs it names)",
          reason: `git_runs_later: ${why}`,
        };
      }
    }
  }
  if (spec.checks.largeChange && input.change) {
    const reason = largeChangeReason(input.change.path, input.change.before, { deletions: input.change.deletions, afterBytes: input.change.afterBytes });
    if (reason) return { check: "large-change", note: "large deletions and rewrites are reviewed", reason };
  }
  return null;
}

/**
 * The workspace-relative directory among `rel`'s ancestors (its own directory first) that git
 * would take for a repository by its shape (lib/policy/git-shape.ts: `HEAD` with `objects` and
 * `refs`, or with a `commondir` or `gitdir` file), or null. Catches the target of a `.git` file
 * (`gitdir: …`) and a bare repository anywhere in the workspace, whatever they are named. The
 * path being written counts as there (a file, its parents directories): the write that
 * completes the shape asks too.
 */
export async function insideGitDirectory(workspaceRoot: string, rel: string): Promise<string | null> {
  const parts = rel.split("/").filter(Boolean);
  const written = parts.join("/");
  const view = overlayView(diskView(workspaceRoot), new Map<string, ShapeType>([[written, "file"]]));
  return gitDirsAbove(written, view)[0] ?? null;
}

/**
 * `lstat` of a path, or null when it cannot be read (missing, a parent is a file). Synchronous:
 * a name-cache lookup of about a microsecond, against about 25 µs through the thread pool.
 */
function lstatOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** The paths among `paths` that are existing regular files with more than one hard link. */
async function hardLinked(workspaceRoot: string, paths: string[]): Promise<Array<{ path: string; links: number }>> {
  const out: Array<{ path: string; links: number }> = [];
  for (const p of paths) {
    const st = lstatOrNull(path.join(/*turbopackIgnore: true*/ workspaceRoot, p));
    if (st?.isFile() && st.nlink > 1) out.push({ path: p, links: st.nlink });
  }
  return out;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url.slice(0, 80);
  }
}

/** The verdict with the combined options of `applying` (in evaluation order), when there are any. */
function withOptions(verdict: PolicyVerdict, applying: PolicyRuleData[]): PolicyVerdict {
  const options = combineRuleOptions(applying);
  return options ? { ...verdict, options } : verdict;
}

function decideByPath(input: PolicyInput, rules: PolicyRuleData[]): PolicyVerdict {
  const matches: Array<{ rule: PolicyRuleData; reason: string }> = [];
  for (const rule of rules) {
    if (rule.command) continue;
    if (isToolRule(rule)) {
      matches.push({ rule, reason: `${input.tool}: ${rule.decision} by rule ${rule.id}` });
      continue;
    }
    // An allow rule counts for the files' canonical paths only; their other names can only ask or deny.
    const judged = rule.decision === "allow" && input.otherNames ? input.paths.filter((p) => !input.otherNames!.includes(p)) : input.paths;
    const hit = judged.find((p) => ruleGlobMatches(rule, p));
    if (hit !== undefined) matches.push({ rule, reason: `${hit || "."}: ${rule.decision} by rule ${rule.id}` });
  }
  if (matches.length === 0) return { decision: "ask", rule: null, reasons: [`${input.tool}: no rule matched`] };
  let decision: Decision = "allow";
  for (const m of matches) decision = maxDecision(decision, m.rule.decision);
  const deciding = matches.find((m) => m.rule.decision === decision)!;
  const reasons = [...matches]
    .sort((a, b) => bySeverityDesc(a.rule.decision, b.rule.decision))
    .filter((m) => m.rule.decision === decision)
    .map((m) => m.reason);
  return withOptions({ decision, rule: ruleRef(deciding.rule), reasons: [...new Set(reasons)] }, matches.map((m) => m.rule));
}

export { sensitivePathRule } from "@/lib/policy/rule-match";
