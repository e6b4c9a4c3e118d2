import { db } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";

/**
 * Reads for the audit page (the hash-chained event log) and the JSONL export of calls and events
 * over a time range. The export pages through the tables by cursor, so memory stays
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

/** Filters of the audit page's event list (every field optional). */
export interface EventFilters {
  /** Only events with a smaller seq (the cursor of the next page). */
  before?: number;
  /** Only events of this type (e.g. "call.approved"). */
  type?: string;
  /** Only events of this call. */
  callId?: string;
  /** Only events of this session's calls (its newest SESSION_FILTER_CALLS calls). */
  sessionId?: string;
  /** Only events by this actor ("reviewer:admin", "agent:agt_…", "system"); a trailing ":" matches a kind ("reviewer:"). */
  actor?: string;
  /** Only events created in this range (inclusive). */
  from?: Date;
  to?: Date;
}

/** Most calls of one session the session filter looks at (its newest). */
export const SESSION_FILTER_CALLS = 10_000;

/**
 * Events, newest first, `EVENTS_PAGE_SIZE` at a time, under `filters`.
 * @returns the page and the cursor of the next one (null on the last page)
 */
export async function listEvents(filters: EventFilters = {}): Promise<{ items: EventRow[]; next: number | null }> {
  const and: Prisma.EventWhereInput[] = [];
  if (filters.before !== undefined) and.push({ seq: { lt: filters.before } });
  if (filters.type) and.push({ type: filters.type });
  if (filters.callId) and.push({ callId: filters.callId });
  if (filters.actor) and.push(filters.actor.endsWith(":") ? { actor: { startsWith: filters.actor } } : { actor: filters.actor });
  if (filters.from || filters.to) and.push({ createdAt: { ...(filters.from && { gte: filters.from }), ...(filters.to && { lte: filters.to }) } });
  if (filters.sessionId) {
    const calls = await db().toolCall.findMany({ where: { sessionId: filters.sessionId }, orderBy: { createdAt: "desc" }, take: SESSION_FILTER_CALLS, select: { id: true } });
    and.push({ callId: { in: calls.map((c) => c.id) } });
  }
  const rows = await db().event.findMany({ where: { AND: and }, orderBy: { seq: "desc" }, take: EVENTS_PAGE_SIZE + 1 });
  const items = rows.slice(0, EVENTS_PAGE_SIZE).map((e) => ({ seq: e.seq, type: e.type, callId: e.callId, actor: e.actor, data: e.dataJson, createdAt: e.createdAt, hash: e.hash }));
  return { items, next: rows.length > EVENTS_PAGE_SIZE ? items[items.length - 1].seq : null };
}

/** Distinct actors, for the filter menu (kinds first: "reviewer:", "agent:", then each actor). */
export async function eventActors(): Promise<string[]> {
  const groups = await db().event.groupBy({ by: ["actor"], orderBy: { actor: "asc" }, take: 500 });
  return groups.map((g) => g.actor);
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
