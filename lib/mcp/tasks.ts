import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { withdrawCall } from "@/lib/approvals/wait";
import { heldEffectsView, heldSummaryOf } from "@/lib/effects/call-hooks";
import { toCallToolResult } from "@/lib/mcp/tool-mapping";
import type { Envelope } from "@/lib/result";

/**
 * MCP Tasks (spec 2025-11-25, "Utilities → Tasks", experimental) over the approval queue.
 *
 * A tool call a client sends with `params.task` is answered at once with a task whose id is the
 * call's id; the task is a view of the call's audit row, so it survives restarts and any gateway
 * instance can answer `tasks/get`, `tasks/result` and `tasks/cancel` (the transport is stateless):
 *
 *   call status                      task status     status message
 *   received, pending                working         waits for a reviewer; link to the approval
 *   pending, its file changes held   input_required  the command ran; what the reviewer must
 *     (run_command)                                  decide (counts, files, dangers), the link
 *   approved, running                working       approved by …; running
 *   succeeded                        completed
 *   rejected as withdrawn            cancelled     (602, detail.reason "withdrawn")
 *   failed, conflict, rejected,      failed        our error (name, code, message)
 *   expired, denied, interrupted
 *
 * The task's result (`tasks/result`) is the call's envelope as a tool result (lib/mcp/tool-mapping.ts),
 * exactly what the call would have answered without a task. Cancelling a task withdraws the
 * pending call (lib/approvals/wait.ts `withdrawCall`: it ends rejected, 602 with `detail.reason`
 * "withdrawn", recorded as the agent's act); a call already approved or running cannot be
 * cancelled any more (the request fails with the reason).
 *
 * `input_required` is the status MCP defines for a task that waits for a person. The SDK client
 * then calls `tasks/result`, which this server answers once the reviewer decided (the SDK's handler
 * blocks, re-reading the task every poll interval): a client should give that request a timeout
 * longer than a review may take, or keep polling `tasks/get` instead.
 *
 * Tasks are scoped to the agent token: an agent sees and cancels only its own calls.
 */

/** How often a client should poll `tasks/get` (ms), announced on every task. */
export const TASK_POLL_INTERVAL_MS = 2000;

type CallRow = {
  id: string;
  status: string;
  createdAt: Date;
  decidedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  reviewer: string | null;
  errorName: string | null;
  errorCode: number | null;
  resultJson: string | null;
  decisionJson: string | null;
  pendingJson: string | null;
  tool: string;
};

const SELECT = {
  id: true,
  status: true,
  createdAt: true,
  decidedAt: true,
  startedAt: true,
  finishedAt: true,
  reviewer: true,
  errorName: true,
  errorCode: true,
  resultJson: true,
  decisionJson: true,
  pendingJson: true,
  tool: true,
} as const;

/** True when a finished call's envelope says its agent withdrew it (a cancelled task). */
function wasWithdrawn(row: Pick<CallRow, "status" | "resultJson">): boolean {
  if (row.status !== "rejected" || !row.resultJson) return false;
  try {
    const envelope = JSON.parse(row.resultJson) as Envelope;
    return !envelope.ok && envelope.error.detail?.reason === "withdrawn";
  } catch {
    return false;
  }
}

/**
 * The MCP task status that stands for a call status (`withdrawn`: the agent withdrew it;
 * `heldEffects`: a pending call whose command already ran and whose file changes wait for a
 * reviewer: `input_required`).
 */
export function taskStatusOf(callStatus: string, withdrawn = false, heldEffects = false): Task["status"] {
  if (withdrawn) return "cancelled";
  if (heldEffects && callStatus === "pending") return "input_required";
  switch (callStatus) {
    case "received":
    case "pending":
    case "approved":
    case "running":
      return "working";
    case "succeeded":
      return "completed";
    default:
      return "failed";
  }
}

/** The address of a call in the dashboard (where a reviewer approves or rejects it). */
export function approvalUrl(callId: string): string {
  return `${getConfig().publicUrl}/approvals?call=${encodeURIComponent(callId)}`;
}

function statusMessage(row: CallRow): string {
  switch (row.status) {
    case "received":
      return `Call ${row.id} (${row.tool}) was received and is being checked.`;
    case "pending": {
      const held = heldSummaryOf(row.pendingJson);
      if (held) return heldEffectsView(row.id, held).summary.slice(0, 1500);
      let reasons: string[] = [];
      try {
        reasons = (JSON.parse(row.decisionJson ?? "{}") as { reasons?: string[] }).reasons ?? [];
      } catch {
        /* no reasons to show */
      }
      const why = reasons.length ? ` Policy: ${reasons.join("; ").slice(0, 300)}.` : "";
      return `Waiting for a reviewer to approve or reject ${row.tool} call ${row.id}: ${approvalUrl(row.id)}.${why}`;
    }
    case "approved":
      return `Approved by ${row.reviewer ?? "a reviewer"}; starting.`;
    case "running":
      return row.reviewer ? `Approved by ${row.reviewer}; running.` : "Running.";
    case "succeeded":
      return "Completed.";
    default: {
      let message = "";
      try {
        const envelope = JSON.parse(row.resultJson ?? "null") as Envelope | null;
        if (envelope && !envelope.ok) message = envelope.error.message;
      } catch {
        /* no message */
      }
      return `${row.errorName ?? row.status} (${row.errorCode ?? "?"}): ${message}`.slice(0, 500);
    }
  }
}

/** A call's row as an MCP task. */
export function taskOf(row: CallRow): Task {
  const times = [row.createdAt, row.decidedAt, row.startedAt, row.finishedAt].filter((d): d is Date => d !== null);
  const lastUpdated = new Date(Math.max(...times.map((d) => d.getTime())));
  return {
    taskId: row.id,
    status: taskStatusOf(row.status, wasWithdrawn(row), row.status === "pending" && heldSummaryOf(row.pendingJson) !== null),
    statusMessage: statusMessage(row),
    createdAt: row.createdAt.toISOString(),
    lastUpdatedAt: lastUpdated.toISOString(),
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/** The call behind a task, if it belongs to this agent. */
async function ownCall(taskId: string, agentId: string | null): Promise<CallRow | null> {
  const row = await db().toolCall.findFirst({ where: { id: taskId, agentId }, select: SELECT });
  return row;
}

/** Page size of `tasks/list`. */
const LIST_PAGE = 50;

/**
 * The SDK's `TaskStore` for one agent, backed by the audit log. Tasks are never created through
 * the store (the pipeline records the call; the tools/call handler answers with `taskOf` it), and
 * results are never stored through it (the call's row holds its envelope).
 * @param agentId the authenticated agent (null: anonymous calls).
 */
export function callTaskStore(agentId: string | null): TaskStore {
  return {
    async createTask() {
      throw new Error("tasks are created by tool calls");
    },
    async getTask(taskId) {
      const row = await ownCall(taskId, agentId);
      return row ? taskOf(row) : null;
    },
    async storeTaskResult() {
      throw new Error("task results are the calls' own envelopes");
    },
    async getTaskResult(taskId): Promise<Result> {
      const row = await ownCall(taskId, agentId);
      if (!row?.resultJson) throw new Error(`Task ${taskId} has no result yet.`);
      return toCallToolResult(JSON.parse(row.resultJson) as Envelope) as CallToolResult;
    },
    async updateTaskStatus(taskId, status) {
      if (status !== "cancelled") throw new Error(`A task's status follows its call; it cannot be set to ${status}.`);
      if (!(await ownCall(taskId, agentId))) throw new Error(`Task not found: ${taskId}`);
      const actor = agentId ? `agent:${agentId}` : "agent:anonymous";
      if (!(await withdrawCall(taskId, "the agent cancelled the MCP task", actor))) {
        const now = await db().toolCall.findUnique({ where: { id: taskId }, select: { status: true } });
        throw new Error(`Only a call still waiting for a reviewer can be withdrawn; this one is ${now?.status ?? "unknown"}.`);
      }
    },
    async listTasks(cursor) {
      const offset = cursor && /^\d{1,9}$/.test(cursor) ? Number(cursor) : 0;
      const rows = await db().toolCall.findMany({
        where: { agentId, door: "mcp" },
        orderBy: { createdAt: "desc" },
        skip: offset,
        take: LIST_PAGE + 1,
        select: SELECT,
      });
      const page = rows.slice(0, LIST_PAGE).map(taskOf);
      return { tasks: page, ...(rows.length > LIST_PAGE && { nextCursor: String(offset + LIST_PAGE) }) };
    },
  };
}
