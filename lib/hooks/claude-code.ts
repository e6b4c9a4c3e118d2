import { z } from "zod";
import { getConfig } from "@/lib/config";
import { errorBody, toErrorBody, ToolError } from "@/lib/errors";
import { decideCall, type Caller } from "@/lib/gateway/call-tool";
import { finishCall } from "@/lib/audit/calls";
import { decisionColumn } from "@/lib/audit/record";
import { waitForOutcome } from "@/lib/approvals/wait";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { AgentIdentity } from "@/lib/auth/tokens";
import { failure, success, type Envelope } from "@/lib/result";
import { applyEdit } from "@/lib/workspace/edit-text";
import { openForRead, resolveInWorkspace } from "@/lib/workspace/fence";
import { loadRules } from "@/lib/policy/rule-store";
import { sensitivePathRule } from "@/lib/policy/rule-match";
import { editableText } from "@/lib/workspace/text";

/**
 * Claude Code's PreToolUse hook as a supervised external call (door "hook"). Claude Code runs its
 * own tools; before each one it hands us the call, and we answer allow / deny / ask. The call is
 * mapped onto the registry tool with the same risk (Bash → run_command on the command and cwd,
 * Write → write_file, Edit and MultiEdit → edit_file, Read → read_file, WebFetch → fetch_url), so
 * the same fence, policy, approval queue and audit log decide it — but it is never executed here
 * (`decideCall` only, carried out by the agent). Formats: Claude Code hooks reference, "PreToolUse" input
 * and "PreToolUse decision control" output.
 */

/** The PreToolUse payload Claude Code writes on the hook's stdin. Unknown fields are ignored. */
export const PreToolUsePayload = z.looseObject({
  session_id: z.string().optional(),
  transcript_path: z.string().optional(),
  cwd: z.string().optional(),
  permission_mode: z.string().optional(),
  hook_event_name: z.literal("PreToolUse"),
  tool_name: z.string().min(1),
  tool_input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().optional(),
});
export type PreToolUsePayload = z.infer<typeof PreToolUsePayload>;

/** Claude Code's `permissionDecision` values we use. */
export type PermissionDecision = "allow" | "deny" | "ask";

/** What the hook answers, with the audit facts behind it. */
export interface HookVerdict {
  /** null: not a tool we supervise; Claude Code's own permission flow applies. */
  decision: PermissionDecision | null;
  /** Shown to the model on deny, to the user on ask. */
  reason: string;
  /** The audit call, or null when nothing was recorded (unmapped tool). */
  call_id: string | null;
  /** The registry tool the call was decided as, e.g. "run_command". */
  tool: string | null;
  /** The gateway's envelope for the call. */
  result: Envelope | null;
  /** The exact JSON the hook prints on stdout (`{}` when decision is null). */
  hook_output: Record<string, unknown>;
}

export interface HookOptions {
  /** How long to wait for a reviewer when the policy asks (ms; bounded by the gateway). */
  waitMs: number;
  /** When no reviewer decided in time: deny (default) or hand the question to the user ("ask"). */
  onTimeout: "deny" | "ask";
  signal?: AbortSignal;
}

/**
 * Decides one PreToolUse call: maps it, runs it through the gateway in decide-only mode
 * (recorded, fenced, policy, approval wait) and turns the envelope into a hook decision:
 * success → allow; `approval_expired` → deny or ask (`onTimeout`); any other failure
 * (policy_denied, approval_rejected, path_outside_workspace, invalid_arguments, …) → deny with
 * the gateway's message. Never throws for anything Claude Code can send.
 * @param agent the agent whose token the hook used.
 * @param payload a parsed PreToolUse payload.
 */
export async function decideClaudeCodeHook(agent: AgentIdentity, payload: PreToolUsePayload, options: HookOptions): Promise<HookVerdict> {
  const mapped = await mapClaudeCodeCall(payload);
  if (!mapped) {
    return verdict(null, `Agent Reach does not supervise ${payload.tool_name}; Claude Code's own permissions apply.`, null, null);
  }
  const description = typeof payload.tool_input.description === "string" ? payload.tool_input.description : undefined;
  const caller: Caller = {
    door: "hook",
    agent,
    sessionKey: payload.session_id ?? null,
    ...(description !== undefined && { description }),
    ...(mapped.cwdUnknown && { cwdUnknown: mapped.cwdUnknown }),
  };
  const envelope = await decideOnly(caller, mapped.tool, mapped.args, options);
  const ref = envelope.call_id ? ` (Agent Reach call ${envelope.call_id})` : "";
  if (envelope.ok) {
    const data = envelope.data as { decision?: string; reviewer?: string; rule?: { id: string } | null };
    const why =
      data.decision === "approved"
        ? `approved by reviewer ${data.reviewer ?? "(unknown)"}`
        : `allowed by policy${data.rule ? ` rule ${data.rule.id}` : ""}`;
    return verdict("allow", `Agent Reach: ${why}${ref}.`, mapped.tool, envelope);
  }
  const { name, message } = envelope.error;
  if (name === "approval_expired" && options.onTimeout === "ask") {
    return verdict("ask", `Agent Reach: ${message} Decide here instead${ref}.`, mapped.tool, envelope);
  }
  return verdict("deny", `Agent Reach denied this ${payload.tool_name} call (${name}): ${message}${ref}`, mapped.tool, envelope);
}

/**
 * The gateway's first half only (`decideCall`): Claude Code's own tool carries the call out. An
 * allowed call finishes "succeeded" with data `{executed: false, decision: "allow", …}`; a queued
 * one waits up to `waitMs` for a reviewer (approving it runs nothing here: the executor finishes
 * it with `{executed: false, decision: "approved", …}`), and one still undecided then expires at
 * once (603), since nobody will collect it later.
 * @returns the envelope the hook decision is made from. Never throws for a database failure
 *   (503 `unavailable`).
 */
async function decideOnly(caller: Caller, tool: string, args: Record<string, unknown>, options: HookOptions): Promise<Envelope> {
  const waitMs = Math.max(0, Math.min(options.waitMs, getConfig().approvalWaitMaxMs));
  try {
    const decision = await decideCall(caller, tool, args, { carriedOutBy: "agent", expiresInMs: waitMs });
    switch (decision.kind) {
      case "finished":
        return decision.envelope;
      case "allowed": {
        const { callId, verdict } = decision;
        const envelope = success(callId, { executed: false, decision: "allow", reasons: verdict.reasons, rule: verdict.rule });
        await decision.run.receipt.with(() =>
          finishCall(callId, ["received"], "succeeded", envelope, {
            actor: "system",
            notes: decision.run.notes,
            extra: { decision: verdict.decision, decisionJson: decisionColumn.encode(verdict) },
          }),
        );
        return envelope;
      }
      case "approved":
      case "queued":
        return (await waitForOutcome(decision.callId, waitMs, options.signal)) ?? (await expireUndecided(decision.callId, waitMs));
    }
  } catch (err) {
    const body = toErrorBody(err);
    if (body.name !== "unavailable") throw err;
    return failure(null, body);
  }
}

/**
 * Ends a hook call nobody decided within `waitMs` as "expired" (603). When a reviewer decided in
 * the same instant (the conditional update lost), that decision's envelope is returned instead.
 */
async function expireUndecided(callId: string, waitMs: number): Promise<Envelope> {
  const envelope = failure(
    callId,
    errorBody("approval_expired", `No reviewer decided within ${Math.round(waitMs / 1000)} s; the call was not approved.`, {
      call_id: callId,
      waited_ms: waitMs,
    }),
  );
  if (await finishCall(callId, ["pending"], "expired", envelope, { actor: "system", extra: { decidedAt: new Date() } })) return envelope;
  return (await waitForOutcome(callId, 5000)) ?? envelope;
}

/**
 * The registry tool and arguments a Claude Code tool call is decided as, or null for tools
 * Agent Reach has no counterpart for (Glob, Grep, Task, MCP tools, …). Paths are passed as Claude
 * Code sends them (absolute) and fenced by the gateway; argument values are not checked here, so
 * a malformed call is recorded and answered by the tool's own schema (invalid_arguments → deny).
 * MultiEdit becomes one edit_file whose old/new strings are the file before and after all its
 * edits (computed with edit_file's own matching), so the reviewer sees the combined diff.
 * Bash runs in the payload's `cwd`; when that is absent or outside the workspace the command's
 * directory is not known, so it is left out of the arguments and `cwdUnknown` says why (the
 * policy then asks rather than judging relative paths from the workspace root).
 */
export async function mapClaudeCodeCall(
  payload: PreToolUsePayload,
): Promise<{ tool: string; args: Record<string, unknown>; cwdUnknown?: string } | null> {
  const input = payload.tool_input;
  switch (payload.tool_name) {
    case "Bash": {
      const cwdUnknown = await bashCwdProblem(payload.cwd);
      if (cwdUnknown) return { tool: "run_command", args: { command: input.command }, cwdUnknown };
      return { tool: "run_command", args: { command: input.command, cwd: payload.cwd } };
    }
    case "Write":
      return { tool: "write_file", args: { path: input.file_path, content: input.content } };
    case "Edit":
      return { tool: "edit_file", args: editArgs(input.file_path, input) };
    case "MultiEdit":
      return { tool: "edit_file", args: await multiEditArgs(input.file_path, input.edits) };
    case "Read":
      return { tool: "read_file", args: { path: input.file_path } };
    case "WebFetch":
      return { tool: "fetch_url", args: { url: input.url } };
    default:
      return null;
  }
}

/**
 * Why a Bash call's `cwd` cannot stand for the directory the command runs in, or null when it is
 * a path inside the workspace (one that is not a directory is refused later by the fence).
 */
async function bashCwdProblem(cwd: string | undefined): Promise<string | null> {
  if (cwd === undefined || cwd === "") return "the hook call names no working directory (cwd), so Claude Code's real one is unknown";
  if (!cwd.startsWith("/")) return `the hook call's working directory ${JSON.stringify(cwd)} is not an absolute path`;
  try {
    await resolveInWorkspace(await currentWorkspace(), cwd);
    return null;
  } catch (err) {
    if (err instanceof ToolError && err.errorName === "path_outside_workspace") return `the hook call's working directory ${cwd} is outside the workspace`;
    if (err instanceof ToolError) return null;
    throw err;
  }
}

function editArgs(path: unknown, edit: Record<string, unknown>): Record<string, unknown> {
  return {
    path,
    old_string: edit.old_string,
    new_string: edit.new_string,
    ...(edit.replace_all !== undefined && { replace_all: edit.replace_all }),
  };
}

/**
 * One edit_file equivalent of a MultiEdit: the whole text before and after applying its edits in
 * order. When that cannot be computed (path outside the workspace, missing or binary file, an edit
 * that does not match), or the file may not be read unasked (a sensitive path, a hard-linked file:
 * its bytes would land in the call's record before any decision), the first edit stands for the call, so the gateway records it and answers
 * with its own error or, for a queued call, shows the reviewer why no diff could be made.
 */
async function multiEditArgs(path: unknown, edits: unknown): Promise<Record<string, unknown>> {
  const list = Array.isArray(edits) ? (edits as Record<string, unknown>[]) : [];
  const first = editArgs(path, list[0] ?? {});
  if (list.length < 2 || typeof path !== "string") return first;
  try {
    const workspace = await currentWorkspace();
    const fenced = await resolveInWorkspace(workspace, path);
    // The file is read here before any decision: only when reading it would not ask (a secret's
    // bytes must never reach the call's record unasked), and never a file with other names (hard links).
    const rules = await loadRules();
    if (sensitivePathRule(fenced.relative, rules) || (fenced.raw !== fenced.relative && sensitivePathRule(fenced.raw.replace(/^\/+/, ""), rules))) return first;
    const handle = await openForRead(workspace, fenced);
    if (handle.statNow().nlink > 1) {
      await handle.close();
      return first;
    }
    const bytes = await handle.readFile().finally(() => handle.close());
    const before = editableText(bytes);
    let doc = before;
    for (const edit of list) {
      const text = applyEdit(doc, {
        path: fenced.relative,
        oldString: String(edit.old_string ?? ""),
        newString: String(edit.new_string ?? ""),
        replaceAll: edit.replace_all === true,
      }).text;
      doc = editableText(doc.toBytes(text));
    }
    return { path, old_string: before.toDisplay(before.text), new_string: doc.toDisplay(doc.text) };
  } catch (err) {
    if (err instanceof ToolError) return first;
    throw err;
  }
}

function verdict(decision: PermissionDecision | null, reason: string, tool: string | null, result: Envelope | null): HookVerdict {
  return {
    decision,
    reason,
    call_id: result?.call_id ?? null,
    tool,
    result,
    hook_output: decision ? hookOutput(decision, reason) : {},
  };
}

/**
 * The PreToolUse decision JSON Claude Code reads from the hook's stdout (exit status 0):
 * `{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision, permissionDecisionReason}}`.
 */
export function hookOutput(decision: PermissionDecision, reason: string): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: reason } };
}
