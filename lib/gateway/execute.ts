import { getConfig } from "@/lib/config";
import { callStatusOf, toErrorBody, ToolError } from "@/lib/errors";
import { redactToolAnswer } from "@/lib/redact";
import { failure, success, type Envelope } from "@/lib/result";
import { finishCall } from "@/lib/audit/calls";
import { backupStoreFor } from "@/lib/backups/store";
import { callRuleOptions, loadRules } from "@/lib/policy/rule-store";
import type { PresetName, RuleOptions } from "@/lib/policy/types";
import type { AuditNotes, ToolContext, ToolDefinition, Workspace } from "@/lib/tools/define-tool";

/** Aborted when the server shuts down, so long-running tools stop (commands are killed). */
const globalForShutdown = globalThis as unknown as { agentReachShutdown?: AbortController };
export function shutdownSignal(): AbortSignal {
  globalForShutdown.agentReachShutdown ??= new AbortController();
  return globalForShutdown.agentReachShutdown.signal;
}

/**
 * Runs a call that is already in status "running" and stores its outcome.
 * Used for allowed calls and for approved ones (`queuedTargetSha256` then carries the target's
 * hash at queue time, so a write refuses with `conflict` when the file changed since).
 * @returns the envelope the agent receives. Never throws for a tool failure: `ToolError` becomes
 *   its error body, anything else `internal` (logged to the server console, not returned).
 */
export async function executeCall(input: {
  callId: string;
  tool: ToolDefinition;
  args: unknown;
  workspace: Workspace;
  notes: AuditNotes;
  actor: string;
  queuedTargetSha256?: string | null;
  /** The options of the rule that decided the call, when the caller has the verdict at hand (saves a read). */
  ruleOptions?: RuleOptions | null;
  /** The preset the call was judged under (its verdict's `preset`); absent: the tool applies the strictest checks. */
  preset?: PresetName;
  /** The policy allowed the call without asking (not an approved call): ToolContext.allowedWithoutAsking. */
  allowedWithoutAsking?: boolean;
}): Promise<Envelope> {
  const { callId, tool, workspace } = input;
  const notes: AuditNotes = { ...input.notes };
  const startedAt = new Date();
  const ruleOptions = input.ruleOptions !== undefined ? input.ruleOptions : await callRuleOptions(callId);
  const ctx: ToolContext = {
    callId,
    workspace,
    config: getConfig(),
    signal: shutdownSignal(),
    note: (n) => Object.assign(notes, n),
    backups: backupStoreFor(workspace.id, callId),
    ...(input.queuedTargetSha256 !== undefined && { queuedTargetSha256: input.queuedTargetSha256 }),
    ...(ruleOptions && { ruleOptions }),
    ...(input.preset && { preset: input.preset }),
    ...(input.allowedWithoutAsking && { allowedWithoutAsking: true }),
    policyRules: await loadRules(),
  };
  let envelope: Envelope;
  let status: "succeeded" | "failed" | "conflict" | "rejected";
  try {
    const data = await tool.run(input.args, ctx);
    // Every answer, of every tool, success or error, passes the same redaction (lib/redact.ts
    // redactToolAnswer): known credential formats and this server's own secrets masked, unless a
    // policy rule relaxed masking for this call (`redact: false`), which still masks the gateway's
    // own credentials. The stored copy is always redacted, by storedJson.
    envelope = success(callId, redactToolAnswer(data, ruleOptions?.redact === false));
    status = "succeeded";
  } catch (err) {
    if (!(err instanceof ToolError)) console.error(`[agent-reach] ${tool.name} ${callId} failed:`, err);
    const body = redactToolAnswer(toErrorBody(err), ruleOptions?.redact === false);
    envelope = failure(callId, body);
    status = callStatusOf(body.name);
  }
  const bytesOut = Buffer.byteLength(JSON.stringify(envelope));
  await finishCall(callId, ["running"], status, envelope, {
    actor: input.actor,
    notes: { ...notes, bytesOut: notes.bytesOut ?? bytesOut },
    startedAt,
  });
  return envelope;
}
