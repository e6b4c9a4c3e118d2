import { db } from "@/lib/db";
import { toErrorBody } from "@/lib/errors";
import { listPending, type DecisionResult, type PendingCallView } from "@/lib/approvals/queue";
import { readOnlyContext } from "@/lib/gateway/contexts";
import { currentWorkspace } from "@/lib/gateway/workspace";
import { getTool } from "@/lib/tools/registry";
import type { ToolPreview } from "@/lib/tools/define-tool";
import { targetState, type TargetState } from "@/lib/dashboard/files";
import { argsColumn, pendingColumn } from "@/lib/audit/record";

/**
 * Reads for the approvals inbox: the pending calls of lib/approvals/queue.ts plus what a reviewer
 * needs beside them: who asked (agent, session), whether the target file changed since the diff
 * was computed, and, for a write_file, the exact proposed content to edit.
 */

/** One pending call as the inbox shows it. */
export interface InboxItem extends PendingCallView {
  agentName: string | null;
  door: string;
  /** For calls about one file (preview.path): that file's state now. */
  target: TargetState | null;
  /** For run_command: the command exactly as it will run and its cwd argument (null = root). */
  command: { command: string; cwd: string | null } | null;
  /** A decide-only call (a hook): the agent's own tool carries it out once approved; not editable. */
  external: boolean;
  /** For write_file: the content that will be written (editable before approving). */
  proposedContent: string | null;
}

/** Pending calls, oldest first, with agent names and target state. */
export async function loadInbox(): Promise<{ items: InboxItem[]; workspaceRoot: string }> {
  const [pending, workspace] = await Promise.all([listPending(), currentWorkspace()]);
  const calls = await db().toolCall.findMany({
    where: { id: { in: pending.map((p) => p.call_id) } },
    select: { id: true, door: true, pendingJson: true },
  });
  const doors = new Map(calls.map((c) => [c.id, c.door]));
  const external = new Set(calls.filter((c) => pendingColumn.decode(c.pendingJson)?.external === true).map((c) => c.id));
  const agentIds = [...new Set(pending.map((p) => p.agent_id).filter((id): id is string => id !== null))];
  const agents = await db().agent.findMany({ where: { id: { in: agentIds } }, select: { id: true, name: true } });
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const items = await Promise.all(
    pending.map(async (p): Promise<InboxItem> => {
      const args = (p.args ?? {}) as Record<string, unknown>;
      return {
        ...p,
        agentName: p.agent_id ? (names.get(p.agent_id) ?? null) : null,
        door: doors.get(p.call_id) ?? "unknown",
        target: await targetState(workspace, p.preview),
        command: p.tool === "run_command" && typeof args.command === "string" ? { command: args.command, cwd: typeof args.cwd === "string" ? args.cwd : null } : null,
        external: external.has(p.call_id),
        proposedContent: p.tool === "write_file" && !external.has(p.call_id) && typeof args.content === "string" ? args.content : null,
      };
    }),
  );
  return { items, workspaceRoot: workspace.root };
}

/** Number of calls waiting for a reviewer. */
export async function countPending(): Promise<number> {
  return db().toolCall.count({ where: { status: "pending" } });
}

/** Outcome of previewing a reviewer's edit. */
export type EditPreview = { ok: true; preview: ToolPreview } | { ok: false; message: string };

/**
 * The diff a pending write_file would make with `content` instead of the agent's content,
 * computed by the tool's own preview (same encoding, BOM and line-ending rules as the write).
 * Writes nothing.
 * @returns the preview, or a message when the call is not a pending write_file or the content
 *   would be refused (e.g. `encoding_unsupported`).
 */
export async function previewEditedWrite(callId: string, content: string): Promise<EditPreview> {
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { tool: true, status: true, execArgsJson: true } });
  if (!row || row.status !== "pending" || !row.execArgsJson) return { ok: false, message: "This call is not waiting for approval any more." };
  const tool = getTool(row.tool);
  if (row.tool !== "write_file" || !tool?.preview) return { ok: false, message: "Only a write_file call can be edited before approval." };
  const parsed = tool.input.safeParse({ ...argsColumn.decode(row.execArgsJson), content });
  if (!parsed.success) return { ok: false, message: "The edited arguments are not valid for write_file." };
  try {
    return { ok: true, preview: await tool.preview(parsed.data, readOnlyContext(callId, await currentWorkspace())) };
  } catch (err) {
    return { ok: false, message: toErrorBody(err).message };
  }
}

/** What the inbox tells the reviewer after a decision. */
export interface DecisionOutcome {
  /** False when the decision was refused or the approved call then failed. */
  ok: boolean;
  callId: string;
  /** The call's status afterwards, when known. */
  status: string | null;
  message: string;
}

/**
 * Turns the queue's answer to a decision into one sentence for the reviewer, e.g. "Approved: the
 * call ran and succeeded." or "Approved, but the call ended with conflict (605): The file …".
 */
export function describeDecision(callId: string, result: DecisionResult, verb: "Approved" | "Rejected"): DecisionOutcome {
  if (!result.ok) {
    const reason = result.error.detail.reason === "already_decided" ? "it was already decided" : result.error.message;
    return { ok: false, callId, status: typeof result.error.detail.status === "string" ? result.error.detail.status : null, message: `Not ${verb.toLowerCase()}: ${reason}` };
  }
  if (verb === "Rejected") return { ok: true, callId, status: result.status, message: "Rejected; the agent was told why." };
  if (result.envelope === null) return { ok: true, callId, status: result.status, message: "Approved; the instance that serves this workspace will run it." };
  if (result.envelope.ok) return { ok: true, callId, status: result.status, message: `Approved: the call ran and ${result.status}.` };
  const error = result.envelope.error;
  return { ok: false, callId, status: result.status, message: `Approved, but the call ended with ${error.name} (${error.code}): ${error.message}` };
}
