import { db } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";

/**
 * Reads for the audit page (the hash-chained event log) and the JSONL export of calls and events
 * over a time range (issue 4 §6). The export pages through the tables by cursor, so memory stays
 * constant whatever the range.
 */

/** Events per page of the audit page. */
export const EVENTS_PAGE_SIZE = 100;
/** Rows per database read while exporting. */
const EXPORT_BATCH = 500;

/** An event as the audit page lists it. */
export interface EventRow {
  seq: number;
  type: string;
  callId: string | null;
  actor: string;
  data: string;
  createdAt: Date;
  hash: string;
}

/**
 * Events, newest first, `EVENTS_PAGE_SIZE` at a time.
 * @param before only events with a smaller seq (the cursor of the next page), when given
 * @param type only events of this type (e.g. "call.approved"), when given
 * @returns the page and the cursor of the next one (null on the last page)
 */
export async function listEvents(before: number | undefined, type: string | undefined): Promise<{ items: EventRow[]; next: number | null }> {
  const where: Prisma.EventWhereInput = { ...(before !== undefined && { seq: { lt: before } }), ...(type && { type }) };
  const rows = await db().event.findMany({ where, orderBy: { seq: "desc" }, take: EVENTS_PAGE_SIZE + 1 });
  const items = rows.slice(0, EVENTS_PAGE_SIZE).map((e) => ({ seq: e.seq, type: e.type, callId: e.callId, actor: e.actor, data: e.dataJson, createdAt: e.createdAt, hash: e.hash }));
  return { items, next: rows.length > EVENTS_PAGE_SIZE ? items[items.length - 1].seq : null };
}

/** Distinct event types, for the filter menu. */
export async function eventTypes(): Promise<string[]> {
  const groups = await db().event.groupBy({ by: ["type"], orderBy: { type: "asc" } });
  return groups.map((g) => g.type);
}

/** A time range; either end may be open. */
export interface TimeRange {
  from?: Date;
  to?: Date;
}

function rangeWhere(range: TimeRange) {
  return range.from || range.to ? { createdAt: { ...(range.from && { gte: range.from }), ...(range.to && { lte: range.to }) } } : {};
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The JSONL export: one JSON object per line, first every call created in the range (oldest
 * first, `kind: "call"`, snake_case fields, arguments and results as stored, i.e. redacted), then
 * every event created in the range (`kind: "event"`, with `prev_hash` and `hash`, so the chain can
 * be re-verified from the file: hash = sha256(prev_hash + "\n" + canonical JSON of
 * {seq, type, callId, actor, data, createdAt}), see lib/audit/events.ts).
 * @yields lines, each ending with "\n"
 */
export async function* exportJsonl(range: TimeRange): AsyncGenerator<string> {
  const where = rangeWhere(range);
  let cursor: { createdAt: Date; id: string } | null = null;
  for (;;) {
    const after: Prisma.ToolCallWhereInput = cursor
      ? { OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }] }
      : {};
    const calls: CallRow[] = await db().toolCall.findMany({
      where: { AND: [where, after] },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: EXPORT_BATCH,
    });
    for (const c of calls) yield `${JSON.stringify(callLine(c))}\n`;
    if (calls.length < EXPORT_BATCH) break;
    cursor = { createdAt: calls[calls.length - 1].createdAt, id: calls[calls.length - 1].id };
  }
  let seq = 0;
  for (;;) {
    const events = await db().event.findMany({ where: { AND: [where, { seq: { gt: seq } }] }, orderBy: { seq: "asc" }, take: EXPORT_BATCH });
    for (const e of events) {
      yield `${JSON.stringify({ kind: "event", seq: e.seq, type: e.type, call_id: e.callId, actor: e.actor, data: parseJson(e.dataJson), created_at: e.createdAt.toISOString(), prev_hash: e.prevHash, hash: e.hash })}\n`;
    }
    if (events.length < EXPORT_BATCH) break;
    seq = events[events.length - 1].seq;
  }
}

type CallRow = Prisma.ToolCallGetPayload<object>;

function callLine(c: CallRow) {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    kind: "call",
    call_id: c.id,
    session_id: c.sessionId,
    workspace_id: c.workspaceId,
    agent_id: c.agentId,
    door: c.door,
    tool: c.tool,
    args: parseJson(c.argsJson),
    edited_args: parseJson(c.editedArgsJson),
    path_raw: c.pathRaw,
    path_resolved: c.pathResolved,
    target: c.target,
    decision: c.decision,
    verdict: parseJson(c.decisionJson),
    status: c.status,
    error: c.errorName,
    error_code: c.errorCode,
    result: parseJson(c.resultJson),
    summary: c.summary,
    sha256_before: c.shaBefore,
    sha256_after: c.shaAfter,
    backup_id: c.backupId,
    bytes_in: c.bytesIn,
    bytes_out: c.bytesOut,
    truncated: c.truncated,
    reviewer: c.reviewer,
    review_reason: c.reviewReason,
    host_id: c.hostId,
    created_at: iso(c.createdAt),
    decided_at: iso(c.decidedAt),
    expires_at: iso(c.expiresAt),
    started_at: iso(c.startedAt),
    finished_at: iso(c.finishedAt),
    duration_ms: c.durationMs,
  };
}

/** Counts for the audit page header. */
export async function auditCounts(): Promise<{ calls: number; events: number; first: Date | null; last: Date | null }> {
  const [calls, events, first, last] = await Promise.all([
    db().toolCall.count(),
    db().event.count(),
    db().event.findFirst({ orderBy: { seq: "asc" }, select: { createdAt: true } }),
    db().event.findFirst({ orderBy: { seq: "desc" }, select: { createdAt: true } }),
  ]);
  return { calls, events, first: first?.createdAt ?? null, last: last?.createdAt ?? null };
}
