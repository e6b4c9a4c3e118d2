import fs from "node:fs/promises";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { errorBody } from "@/lib/errors";
import { failure, success } from "@/lib/result";
import { finishCall } from "@/lib/audit/calls";
import { applyRows, blobSource, rollBack, syncWorkspace, upperSource } from "@/lib/effects/apply";
import { removeCapture } from "@/lib/effects/capture";
import { moveChangeSet, readRows } from "@/lib/effects/journal";
import type { ChangesSummary } from "@/lib/effects/stage";
import type { Workspace } from "@/lib/tools/define-tool";

/**
 * Start-up recovery of change sets a stopped gateway left "applying": the apply is redone from the
 * journal (roll forward: the new bytes are still in the capture's upper layer, or in the blob
 * store for a revert), so the workspace ends all-applied; when the new content cannot be read any
 * more, the before-states are put back from the backups (roll back), so it ends untouched. The
 * call is then finished with its command's stored result and `changes.recovery` saying which;
 * a call whose apply had completed (status "applied" while the call was still running) is
 * finished as succeeded. Runs before interrupted calls are marked.
 */

/** What recovery did, for the start-up log. */
export interface RecoveryReport {
  rolledForward: string[];
  rolledBack: string[];
  finished: string[];
  removedCaptures: number;
}

/**
 * Recovers this workspace's interrupted change sets and removes capture directories nobody needs.
 * @returns the calls rolled forward, rolled back, and finished from an applied journal
 */
export async function recoverChangeSets(workspace: Workspace): Promise<RecoveryReport> {
  const report: RecoveryReport = { rolledForward: [], rolledBack: [], finished: [], removedCaptures: 0 };
  const sets = await db().changeSet.findMany({ where: { workspaceId: workspace.id, status: { in: ["applying", "applied"] } } });
  for (const set of sets) {
    const call = await db().toolCall.findUnique({ where: { id: set.callId }, select: { status: true, hostId: true } });
    if (!call || call.status !== "running") continue;
    if (call.hostId !== getConfig().hostId) continue;
    const summary = JSON.parse(set.summaryJson) as ChangesSummary & { diff?: string };
    const stored = set.resultJson ? (JSON.parse(set.resultJson) as Record<string, unknown>) : {};
    const { diff: _diff, ...pub } = summary;
    void _diff;
    if (set.status === "applied") {
      const envelope = success(set.callId, { ...stored, changes: { ...pub, status: "applied" } });
      await finishCall(set.callId, ["running"], "succeeded", envelope, { actor: "system", notes: { summary: "finished after a restart (its changes had been applied)" } });
      report.finished.push(set.callId);
      continue;
    }
    const rows = await readRows(set.callId);
    const source = set.captureDir ? upperSource(path.join(set.captureDir, "upper")) : blobSource;
    let recovery: "rolled_forward" | "rolled_back" = "rolled_forward";
    try {
      if (set.captureDir) await fs.access(path.join(set.captureDir, "upper"));
      await applyRows(workspace.root, rows, source);
      await syncWorkspace(workspace.root);
    } catch (err) {
      console.error(`[agent-reach] could not finish the interrupted apply of ${set.callId} (${(err as Error).message}); rolling it back`);
      recovery = "rolled_back";
      await rollBack(workspace.root, rows);
    }
    const changes = { ...pub, status: recovery === "rolled_forward" ? "applied" : "discarded", recovery } as ChangesSummary;
    await moveChangeSet(set.callId, ["applying"], recovery === "rolled_forward" ? "applied" : "discarded", { summary: { ...changes, diff: summary.diff }, recovery, captureDir: null });
    if (set.captureDir) await removeCapture(set.captureDir);
    const envelope =
      recovery === "rolled_forward"
        ? success(set.callId, { ...stored, changes })
        : failure(set.callId, errorBody("write_failed", "The gateway stopped while applying this call's changes and could not finish; they were rolled back.", { reason: "apply_interrupted", changes, result: stored }));
    await finishCall(set.callId, ["running"], recovery === "rolled_forward" ? "succeeded" : "failed", envelope, {
      actor: "system",
      notes: { summary: `${recovery === "rolled_forward" ? "applied" : "rolled back"} after a restart: ${changes.created} created, ${changes.modified} modified, ${changes.deleted} deleted` },
    });
    (recovery === "rolled_forward" ? report.rolledForward : report.rolledBack).push(set.callId);
  }
  report.removedCaptures = await sweepCaptures();
  return report;
}

/** Removes capture directories whose change set is not held or applying (crash leftovers). */
async function sweepCaptures(): Promise<number> {
  const dir = path.join(getConfig().dataDir, "effects");
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const set = await db().changeSet.findUnique({ where: { callId: name }, select: { status: true } });
    if (set && (set.status === "held" || set.status === "applying")) continue;
    const call = await db().toolCall.findUnique({ where: { id: name }, select: { status: true } });
    // A command still running on another instance sharing this data directory keeps its capture.
    if (call && call.status === "running" && !set) continue;
    await removeCapture(path.join(dir, name));
    removed++;
  }
  return removed;
}
