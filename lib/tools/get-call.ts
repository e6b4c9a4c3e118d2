import { z } from "zod";
import { db } from "@/lib/db";
import { ToolError } from "@/lib/errors";
import { isFinal } from "@/lib/audit/calls";
import { waitForOutcome } from "@/lib/approvals/wait";
import { defineTool } from "@/lib/tools/define-tool";
import { heldEffectsOf } from "@/lib/effects/call-hooks";
import { HeldEffectsOutput } from "@/lib/tools/outputs";

const GetCallInput = z
  .object({
    call_id: z.string().min(1).max(100).describe("The call_id of an earlier call, e.g. from an approval_pending (601) error."),
    wait_ms: z
      .number()
      .int()
      .min(0)
      .max(120_000)
      .default(0)
      .describe("How long to wait (milliseconds) for the call to finish before answering; 0 answers at once."),
  })
  .strict();

/** JSON Schema source of get_call's `data`. */
const GetCallOutput = z.looseObject({
  call_id: z.string(),
  tool: z.string(),
  status: z.string().describe("pending, approved, running, succeeded, failed, conflict, rejected, expired, denied, interrupted or withdrawn."),
  decision: z.string().nullable(),
  created_at: z.string(),
  result: z
    .looseObject({ ok: z.boolean(), call_id: z.string().nullable() })
    .nullable()
    .describe("The envelope the original call returns once it has finished ({ok, call_id, data} or {ok: false, error}), else null."),
  held_effects: HeldEffectsOutput.nullable().describe(
    "Set while a run_command's file changes are held for a reviewer (status pending): what they must decide, the changed files and why it is held. Null otherwise.",
  ),
});

/**
 * get_call: the status and, once finished, the result envelope of an earlier call of the same
 * agent token. This is how an agent collects the outcome of a call that waited for approval
 * (once its own request stopped waiting). Another agent's call answers `not_found`. A run_command
 * whose file changes are held for a reviewer stays "pending" with no result here, and says so in
 * `held_effects` (the decision asked of the reviewer, the files, the dangers named: see
 * lib/effects/call-hooks.ts `heldEffectsOf`); `wait_ms` waits for the decision on them (the held
 * result itself was the command's own answer; state machine: lib/approvals/wait.ts).
 */
export const getCallTool = defineTool({
  name: "get_call",
  title: "Get the outcome of an earlier call",
  description:
    "Returns the status of an earlier tool call made with your token and, once it has finished, the exact result it produced. " +
    "Use it after a call answered approval_pending (error code 601): pass its call_id and optionally wait_ms " +
    "to wait for the reviewer. status is one of pending, running, succeeded, failed, conflict, rejected, expired, denied, interrupted; " +
    "result is the envelope the original call returns ({ok, call_id, data} or {ok: false, error}). " +
    "held_effects is set while a run_command already ran but its file changes wait for a reviewer (the files and why they are held); the workspace is unchanged until they decide.",
  input: GetCallInput,
  risk: "read",
  output: GetCallOutput,
  subject: () => ({}),
  async run(args, ctx) {
    // An agent reads only its own calls (the agent of this get_call); another agent's call
    // answers not_found, so its existence is not confirmed either.
    const self = await db().toolCall.findUnique({ where: { id: ctx.callId }, select: { agentId: true } });
    const row = await db().toolCall.findFirst({
      where: { id: args.call_id, workspaceId: ctx.workspace.id, agentId: self?.agentId ?? null },
      select: { id: true, tool: true, status: true, decision: true, createdAt: true },
    });
    if (!row) throw new ToolError("not_found", `No call ${args.call_id} of yours in this workspace.`, { call_id: args.call_id });
    const result = isFinal(row.status) || args.wait_ms > 0 ? await waitForOutcome(row.id, args.wait_ms, ctx.signal) : null;
    const now = await db().toolCall.findUnique({ where: { id: row.id }, select: { status: true } });
    const status = now?.status ?? row.status;
    const held = status === "pending" ? await heldEffectsOf(row.id) : null;
    ctx.note({ target: row.id, summary: `${row.tool} → ${status}${held ? " (file changes held for a reviewer)" : ""}` });
    return {
      call_id: row.id,
      tool: row.tool,
      status,
      decision: row.decision,
      created_at: row.createdAt.toISOString(),
      result,
      held_effects: held,
    };
  },
});
