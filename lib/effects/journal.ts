import { db, dbProvider } from "@/lib/db";
import type { ChangeKind, EntryType } from "@/lib/effects/read-change-set";

/**
 * The change-set journal in the database: one ChangeSet row per call that changed files (its
 * status is the journal state) and one FileChange row per changed path (its before and after
 * states). An apply runs as: rows written with status "applying" (after every replaced byte is in
 * the backup store) → the workspace changed → status "applied". A restart that finds "applying"
 * redoes the apply from the rows (roll forward) or, when the new content is gone, puts the before
 * states back (roll back); either way the call's record says which.
 */

/** Journal state of a change set. */
export type ChangeSetStatus = "held" | "applying" | "applied" | "discarded";

/** One changed path as journaled (the FileChange row without its id). */
export interface FileChangeRow {
  seq: number;
  path: string;
  kind: ChangeKind;
  beforeType: EntryType | null;
  beforeSha: string | null;
  beforeMode: number | null;
  beforeLink: string | null;
  afterType: EntryType | null;
  afterSha: string | null;
  afterMode: number | null;
  afterLink: string | null;
  size: number;
  bulky: boolean;
}

/** Writes (or replaces) a call's change set and its rows (rows first, then the journal state). */
export async function writeChangeSet(input: {
  callId: string;
  workspaceId: string;
  status: ChangeSetStatus;
  captureDir: string | null;
  summary: unknown;
  result?: unknown;
  rows: FileChangeRow[];
}): Promise<void> {
  const data = {
    workspaceId: input.workspaceId,
    status: input.status,
    captureDir: input.captureDir,
    summaryJson: JSON.stringify(input.summary),
    resultJson: input.result === undefined ? null : JSON.stringify(input.result),
  };
  // The rows first, the ChangeSet row last: only a complete set of rows ever has a journal
  // state, so a crash in between leaves rows nobody acts on and the workspace untouched.
  await db().fileChange.deleteMany({ where: { callId: input.callId } });
  for (let i = 0; i < input.rows.length; i += INSERT_BATCH) await insertRows(input.callId, input.rows.slice(i, i + INSERT_BATCH));
  await db().changeSet.upsert({ where: { callId: input.callId }, create: { callId: input.callId, ...data }, update: data });
}

/** Moves a change set from one of `from` to `to` (conditional). @returns true when this caller moved it. */
export async function moveChangeSet(callId: string, from: ChangeSetStatus[], to: ChangeSetStatus, extra: { summary?: unknown; recovery?: string; captureDir?: string | null } = {}): Promise<boolean> {
  const { count } = await db().changeSet.updateMany({
    where: { callId, status: { in: from } },
    data: {
      status: to,
      ...(extra.summary !== undefined && { summaryJson: JSON.stringify(extra.summary) }),
      ...(extra.recovery !== undefined && { recovery: extra.recovery }),
      ...(extra.captureDir !== undefined && { captureDir: extra.captureDir }),
    },
  });
  return count === 1;
}

/** A call's journaled rows in apply order (by seq). */
export async function readRows(callId: string): Promise<FileChangeRow[]> {
  const rows = await db().fileChange.findMany({ where: { callId }, orderBy: { seq: "asc" } });
  return rows.map((r) => ({
    seq: r.seq,
    path: r.path,
    kind: r.kind as ChangeKind,
    beforeType: r.beforeType as EntryType | null,
    beforeSha: r.beforeSha,
    beforeMode: r.beforeMode,
    beforeLink: r.beforeLink,
    afterType: r.afterType as EntryType | null,
    afterSha: r.afterSha,
    afterMode: r.afterMode,
    afterLink: r.afterLink,
    size: r.size,
    bulky: r.bulky,
  }));
}

/** Rows per INSERT statement (14 values each, below SQLite's 32,766 variables). */
const INSERT_BATCH = 1000;
const COLUMNS = ["callId", "seq", "path", "kind", "beforeType", "beforeSha", "beforeMode", "beforeLink", "afterType", "afterSha", "afterMode", "afterLink", "size", "bulky"] as const;

/**
 * One multi-row INSERT of FileChange rows: a change set can hold tens of thousands of paths, and
 * the client's createMany is far slower here than a single statement.
 */
async function insertRows(callId: string, rows: FileChangeRow[]): Promise<void> {
  if (rows.length === 0) return;
  const pg = dbProvider() === "postgresql";
  const values: unknown[] = [];
  const tuples = rows.map((r) => {
    const start = values.length;
    values.push(callId, r.seq, r.path, r.kind, r.beforeType, r.beforeSha, r.beforeMode, r.beforeLink, r.afterType, r.afterSha, r.afterMode, r.afterLink, r.size, pg ? r.bulky : r.bulky ? 1 : 0);
    return `(${COLUMNS.map((_, j) => (pg ? `$${start + j + 1}` : "?")).join(", ")})`;
  });
  await db().$executeRawUnsafe(`INSERT INTO "FileChange" (${COLUMNS.map((c) => `"${c}"`).join(", ")}) VALUES ${tuples.join(", ")}`, ...values);
}
