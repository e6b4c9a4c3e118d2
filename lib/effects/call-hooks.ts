import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { errorBody } from "@/lib/errors";
import { failure, success, type Envelope } from "@/lib/result";
import { finishCall, transition } from "@/lib/audit/calls";
import { applyRows, currentState, DURABLE_EACH_MAX, rollBack, syncWorkspace, upperSource } from "@/lib/effects/apply";
import { captureDirOf, removeCapture } from "@/lib/effects/capture";
import { moveChangeSet, readRows, type FileChangeRow } from "@/lib/effects/journal";
import type { ChangesSummary } from "@/lib/effects/stage";
import type { PolicyVerdict } from "@/lib/policy/types";
import type { Workspace } from "@/lib/tools/define-tool";
import { BeneathReader, WorkspaceChanged } from "@/lib/workspace/read-beneath";
import { withChangeSetLock } from "@/lib/effects/change-set-lock";

/**
 * Where change sets meet the call lifecycle (the approval queue and the audit rows): a held
 * change set puts its call back in "pending" (the reviewer approves the effect, not the command
 * line); approving applies it (605 when a file it replaces changed since), rejecting or expiring
 * discards it. The command already ran: its output is in the change set's stored result.
 */

/** pendingJson.effects of a call whose change set waits for a reviewer. */
export interface HeldEffectsDetail {
  summary: ChangesSummary;
}

/**
 * Moves a running command's call to "pending" with its change set as the thing to approve.
 * @param detail the summary (status "held"), the combined diff and the reasons it is held
 */
export async function holdCallForEffects(callId: string, detail: { summary: ChangesSummary; diff: string; reasons: string[] }): Promise<void> {
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { decisionJson: true, argsJson: true, execArgsJson: true } });
  const verdict = row?.decisionJson ? (JSON.parse(row.decisionJson) as PolicyVerdict) : null;
  const additions = detail.summary.files.reduce((n, f) => n + (f.additions ?? 0), 0);
  const deletions = detail.summary.files.reduce((n, f) => n + (f.deletions ?? 0), 0);
  const moved = await transition(callId, ["running"], "pending", {
    actor: "system",
    eventData: { effects: true, reasons: detail.reasons },
    pendingJson: JSON.stringify({
      preview: { diff: detail.diff, additions, deletions, warnings: [`the command already ran; approve to apply its file changes: ${detail.reasons.join("; ")}`] },
      verdict,
      effects: { summary: detail.summary } satisfies HeldEffectsDetail,
    }),
    summary: `held: ${detail.summary.created} created, ${detail.summary.modified} modified, ${detail.summary.deleted} deleted`,
    expiresAt: new Date(Date.now() + getConfig().approvalExpiryMs),
    // The queue approves calls that carry their arguments; a held effect is approved as it is.
    execArgsJson: row?.execArgsJson ?? row?.argsJson ?? "{}",
  });
  if (!moved) throw new Error(`call ${callId} left "running" before its change set could be held`);
}

/**
 * The note a held command result carries: why its changes are held and how to learn the decision.
 * @param changes the held change set's summary (`hold_reasons`, `call_id`)
 */
export function heldNote(changes: Pick<ChangesSummary, "hold_reasons" | "call_id">): string {
  return `The command's file changes are held for a reviewer (${(changes.hold_reasons ?? []).join("; ")}). The workspace is unchanged until they approve; call get_call with call_id ${changes.call_id} (wait_ms) to learn whether they were applied or discarded.`;
}

/**
 * The held result envelope of a call whose change set waits for a reviewer: the command's
 * output as stored with the change set (`ChangeSet.resultJson`, redacted unless a rule said
 * `redact: false`), `changes` with status "held" and the note saying what to do, i.e. the same
 * envelope the command's own request answered when it ran without approval. Null when the call
 * holds no change set (none, or it was applied, discarded or is being applied).
 */
export async function heldEnvelope(callId: string): Promise<Envelope | null> {
  const set = await db().changeSet.findUnique({ where: { callId }, select: { status: true, summaryJson: true, resultJson: true } });
  if (!set || set.status !== "held") return null;
  const { diff: _diff, ...changes } = JSON.parse(set.summaryJson) as ChangesSummary & { diff?: string };
  void _diff;
  const stored = set.resultJson ? (JSON.parse(set.resultJson) as Record<string, unknown>) : {};
  const held: ChangesSummary = { ...changes, status: "held", call_id: callId };
  return success(callId, { ...stored, changes: held, changes_note: heldNote(held) });
}

/** What an agent is told about a change set that waits for a reviewer (get_call, MCP tasks). */
export interface HeldEffectsView {
  /** One sentence: what the reviewer must decide, with the counts and the dangers named. */
  summary: string;
  /** Why the change set is held (each danger in words, e.g. ".git/hooks/pre-commit installs a git hook …"). */
  hold_reasons: string[];
  created: number;
  modified: number;
  deleted: number;
  /** Changed paths in total; `files` lists at most HELD_FILES_SHOWN of them. */
  total_files: number;
  files: Array<{ path: string; kind: string }>;
  files_truncated: boolean;
  /** Where a reviewer approves or rejects it (the dashboard). */
  review_url: string;
}

/** Most paths a `HeldEffectsView` lists. */
export const HELD_FILES_SHOWN = 50;

/**
 * The held change set of a call as an agent sees it, or null when the call holds none (no
 * change set, or it was applied, discarded or is being applied).
 */
export async function heldEffectsOf(callId: string): Promise<HeldEffectsView | null> {
  const set = await db().changeSet.findUnique({ where: { callId }, select: { status: true, summaryJson: true } });
  if (!set || set.status !== "held") return null;
  return heldEffectsView(callId, JSON.parse(set.summaryJson) as ChangesSummary);
}

/** A held change set's summary as an agent sees it (see `heldEffectsOf`). */
export function heldEffectsView(callId: string, s: ChangesSummary): HeldEffectsView {
  const reasons = s.hold_reasons ?? [];
  const files = s.files.slice(0, HELD_FILES_SHOWN).map((f) => ({ path: f.path, kind: f.kind }));
  const review_url = `${getConfig().publicUrl}/approvals?call=${encodeURIComponent(callId)}`;
  const counts = `${s.created} created, ${s.modified} modified, ${s.deleted} deleted`;
  const named = files.slice(0, 5).map((f) => f.path).join(", ") + (s.total_files > 5 ? `, … (${s.total_files} paths)` : "");
  return {
    summary:
      `The command already ran; a reviewer must decide whether its file changes (${counts}: ${named}) are applied to the workspace or discarded` +
      `${reasons.length ? `. Held because: ${reasons.join("; ")}` : ""}. Review: ${review_url}`,
    hold_reasons: reasons,
    created: s.created,
    modified: s.modified,
    deleted: s.deleted,
    total_files: s.total_files,
    files,
    files_truncated: s.total_files > files.length,
    review_url,
  };
}

/** The held change set's summary in a pending call's pendingJson (`effects.summary`), or null. */
export function heldSummaryOf(pendingJson: string | null): ChangesSummary | null {
  if (!pendingJson) return null;
  try {
    return (JSON.parse(pendingJson) as { effects?: HeldEffectsDetail }).effects?.summary ?? null;
  } catch {
    return null;
  }
}

/** True when a pending call waits for its change set's approval (pendingJson.effects). */
export function isHeldEffects(pendingJson: string | null): boolean {
  if (!pendingJson) return false;
  return Boolean((JSON.parse(pendingJson) as { effects?: unknown }).effects);
}

/** A path whose current state differs from the one a change set expects. */
export interface Conflict {
  path: string;
  expected: string;
  found: string;
}

/**
 * Compares each row's before-state with the workspace now (bulky files: by type only). The
 * workspace is read without following links (lib/workspace/read-beneath.ts): a path below a
 * directory that became a link is a conflict, and nothing behind the link is hashed.
 */
export async function findConflicts(root: string, rows: FileChangeRow[], side: "before" | "after" = "before"): Promise<Conflict[]> {
  const conflicts: Conflict[] = [];
  const reader = new BeneathReader(root);
  try {
    for (const r of rows) {
      const type = side === "before" ? r.beforeType : r.afterType;
      const sha = side === "before" ? r.beforeSha : r.afterSha;
      const link = side === "before" ? r.beforeLink : r.afterLink;
      const expected = type === null ? "absent" : type === "file" ? (sha ? `file ${sha.slice(0, 12)}` : "file") : type === "symlink" ? `symlink → ${link}` : "directory";
      let found: string;
      try {
        const now = await currentState(reader, r.path, type === "file" && sha !== null);
        found = now.type === null ? "absent" : now.type === "file" ? (now.sha ? `file ${now.sha.slice(0, 12)}` : "file") : now.type === "symlink" ? `symlink → ${now.link}` : now.type === "dir" ? "directory" : "special file";
      } catch (err) {
        if (!(err instanceof WorkspaceChanged)) throw err;
        found = "changed while it was read (a symbolic link on its path, or another file)";
      }
      if (expected !== found) conflicts.push({ path: r.path, expected, found });
    }
  } finally {
    reader.close();
  }
  return conflicts;
}

/**
 * Applies an approved held change set: checks every path it replaces is as it was when the
 * change set was held (else 605 and nothing is applied), then applies it through the journal.
 * The call moves approved → running → succeeded | conflict | failed.
 * @returns the envelope (the command's result with `changes`), or null when another instance ran it
 */
export async function applyHeldEffects(callId: string, workspace: Workspace, actor: string): Promise<Envelope | null> {
  if (!(await transition(callId, ["approved"], "running", { actor, startedAt: new Date(), eventData: { host: getConfig().hostId, effects: true } }))) return null;
  const set = await db().changeSet.findUnique({ where: { callId } });
  const stored = set?.resultJson ? (JSON.parse(set.resultJson) as Record<string, unknown>) : {};
  const summary = set ? (JSON.parse(set.summaryJson) as ChangesSummary & { diff?: string }) : null;
  const cap = captureDirOf(getConfig().dataDir, callId);
  if (!set || !summary || set.status !== "held") {
    const envelope = failure(callId, errorBody("internal", "The held change set of this call is gone; nothing was applied.", { reason: "change_set_missing" }));
    await finishCall(callId, ["running"], "failed", envelope, { actor });
    return envelope;
  }
  const { diff: _diff, ...pub } = summary;
  void _diff;
  // Checked and applied under the workspace's change-set lock: no other change set lands between.
  return withChangeSetLock(workspace.root, async () => {
    const rows = await readRows(callId);
    const conflicts = await findConflicts(workspace.root, rows);
    if (conflicts.length > 0) {
      await moveChangeSet(callId, ["held"], "discarded", { summary: { ...summary, status: "discarded" }, captureDir: null });
      await discardBackupsOf(callId);
      await removeCapture(cap.dir);
      const envelope = failure(
        callId,
        errorBody("conflict", `${conflicts.length} file(s) the command changed were changed since it ran; its changes were not applied.`, {
          conflicts: conflicts.slice(0, 100),
          changes: { ...pub, status: "discarded" },
        }),
      );
      await finishCall(callId, ["running"], "conflict", envelope, { actor });
      return envelope;
    }
    await moveChangeSet(callId, ["held"], "applying");
    try {
      await applyRows(workspace.root, rows, upperSource(cap.upper), undefined, { durable: rows.length <= DURABLE_EACH_MAX });
      if (rows.length > DURABLE_EACH_MAX) await syncWorkspace(workspace.root);
    } catch (err) {
      const rolledBack = await rollBack(workspace.root, rows).then(
        () => true,
        () => false,
      );
      await moveChangeSet(callId, ["applying"], "discarded", { summary: { ...summary, status: "discarded" }, recovery: "rolled_back", captureDir: null });
      if (rolledBack) await discardBackupsOf(callId);
      await removeCapture(cap.dir);
      const envelope = failure(callId, errorBody("write_failed", `Applying the approved changes failed (${(err as Error).message}); they were rolled back.`, { reason: "apply_failed" }));
      await finishCall(callId, ["running"], "failed", envelope, { actor });
      return envelope;
    }
    const applied: ChangesSummary = { ...pub, status: "applied" };
    delete applied.call_id;
    await moveChangeSet(callId, ["applying"], "applied", { summary: { ...applied, diff: summary.diff }, captureDir: null });
    await removeCapture(cap.dir);
    const envelope = success(callId, { ...stored, changes: applied });
    await finishCall(callId, ["running"], "succeeded", envelope, { actor, notes: { summary: `applied after review: ${applied.created} created, ${applied.modified} modified, ${applied.deleted} deleted` } });
    return envelope;
  });
}

/**
 * The envelope of a rejected held change set: the command's output stays, its changes are
 * discarded (602 with `changes.status` "discarded"). Discards the capture. Null when the call
 * holds no change set.
 */
export async function discardHeldEffects(callId: string, reason: string, reviewer: string): Promise<Envelope | null> {
  const set = await db().changeSet.findUnique({ where: { callId } });
  if (!set || set.status !== "held") return null;
  const summary = JSON.parse(set.summaryJson) as ChangesSummary & { diff?: string };
  const { diff: _diff, call_id: _c, ...pub } = summary;
  void _diff;
  void _c;
  const stored = set.resultJson ? (JSON.parse(set.resultJson) as Record<string, unknown>) : {};
  return failure(
    callId,
    errorBody("approval_rejected", `A reviewer rejected this command's file changes${reason ? `: ${reason}` : ""}; they were discarded. The workspace is as before the command.`, {
      reason,
      reviewer,
      changes: { ...pub, status: "discarded" },
      result: stored,
    }),
  );
}

/** Marks a held change set discarded and removes its capture (after a reject or an expiry). */
export async function dropHeldEffects(callId: string): Promise<void> {
  const set = await db().changeSet.findUnique({ where: { callId }, select: { status: true, summaryJson: true } });
  if (!set || set.status !== "held") return;
  const summary = JSON.parse(set.summaryJson) as ChangesSummary;
  await moveChangeSet(callId, ["held"], "discarded", { summary: { ...summary, status: "discarded" }, captureDir: null });
  await discardBackupsOf(callId);
  await removeCapture(captureDirOf(getConfig().dataDir, callId).dir);
}

/**
 * Removes the backups a command's call made of its change set's before-bytes, once that change
 * set is discarded: nothing in the workspace changed, so they name no change, and a discarded
 * change set leaves nothing in the backup list. (The blobs stay: content-addressed, possibly
 * shared.)
 */
async function discardBackupsOf(callId: string): Promise<void> {
  await db().backup.deleteMany({ where: { callId } });
}
