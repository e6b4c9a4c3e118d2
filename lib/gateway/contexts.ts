import { getConfig } from "@/lib/config";
import { buildChildEnv, gitDiscoveryLimits } from "@/lib/exec/child-env";
import { sandboxStatus } from "@/lib/exec/sandbox";
import { decide } from "@/lib/policy/decide";
import type { FileChangeFacts, PolicyInput, PolicyRuleData, PolicyVerdict, SandboxGrants } from "@/lib/policy/types";
import type { BackupStore, ToolContext, ToolDefinition, Workspace } from "@/lib/tools/define-tool";
import { backupStoreFor } from "@/lib/backups/store";
import { loadRules } from "@/lib/policy/rule-store";
import { effectivePreset } from "@/lib/policy/preset-store";
import { commandsCaptured } from "@/lib/effects/command-effects";
import { rulesForPreset, type PresetName } from "@/lib/policy/presets";

/**
 * Pieces of the pipeline that other readers need exactly as the gateway uses them: the
 * read-only tool context of `subject` and `preview`, and the policy question for a call.
 */

/**
 * A context for `subject` and `preview`: backups can be read but not made, and nothing is noted
 * (a preview runs before a reviewer decided anything). Aborts after `timeoutMs` (default 10 s).
 */
export function readOnlyContext(callId: string, workspace: Workspace, timeoutMs = 10_000): ToolContext {
  const store = backupStoreFor(workspace.id, callId);
  const backups: BackupStore = {
    get: store.get,
    list: store.list,
    save: async () => {
      throw new Error("a preview must not make backups");
    },
    discard: async () => {},
  };
  return { callId, workspace, config: getConfig(), signal: AbortSignal.timeout(timeoutMs), note: () => {}, backups };
}

/**
 * Asks the policy about a call (runs nothing).
 * @param paths fenced workspace-relative paths; `command.cwd` the fenced absolute cwd (default
 *   root); `command.grants` what the call asks beyond the sandbox's defaults (`network: true`).
 * @param options.door the door the call came through: at "hook" Claude Code runs the command
 *   itself, so it is not boxed (`boxed: false` in the policy input), and with the person's own
 *   environment, which the gateway does not know (`envUnknown: true`: no variable has a known value).
 * @param options.cwdUnknown why the command's real working directory is not known (a hook call
 *   without a usable `cwd`): the policy then judges no relative path and asks with this reason.
 * @param options.preset the supervision preset to judge under (lib/policy/presets.ts); absent: the
 *   preset of `options.agentId`'s token, else the workspace's (lib/policy/preset-store.ts).
 * @param subject.change for file writes: the planned change, for a preset's large-change check.
 * @param options.sessionId the call's session (rules scoped to another session do not apply);
 *   the workspace is always `workspace`. `extraRules`: rules to decide with besides the stored
 *   ones (checking a grant before it is saved).
 * @returns the verdict with the deciding rule, the preset and, for commands, every part's decision. For
 *   run_command the sandbox is part of the question (`boxed`, `sandboxProblem`, `grants`), and
 *   whatever the rules say, the gateway never lets a command past without a reviewer when it
 *   would run unboxed because the sandbox is broken, or when it asks for the network itself
 *   (`reviewSandbox`). A rule's `network` grant holds only when it covers every part of the line.
 */
export async function askPolicy(
  tool: ToolDefinition,
  workspace: Workspace,
  subject: { paths: string[]; command?: { command: string; cwd?: string; grants?: SandboxGrants }; url?: string; change?: FileChangeFacts },
  options: { door?: "http" | "mcp" | "cli" | "hook" | "dashboard"; cwdUnknown?: string; preset?: PresetName; agentId?: string | null; sessionId?: string; extraRules?: PolicyRuleData[] } = {},
): Promise<PolicyVerdict> {
  const preset = options.preset ?? (await effectivePreset(workspace.id, options.agentId ?? null)).preset;
  const box = tool.risk === "exec" ? commandBox(options.door) : null;
  const grants = subject.command?.grants;
  // The command's environment (only commands need it; building it reads the process's own).
  const env = subject.command ? buildChildEnv(workspace.root) : {};
  // At the hook door Claude Code runs the command with its own environment: the limits our child
  // environment puts on git's repository search cannot be assumed there.
  if (subject.command && options.door === "hook") for (const name of Object.keys(gitDiscoveryLimits(workspace.root))) delete env[name];
  const input: PolicyInput = {
    tool: tool.name,
    risk: tool.risk,
    workspaceId: workspace.id,
    ...(options.sessionId && { sessionId: options.sessionId }),
    paths: subject.paths,
    workspaceRoot: workspace.root,
    ...(subject.command && {
      command: {
        command: subject.command.command,
        cwd: subject.command.cwd ?? workspace.root,
        workspaceRoot: workspace.root,
        env,
        ...(options.door === "hook" && { envUnknown: true }),
        ...(options.cwdUnknown && { cwdUnknown: options.cwdUnknown }),
      },
    }),
    ...(subject.url !== undefined && { url: subject.url }),
    ...(box && { boxed: box.boxed, ...(box.problem && { sandboxProblem: box.problem }) }),
    ...(grants && Object.values(grants).some(Boolean) && { grants }),
    ...(box?.boxed && { captured: commandsCaptured(workspace.root) }),
    ...(subject.change && { change: subject.change }),
    preset,
  };
  const stored = await loadRules();
  const rules = rulesForPreset(preset, options.extraRules ? [...stored, ...options.extraRules] : stored);
  const verdict = await decide(input, rules);
  return box ? reviewSandbox(narrowNetworkGrant(verdict, rules), input) : verdict;
}

/** Whether a command will be boxed, and why not when the sandbox should run but cannot. */
function commandBox(door: string | undefined): { boxed: boolean; problem?: string } {
  if (door === "hook") return { boxed: false };
  const status = sandboxStatus();
  if (status.available) return { boxed: true };
  if (status.mode === "off") return { boxed: false };
  return { boxed: false, problem: `${status.problems.join("; ")}. Fix: ${status.fix}` };
}

/**
 * The gateway's own floor under the policy for commands: a command that would run unboxed because
 * the sandbox is broken, or that asks for the network, is never allowed without a reviewer (an
 * "allow" becomes "ask"); the reason leads the reviewer's list either way. Deny stays deny.
 */
export function reviewSandbox(verdict: PolicyVerdict, input: PolicyInput): PolicyVerdict {
  const reasons: string[] = [];
  if (input.sandboxProblem) reasons.push(`runs unboxed, with the gateway's own rights: the sandbox is unavailable (${input.sandboxProblem})`);
  if (input.grants?.network) reasons.push("asks for network access (network: true): the command would reach the network from the sandbox");
  if (reasons.length === 0 || verdict.decision === "deny") return verdict;
  return { ...verdict, decision: "ask", reasons: [...reasons, ...verdict.reasons.filter((r) => !reasons.includes(r))] };
}

/**
 * A rule's `network: true` widens the box for a whole command line only when the rule that decided
 * every part of it grants it (a grant for `npm install *` must not reach the `curl` after `&&`).
 */
function narrowNetworkGrant(verdict: PolicyVerdict, rules: PolicyRuleData[]): PolicyVerdict {
  if (!verdict.options?.network) return verdict;
  const byId = new Map(rules.map((r) => [r.id, r]));
  const toolWide = rules.some((r) => r.enabled && r.tool === "run_command" && !r.command && !r.pathGlob && r.options?.network === true);
  const everyPart = (verdict.parts ?? []).length > 0 && verdict.parts!.every((p) => p.rule && byId.get(p.rule.id)?.options?.network === true);
  if (toolWide || everyPart) return verdict;
  const { network: _dropped, ...rest } = verdict.options;
  void _dropped;
  return { ...verdict, options: Object.keys(rest).length > 0 ? rest : undefined };
}
