import { z } from "zod";
import { db } from "@/lib/db";
import { ToolError } from "@/lib/errors";
import { executeUndo, planRevert, previewUndo } from "@/lib/effects/revert";
import { defineTool } from "@/lib/tools/define-tool";
import { RevertResultOutput } from "@/lib/tools/outputs";

/**
 * revert_call: undoes one call's file changes, whichever tool made them (write_file, edit_file,
 * restore_backup, run_command, revert_call), byte for byte and mode for mode, through
 * lib/effects/revert.ts. A file changed since the call is a conflict: nothing is overwritten and
 * nothing changes. The revert backs up what it replaces, so it can itself be reverted.
 */

export const RevertCallInput = z
  .object({
    call_id: z.string().min(1).max(200).describe("The call whose file changes to undo (a call_id from write_file, edit_file, restore_backup, run_command or revert_call)."),
  })
  .strict();

/** The paths a revert touches, for the fence and the policy (at most this many are checked). */
const SUBJECT_PATHS = 50;

export const revertCallTool = defineTool({
  name: "revert_call",
  title: "Revert call",
  description: [
    "Undo the file changes of one earlier call (write_file, edit_file, restore_backup, run_command, or another revert_call): every file it created is removed, every file it modified or deleted gets its old bytes and mode back.",
    "If a file was changed again after that call, nothing is reverted and the answer is a conflict (605) listing the files; revert the later calls first (newest first), or fix them by hand.",
    "The revert backs up the current bytes, so it can itself be reverted with revert_call. The result has reverted_call_id and changes (created, modified, deleted, files, diff).",
  ].join(" "),
  input: RevertCallInput,
  risk: "write",
  changes: "change_set",
  output: RevertResultOutput,
  subject: async (args) => {
    const rows = await db().fileChange.findMany({ where: { callId: args.call_id }, select: { path: true }, take: SUBJECT_PATHS });
    if (rows.length > 0) return { paths: rows.map((r) => r.path) };
    const call = await db().toolCall.findUnique({ where: { id: args.call_id }, select: { pathResolved: true } });
    return { paths: call?.pathResolved ? [call.pathResolved] : [] };
  },
  async preview(args, ctx) {
    const plan = await planRevert(args.call_id, ctx.workspace);
    const { summary, diff } = await previewUndo(ctx.workspace, plan);
    return {
      diff,
      additions: summary.files.reduce((n, f) => n + (f.additions ?? 0), 0),
      deletions: summary.files.reduce((n, f) => n + (f.deletions ?? 0), 0),
      warnings: [
        `reverts ${args.call_id}: ${summary.created} created, ${summary.modified} modified, ${summary.deleted} deleted`,
        ...(plan.conflicts.length > 0 ? [`${plan.conflicts.length} file(s) changed since (conflict): ${plan.conflicts.slice(0, 5).map((c) => c.path).join(", ")}`] : []),
      ],
    };
  },
  async run(args, ctx) {
    const target = await db().toolCall.findUnique({ where: { id: args.call_id }, select: { workspaceId: true } });
    if (!target || target.workspaceId !== ctx.workspace.id) {
      throw new ToolError("not_found", `No call ${JSON.stringify(args.call_id)} in this workspace.`, { reason: "call_not_found", call_id: args.call_id });
    }
    const plan = await planRevert(args.call_id, ctx.workspace);
    if (plan.rows.length === 0 && plan.conflicts.length === 0) {
      throw new ToolError("not_found", `Call ${args.call_id} has no file changes to revert (it changed nothing, was not applied, or failed).`, {
        reason: "no_changes",
        call_id: args.call_id,
        ...(plan.notRevertible.length > 0 && { not_revertible: plan.notRevertible.slice(0, 100) }),
      });
    }
    const resultBase = { reverted_call_id: args.call_id };
    const { summary } = await executeUndo({ callId: ctx.callId, workspace: ctx.workspace, plan, backups: ctx.backups, result: resultBase });
    ctx.note({ target: args.call_id, summary: `reverted ${args.call_id}: ${summary.created} created, ${summary.modified} modified, ${summary.deleted} deleted` });
    return { ...resultBase, changes: summary, ...(plan.notRevertible.length > 0 && { not_revertible: plan.notRevertible.slice(0, 100) }) };
  },
});
