import { getConfig } from "@/lib/config";
import { performance } from "node:perf_hooks";
import { ToolError } from "@/lib/errors";
import type { RunResult } from "@/lib/exec/run-command";
import { redactValue } from "@/lib/redact";
import { applyRows, DURABLE_EACH_MAX, rollBack, syncWorkspace, upperSource } from "@/lib/effects/apply";
import { CAPTURE_SETUP_FAILED, captureCommandLine, captureSetupError, captureSupport, prepareCapture, removeCapture } from "@/lib/effects/capture";
import { holdCallForEffects } from "@/lib/effects/call-hooks";
import { moveChangeSet, writeChangeSet } from "@/lib/effects/journal";
import { readChangeSet } from "@/lib/effects/read-change-set";
import { withChangeSetLock } from "@/lib/effects/change-set-lock";
import { priorDeletions } from "@/lib/effects/deletion-budget";
import { appliedLinks } from "@/lib/effects/applied-links";
import { stageEntries, type ChangesSummary } from "@/lib/effects/stage";
import { PRESETS } from "@/lib/policy/presets";
import type { ToolContext } from "@/lib/tools/define-tool";

/**
 * run_command's effect pipeline: run the command on a copy-on-write view of the workspace, read
 * what it changed (the overlay's upper layer), save every replaced byte as a backup, then apply
 * the change set to the real workspace through the journal, or hold it for a reviewer.
 *
 * The rule for a command that fails, times out or is stopped by a limit: its changes are applied
 * as a shell would have left them (the same thresholds still hold a risky change set). A gateway
 * that dies mid-apply finishes the apply at its next start (lib/effects/recover.ts).
 */

/** What a captured command produced. */
export interface CommandEffects {
  result: RunResult;
  /** null when capture is off or unavailable here (`captureNote` says why). */
  changes: ChangesSummary | null;
  captureNote?: string;
  /** Combined unified diff of the change set (capped), for the call page. */
  diff?: string;
}

/** Whether commands run captured (AGENT_REACH_EFFECTS_CAPTURE: "auto", the default, or "off"). */
function captureWanted(): boolean {
  return (process.env.AGENT_REACH_EFFECTS_CAPTURE ?? "auto") !== "off";
}

/**
 * Whether a command in the workspace at `root` will have its file changes captured (backed up,
 * revertible, held when risky): capture is wanted and this machine supports it (probed once).
 */
export function commandsCaptured(root: string): boolean {
  return captureWanted() && captureSupport(root, getConfig().dataDir).ok;
}

/**
 * Runs a command through `run` (which receives the command line to execute) with its effect
 * captured, and applies or holds the change set.
 *
 * @param commandData the result data the call will carry (command, cwd); stored with a held set
 * @throws ToolError `command_failed_to_start` (reason "capture_failed") when the overlay could not
 *   be mounted; `write_failed` / `conflict` when applying failed (the change set was rolled back)
 */
export async function runWithEffects(
  ctx: ToolContext,
  input: {
    command: string;
    cwdAbs: string;
    commandData: Record<string, unknown>;
    /** The command runs in the sandbox, whose runner mounts the overlay itself (`capture`). */
    boxed?: boolean;
    /** Runs the command line; with `capture`, on the runner's overlay of that directory. */
    run: (capture: { dir: string } | null, commandLine: string) => Promise<RunResult>;
  },
): Promise<CommandEffects> {
  const root = ctx.workspace.root;
  const support = captureWanted() ? captureSupport(root, ctx.config.dataDir) : { ok: false as const, reason: "capture is off (AGENT_REACH_EFFECTS_CAPTURE=off)" };
  if (!support.ok) {
    const result = await input.run(null, input.command);
    return { result, changes: null, captureNote: `file changes were not captured: ${support.reason}` };
  }
  const cap = await prepareCapture(ctx.config.dataDir, ctx.callId);
  let keep = false;
  try {
    // In the box, the runner mounts the overlay; without one, a private mount namespace does.
    const result = input.boxed
      ? await input.run({ dir: cap.dir }, input.command)
      : await input.run(null, await captureCommandLine(cap, root, input.cwdAbs, input.command));
    if (!input.boxed && result.exit_code === CAPTURE_SETUP_FAILED) {
      const why = await captureSetupError(cap);
      if (why !== null) throw new ToolError("command_failed_to_start", `The command's copy-on-write view could not be set up: ${why.trim()}`, { reason: "capture_failed" });
    }
    // Read, stage and apply under the workspace's change-set lock: no other change set is applied
    // between the moment this one records a file and the moment it reads or replaces it.
    return await withChangeSetLock(root, async (): Promise<CommandEffects> => {
      const t0 = performance.now();
      const read = await readChangeSet(cap.upper, root);
      if (read.entries.length === 0) {
        const changes: ChangesSummary = { status: "applied", created: 0, modified: 0, deleted: 0, bytes: 0, total_files: 0, files: [], files_truncated: false, ...(read.skipped.length > 0 && { skipped: read.skipped }) };
        return { result, changes };
      }
      const staged = await stageEntries({
        root,
        entries: read.entries,
        skipped: read.skipped,
        source: upperSource(cap.upper),
        backups: ctx.backups,
        reviewEffects: ctx.ruleOptions?.review_effects === true,
        // Large deletions are held where the call's preset says so (strict and balanced; not
        // autonomous); a call without a known preset gets the strictest check.
        holdLargeDeletions: PRESETS[ctx.preset ?? "strict"].checks.holdLargeDeletions,
        // …counting what the same agent's commands deleted just before without a reviewer.
        priorDeletions: () => priorDeletions(ctx.callId, ctx.workspace.id),
        // Links it applied earlier, where the walk for links does not look (inside node_modules).
        appliedLinks: () => appliedLinks(ctx.workspace.id, root),
        // git's index and refs are reviewed when the change set touches a .git directory.
        upper: cap.upper,
        // Under strict only read-only commands run without asking: their changes beyond git's stat
        // cache (a hook planted earlier, a tool that writes) wait for a reviewer.
        readOnlyCommand: (ctx.preset ?? "strict") === "strict" && ctx.allowedWithoutAsking === true,
      });
      const t1 = performance.now();
      const stored = { ...input.commandData, ...(ctx.ruleOptions?.redact === false ? result : redactValue(result)) };
      if (staged.holdReasons.length > 0) {
        const summary: ChangesSummary = { ...staged.summary, status: "held", call_id: ctx.callId };
        await writeChangeSet({ callId: ctx.callId, workspaceId: ctx.workspace.id, status: "held", captureDir: cap.dir, summary: { ...summary, diff: staged.diff }, result: stored, rows: staged.rows });
        await holdCallForEffects(ctx.callId, { summary, diff: staged.diff, reasons: staged.holdReasons });
        keep = true;
        ctx.note({ summary: `held: ${describe(summary)}` });
        return { result, changes: summary, diff: staged.diff };
      }
      const summary: ChangesSummary = { ...staged.summary, status: "applied" };
      await writeChangeSet({ callId: ctx.callId, workspaceId: ctx.workspace.id, status: "applying", captureDir: cap.dir, summary: { ...summary, diff: staged.diff }, result: stored, rows: staged.rows });
      keep = true;
      const t2 = performance.now();
      try {
        await applyRows(root, staged.rows, upperSource(cap.upper), undefined, { durable: staged.rows.length <= DURABLE_EACH_MAX });
        if (staged.rows.length > DURABLE_EACH_MAX) await syncWorkspace(root);
      } catch (err) {
        await rollBack(root, staged.rows);
        // The workspace is as before: the backups of this change set name nothing that changed.
        await ctx.backups.discard(staged.backupIds);
        await moveChangeSet(ctx.callId, ["applying"], "discarded", { summary: { ...summary, status: "discarded", diff: staged.diff }, recovery: "rolled_back" });
        keep = false;
        throw err instanceof ToolError ? err : new ToolError("write_failed", `Applying the command's changes failed (${(err as Error).message}); they were rolled back.`, { reason: "apply_failed" }, { cause: err });
      }
      await moveChangeSet(ctx.callId, ["applying"], "applied", { captureDir: null });
      keep = false;
      timing(`read ${ms(t1 - t0)} ms, stage ${ms(t2 - t1)} ms, apply ${ms(performance.now() - t2)} ms, ${staged.rows.length} rows`);
      return { result, changes: summary, diff: staged.diff };
    });
  } finally {
    if (!keep) await removeCapture(cap.dir);
  }
}

const ms = (v: number) => v.toFixed(1);
/** Phase timings on stderr when AGENT_REACH_EFFECTS_TIMING=1 (benchmarks). */
function timing(line: string): void {
  if (process.env.AGENT_REACH_EFFECTS_TIMING === "1") console.error(`[effects] ${line}`);
}

/** "3 created, 1 modified, 0 deleted". */
export function describe(c: Pick<ChangesSummary, "created" | "modified" | "deleted">): string {
  return `${c.created} created, ${c.modified} modified, ${c.deleted} deleted`;
}
