import { LineClassifier, type CommandClassification, type CommandContext } from "@/lib/policy/line-classifier";
import { activeRules, type RuleScope } from "@/lib/policy/rule-match";
import type { PolicyRuleData } from "@/lib/policy/types";

export type { CommandClassification, CommandContext } from "@/lib/policy/line-classifier";

/**
 * Classifies a `run_command` command line (field cases C20, C21, C23): every simple command the
 * shell would run gets its own decision from the command rules, raised by what the policy knows
 * regardless of rules (writes through redirections and file operands, programs that run other
 * programs, environment dumps, syntax it cannot read). The line's decision is the strongest part.
 *
 * Rule semantics for one part (matching rules are those of tool "run_command" or "*"):
 * - a rule with a `command` pattern matches the part's argv (see command-pattern.ts); deny and
 *   ask rules also match the command name by basename and count a "maybe" match (a glob or
 *   run-time word where the pattern needs a fixed word) as ask;
 * - a rule with only a `pathGlob` matches when a path the part reads or writes inside the
 *   workspace matches it; for commands such rules can only ask or deny (a path never allows a
 *   command, whose effects are not limited to that path);
 * - a rule with neither applies to every part;
 * - among matching rules deny beats ask beats allow; no matching rule → ask
 *   ("not on the allow list").
 * Built-in floors: a write outside the workspace (redirection `>`, `>>`, `>|`, `&>`, `>&file`,
 * or a written operand) is denied with `write_outside_workspace`; a write inside asks (it bypasses
 * the diff and backup of write_file/edit_file); reading outside the workspace, running in a
 * directory outside it, environment dumps, and unclassifiable words ask.
 *
 * The walk itself is lib/policy/line-classifier.ts.
 */

/**
 * Classifies `ctx.command` against `rules` (all rules; only enabled rules of tool "run_command"
 * or "*" that hold in `scope` are used: see rule-match.ts `ruleInScope`).
 * @returns the line's decision, its deciding rule, reasons (strongest first) and every part.
 * Never throws for any command string (errors only if the bash grammar cannot be loaded).
 */
export async function classifyCommandLine(ctx: CommandContext, rules: readonly PolicyRuleData[], scope?: RuleScope): Promise<CommandClassification> {
  return new LineClassifier(ctx, activeRules(rules, "run_command", scope)).classify();
}
