import path from "node:path";
import { db } from "@/lib/db";
import { ToolError } from "@/lib/errors";
import { getBlob } from "@/lib/backups/blobs";
import { applyRows, currentState, inverse, rollBack, syncWorkspace, type ContentSource } from "@/lib/effects/apply";
import { findConflicts, type Conflict } from "@/lib/effects/call-hooks";
import { moveChangeSet, readRows, writeChangeSet, type FileChangeRow } from "@/lib/effects/journal";
import { withChangeSetLock } from "@/lib/effects/change-set-lock";
import { comparePaths, type ChangeEntry } from "@/lib/effects/read-change-set";
import { stageEntries, type ChangesSummary } from "@/lib/effects/stage";
import type { BackupStore, Workspace } from "@/lib/tools/define-tool";
import { BeneathReader } from "@/lib/workspace/read-beneath";
import { sha256Hex } from "@/lib/workspace/text";

/**
 * Undoing file changes, whichever tool made them: a call's changes as before/after rows (a
 * command's or a revert's journaled change set; a write_file / edit_file / restore_backup call's
 * one file from its backup and recorded sha256), turned around and applied like any change set —
 * the current bytes backed up first, files replaced atomically, journaled, so the undo is itself
 * revertible. A path that changed since (its bytes are not the ones the call left) is a conflict:
 * nothing is overwritten, nothing at all is changed, and the conflicts are listed.
 */


/** A call's file changes as rows (in the order they were made). Empty when it changed nothing. */
export async function changesOfCall(callId: string, workspace: Workspace): Promise<FileChangeRow[]> {
  const set = await db().changeSet.findUnique({ where: { callId }, select: { status: true } });
  if (set) return set.status === "applied" ? readRows(callId) : [];
  const call = await db().toolCall.findUnique({ where: { id: callId } });
  // Only the write pipeline (lib/workspace/update-file.ts) records a file's sha256 after the call:
  // a call with one is a one-file write, read back from its row and backup.
  if (!call || call.status !== "succeeded" || !call.shaAfter) return [];
  const data = parseData(call.resultJson);
  if (data?.changed === false) return [];
  const backup = await db().backup.findFirst({ where: { callId }, orderBy: { createdAt: "asc" } });
  const rel =
    typeof data?.path === "string"
      ? data.path
      : backup?.path ?? (call.pathResolved ? path.relative(workspace.root, call.pathResolved).split(path.sep).join("/") : null);
  if (!rel) return [];
  const mode = typeof data?.mode === "string" ? parseInt(data.mode, 8) : null;
  return [
    {
      seq: 0,
      path: rel,
      kind: backup ? "modified" : "created",
      beforeType: backup ? "file" : null,
      beforeSha: backup?.blobSha ?? null,
      beforeMode: backup?.mode ?? null,
      beforeLink: null,
      afterType: "file",
      afterSha: call.shaAfter,
      afterMode: Number.isFinite(mode) ? mode : null,
      afterLink: null,
      size: typeof data?.size_bytes === "number" ? data.size_bytes : 0,
      bulky: false,
    },
  ];
}

function parseData(json: string | null): Record<string, unknown> | null {
  if (!json) return null;
  try {
    const env = JSON.parse(json) as { ok?: boolean; data?: Record<string, unknown> };
    return env.ok && env.data && typeof env.data === "object" ? env.data : null;
  } catch {
    return null;
  }
}

/** A plan to put some paths back: the rows to apply and what stands in the way. */
export interface UndoPlan {
  /** Rows whose after-state is the state to return to (before = now). */
  rows: FileChangeRow[];
  conflicts: Conflict[];
  /** Paths whose old bytes were never kept (bulky generated files): left as they are. */
  notRevertible: string[];
  /**
   * Paths that already hold the state the undo would put back (an earlier rewind or revert undid
   * them): neither a conflict nor a row. Only filled with `skipUndone` (see planUndo).
   */
  alreadyUndone: string[];
}

/** Plans the undo of one call's changes. */
export async function planRevert(callId: string, workspace: Workspace): Promise<UndoPlan> {
  return planUndo(workspace, [await changesOfCall(callId, workspace)]);
}

/**
 * Plans undoing several calls' changes, given newest first: per path, the state now must be the
 * newest call's after-state (else a conflict), and the state to return to is the oldest call's
 * before-state.
 * @param options.skipUndone a path that already holds the state to return to is left out (listed
 *   in `alreadyUndone`) instead of being a conflict: nothing would be overwritten there. A session
 *   rewind uses it, so that once it ran, the same rewind shows nothing left to undo rather than
 *   every path as "changed since". A single call's revert keeps the strict rule.
 */
export async function planUndo(workspace: Workspace, newestFirst: FileChangeRow[][], options: { skipUndone?: boolean } = {}): Promise<UndoPlan> {
  const byPath = new Map<string, { newest: FileChangeRow; oldest: FileChangeRow }>();
  for (const rows of newestFirst) {
    for (const r of rows) {
      const seen = byPath.get(r.path);
      if (!seen) byPath.set(r.path, { newest: r, oldest: r });
      else seen.oldest = r;
    }
  }
  const notRevertible: string[] = [];
  const combined: FileChangeRow[] = [];
  for (const { newest, oldest } of byPath.values()) {
    if (oldest.beforeType === "file" && oldest.beforeSha === null) {
      notRevertible.push(oldest.path);
      continue;
    }
    combined.push({ ...newest, beforeType: oldest.beforeType, beforeSha: oldest.beforeSha, beforeMode: oldest.beforeMode, beforeLink: oldest.beforeLink });
  }
  const alreadyUndone: string[] = [];
  let toUndo = combined;
  if (options.skipUndone) {
    toUndo = [];
    for (const r of combined) {
      if (!sameState(r) && (await holdsBeforeState(workspace.root, r))) alreadyUndone.push(r.path);
      else toUndo.push(r);
    }
  }
  const conflicts = await findConflicts(workspace.root, toUndo, "after");
  const undo = inverse(toUndo).filter((r) => !sameState(r));
  undo.sort((a, b) => comparePaths(a.path, b.path));
  return { rows: undo, conflicts, notRevertible, alreadyUndone };
}

/** True when the path holds exactly the row's before-state: type, bytes or link target, and file mode where recorded. */
async function holdsBeforeState(root: string, r: FileChangeRow): Promise<boolean> {
  // Read without following links, like every workspace read of a change set (lib/workspace/read-beneath.ts).
  const reader = new BeneathReader(root);
  let now: Awaited<ReturnType<typeof currentState>>;
  try {
    now = await currentState(reader, r.path, r.beforeType === "file");
  } finally {
    reader.close();
  }
  if (r.beforeType === null) return now.type === null;
  if (now.type !== r.beforeType) return false;
  if (r.beforeType === "file") return r.beforeSha !== null && now.sha === r.beforeSha && (r.beforeMode === null || now.mode === r.beforeMode);
  if (r.beforeType === "symlink") return now.link === r.beforeLink;
  return true;
}

function sameState(r: FileChangeRow): boolean {
  return r.beforeType === r.afterType && r.beforeSha === r.afterSha && r.beforeLink === r.afterLink && (r.afterMode === null || r.beforeMode === r.afterMode);
}

/** Bytes of an undo row's after-state, from the blob store. */
const undoSource = (rows: FileChangeRow[]): ContentSource => {
  const shaByPath = new Map(rows.map((r) => [r.path, r.afterSha]));
  return {
    async bytes(row) {
      const sha = shaByPath.get(row.path) ?? row.afterSha;
      const bytes = sha ? await getBlob(sha) : null;
      if (!bytes) throw new ToolError("internal", `The old bytes of ${row.path} are missing from the backup store; nothing was changed.`, { path: row.path });
      return bytes;
    },
  };
};

function entriesOf(rows: FileChangeRow[]): ChangeEntry[] {
  return rows.map((r) => ({
    path: r.path,
    kind: r.kind,
    // The state now, as the plan found it: its bytes are read again for the backup and must still hash to it.
    before: r.beforeType
      ? { type: r.beforeType, mode: r.beforeMode ?? 0o644, size: 0, ...(r.beforeLink !== null && { link: r.beforeLink }), ...(r.beforeType === "file" && { sha256: r.beforeSha }) }
      : null,
    after: r.afterType ? { type: r.afterType, mode: r.afterMode ?? r.beforeMode ?? 0o644, size: r.size, ...(r.afterLink !== null && { link: r.afterLink }) } : null,
  }));
}

/** A backup store that stores nothing (previews): it only reports the sha256. */
const dryBackups: BackupStore = {
  save: async ({ path: p, bytes, mode }) => ({ id: "", path: p, sha256: sha256Hex(bytes), size: bytes.length, mode, callId: "", createdAt: new Date() }),
  discard: async () => {},
  get: async () => null,
  list: async () => ({ items: [], total: 0 }),
};

/**
 * The diff and summary an undo would produce, without changing or storing anything. A path in
 * conflict (changed since, possibly gone with its directory) is left out: it is not what the undo
 * expects to replace, and the plan lists it instead; an undo with conflicts applies nothing.
 */
export async function previewUndo(workspace: Workspace, plan: UndoPlan): Promise<{ summary: ChangesSummary; diff: string }> {
  const conflicting = plan.conflicts.map((c) => c.path);
  const affected = (p: string) => conflicting.some((c) => p === c || p.startsWith(`${c}/`) || c.startsWith(`${p}/`));
  const rows = conflicting.length > 0 ? plan.rows.filter((r) => !affected(r.path)) : plan.rows;
  const staged = await stageEntries({ root: workspace.root, entries: entriesOf(rows), source: undoSource(rows), backups: dryBackups });
  return { summary: staged.summary, diff: staged.diff };
}

/**
 * Carries out an undo plan as the change set of call `callId`: refuses with 605 when there are
 * conflicts (nothing changed), saves the current bytes as backups of `callId`, journals, applies.
 *
 * @returns the summary (status "applied") and the combined diff
 * @throws ToolError `conflict` (detail.conflicts) when a path changed since; `write_failed` when
 *   the apply failed (rolled back)
 */
export async function executeUndo(input: { callId: string; workspace: Workspace; plan: UndoPlan; backups: BackupStore; result?: Record<string, unknown> }): Promise<{ summary: ChangesSummary; diff: string }> {
  const { plan, workspace } = input;
  if (plan.conflicts.length > 0) {
    throw new ToolError("conflict", `${plan.conflicts.length} file(s) changed since; nothing was reverted (a revert never overwrites later changes).`, {
      conflicts: plan.conflicts.slice(0, 100),
      ...(plan.notRevertible.length > 0 && { not_revertible: plan.notRevertible.slice(0, 100) }),
    });
  }
  const source = undoSource(plan.rows);
  // Staged and applied under the workspace's change-set lock; each path's bytes now are read again
  // for its backup and must still be the ones the plan found (else `conflict`, nothing changed).
  return withChangeSetLock(workspace.root, async () => {
    const staged = await stageEntries({ root: workspace.root, entries: entriesOf(plan.rows), source, backups: input.backups });
    const summary: ChangesSummary = { ...staged.summary, status: "applied" };
    delete summary.hold_reasons;
    await writeChangeSet({ callId: input.callId, workspaceId: workspace.id, status: "applying", captureDir: null, summary: { ...summary, diff: staged.diff }, result: input.result ?? {}, rows: staged.rows });
    try {
      await applyRows(workspace.root, staged.rows, source);
      await syncWorkspace(workspace.root);
    } catch (err) {
      const rolledBack = await rollBack(workspace.root, staged.rows).then(
        () => true,
        () => false,
      );
      await moveChangeSet(input.callId, ["applying"], "discarded", { summary: { ...summary, status: "discarded" }, recovery: "rolled_back" });
      // Nothing changed: the backups of the bytes it would have replaced name no change.
      if (rolledBack) await input.backups.discard(staged.backupIds);
      if (err instanceof ToolError) throw err;
      throw new ToolError("write_failed", `The revert failed (${(err as Error).message}); nothing was changed.`, { reason: "apply_failed" }, { cause: err });
    }
    await moveChangeSet(input.callId, ["applying"], "applied");
    return { summary, diff: staged.diff };
  });
}

/** Calls of a session that changed files, from `fromCallId` on, newest first. */
export async function sessionCallsFrom(sessionId: string, fromCallId: string): Promise<Array<{ id: string; tool: string; createdAt: Date }>> {
  const from = await db().toolCall.findUnique({ where: { id: fromCallId }, select: { sessionId: true, createdAt: true } });
  if (!from || from.sessionId !== sessionId) {
    throw new ToolError("not_found", `Call ${fromCallId} is not part of session ${sessionId}.`, { reason: "call_not_in_session", call_id: fromCallId });
  }
  const calls = await db().toolCall.findMany({
    where: { sessionId, createdAt: { gte: from.createdAt } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { id: true, tool: true, createdAt: true, status: true },
  });
  return calls.filter((c) => c.status === "succeeded" || c.status === "pending" || c.status === "failed");
}
