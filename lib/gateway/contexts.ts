import { getConfig } from "@/lib/config";
import { buildChildEnv, gitDiscoveryLimits } from "@/lib/exec/child-env";
import { decide } from "@/lib/policy/decide";
import type { PolicyInput, PolicyVerdict } from "@/lib/policy/types";
import type { BackupStore, ToolContext, ToolDefinition, Workspace } from "@/lib/tools/define-tool";
import { backupStoreFor } from "@/lib/backups/store";
import { loadRules } from "@/lib/gateway/rules";

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
  };
  return { callId, workspace, config: getConfig(), signal: AbortSignal.timeout(timeoutMs), note: () => {}, backups };
}

/**
 * Asks the policy about a call (runs nothing).
 * @param paths fenced workspace-relative paths; `command.cwd` the fenced absolute cwd (default root).
 * @param subject.boxed the command will run inside the OS sandbox (absent: it will not, the
 *   conservative answer); `sandboxProblem` why the sandbox is unavailable (every command asks);
 *   `network` the call asks for the network inside the box; `externalRunner` another program
 *   runs the command with its own environment, so the limits our child environment sets on git's
 *   repository search cannot be assumed. See PolicyInput.
 * @returns the verdict with the deciding rule, risk labels and, for commands, every part's decision.
 */
export async function askPolicy(
  tool: ToolDefinition,
  workspace: Workspace,
  subject: {
    paths: string[];
    command?: { command: string; cwd?: string };
    url?: string;
    boxed?: boolean;
    sandboxProblem?: string;
    network?: boolean;
    /** Another program runs the command with its own environment (the Claude Code hook door). */
    externalRunner?: boolean;
  },
): Promise<PolicyVerdict> {
  const input: PolicyInput = {
    tool: tool.name,
    risk: tool.risk,
    paths: subject.paths,
    workspaceRoot: workspace.root,
    boxed: subject.boxed ?? false,
    ...(subject.sandboxProblem && { sandboxProblem: subject.sandboxProblem }),
    ...(subject.network && { network: true }),
    ...(subject.command && {
      command: {
        command: subject.command.command,
        cwd: subject.command.cwd ?? workspace.root,
        workspaceRoot: workspace.root,
        env: subject.externalRunner ? withoutGitLimits(buildChildEnv(workspace.root), workspace.root) : buildChildEnv(workspace.root),
      },
    }),
    ...(subject.url !== undefined && { url: subject.url }),
  };
  return decide(input, await loadRules());
}

/** The child environment without the variables that limit git's repository search (child-env.ts `gitDiscoveryLimits`). */
function withoutGitLimits(env: Record<string, string>, workspaceRoot: string): Record<string, string> {
  const out = { ...env };
  for (const name of Object.keys(gitDiscoveryLimits(workspaceRoot))) delete out[name];
  return out;
}
