import { z } from "zod";
import { db } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";
import { unseenCounts } from "@/lib/dashboard/review";
import { callOutcome, FAILED_CALL_WHERE, finalDecision, sessionName, type OutcomeTone } from "@/lib/dashboard/outcome";

/**
 * Reads for the sessions list and a session's timeline. A session is one agent run
 * (lib/gateway/sessions.ts); its calls are ToolCall rows indexed by (sessionId, createdAt).
 */

/** Sessions per page of the list. */
export const SESSIONS_PAGE_SIZE = 50;
/** Most calls one timeline shows; beyond it the page says how many more match. */
export const TIMELINE_LIMIT = 50_000;

/** One row of the sessions list. */
export interface SessionRow {
  id: string;
  agentId: string | null;
  agentName: string | null;
  workspaceRoot: string;
  door: string;
  /** The agent's own session key (`key:…`, `mcp:…`) or `auto:…` for one per token per start. */
  externalId: string;
  startedAt: Date;
  lastCallAt: Date;
  calls: number;
  pending: number;
  /**
   * Calls that failed: any error name (failures, rejections, denials, expiries) and commands that
   * ran but exited non-zero, timed out or hit a limit.
   */
  errors: number;
  /** Changes that applied without asking and no reviewer has marked reviewed (lib/dashboard/review.ts). */
  unseen: number;
  /** The name the agent gave the session (its X-Agent-Session value), see `sessionName`. */
  name: string;
}

/**
 * Sessions, most recently active first.
 * @param page 1-based page number (`SESSIONS_PAGE_SIZE` per page)
 * @param agentId only this agent's sessions, when given
 */
export async function listSessions(page: number, agentId?: string): Promise<{ items: SessionRow[]; total: number }> {
  const where: Prisma.SessionWhereInput = agentId ? { agentId } : {};
  const [rows, total] = await Promise.all([
    db().session.findMany({
      where,
      orderBy: [{ lastCallAt: "desc" }, { id: "desc" }],
      skip: (Math.max(1, page) - 1) * SESSIONS_PAGE_SIZE,
      take: SESSIONS_PAGE_SIZE,
      include: { agent: { select: { name: true } }, workspace: { select: { root: true } } },
    }),
    db().session.count({ where }),
  ]);
  const ids = rows.map((r) => r.id);
  const [calls, pending, errors, unseen] = await Promise.all([
    countBySession({ sessionId: { in: ids } }),
    countBySession({ sessionId: { in: ids }, status: "pending" }),
    countBySession({ AND: [{ sessionId: { in: ids } }, FAILED_CALL_WHERE] }),
    unseenCounts(ids),
  ]);
  return {
    total,
    items: rows.map((r) => ({
      id: r.id,
      agentId: r.agentId,
      agentName: r.agent?.name ?? null,
      workspaceRoot: r.workspace.root,
      door: r.door,
      externalId: r.externalId,
      startedAt: r.startedAt,
      lastCallAt: r.lastCallAt,
      calls: calls.get(r.id) ?? 0,
      pending: pending.get(r.id) ?? 0,
      errors: errors.get(r.id) ?? 0,
      unseen: unseen.get(r.id) ?? 0,
      name: sessionName(r.externalId),
    })),
  };
}

async function countBySession(where: Prisma.ToolCallWhereInput): Promise<Map<string, number>> {
  const groups = await db().toolCall.groupBy({ by: ["sessionId"], where, _count: { _all: true } });
  return new Map(groups.map((g) => [g.sessionId, g._count._all]));
}

/** One session's header (null when unknown). */
export async function getSession(sessionId: string): Promise<SessionRow | null> {
  const row = await db().session.findUnique({
    where: { id: sessionId },
    include: { agent: { select: { name: true } }, workspace: { select: { root: true } } },
  });
  if (!row) return null;
  const [calls, pending, errors, unseen] = await Promise.all([
    db().toolCall.count({ where: { sessionId } }),
    db().toolCall.count({ where: { sessionId, status: "pending" } }),
    db().toolCall.count({ where: { AND: [{ sessionId }, FAILED_CALL_WHERE] } }),
    unseenCounts([sessionId]),
  ]);
  return {
    id: row.id,
    agentId: row.agentId,
    agentName: row.agent?.name ?? null,
    workspaceRoot: row.workspace.root,
    door: row.door,
    externalId: row.externalId,
    startedAt: row.startedAt,
    lastCallAt: row.lastCallAt,
    calls,
    pending,
    errors,
    unseen: unseen.get(sessionId) ?? 0,
    name: sessionName(row.externalId),
  };
}

/** True when a session has this id. */
export async function sessionExists(sessionId: string): Promise<boolean> {
  return (await db().session.count({ where: { id: sessionId } })) > 0;
}

/** A session a name refers to, for the page that tells several apart. */
export interface NamedSession {
  id: string;
  name: string;
  agentName: string | null;
  workspaceRoot: string;
  door: string;
  lastCallAt: Date;
}

/**
 * The sessions a name as the dashboard shows it (`sessionName`: the agent's X-Agent-Session
 * value, its MCP session id, or that value with `@<agent id>` for a second token that used it)
 * refers to, most recently active first, at most `limit`. The same name can belong to several
 * sessions: one per workspace, and the HTTP/CLI key and the MCP id are kept apart. The
 * automatic sessions (one per token per start) have no name to look up.
 */
export async function sessionsNamed(name: string, limit = 20): Promise<NamedSession[]> {
  if (name === "" || name.length > 300) return [];
  const rows = await db().session.findMany({
    where: { externalId: { in: [`key:${name}`, `mcp:${name}`] } },
    orderBy: [{ lastCallAt: "desc" }, { id: "desc" }],
    take: limit,
    include: { agent: { select: { name: true } }, workspace: { select: { root: true } } },
  });
  return rows.map((r) => ({
    id: r.id,
    name: sessionName(r.externalId),
    agentName: r.agent?.name ?? null,
    workspaceRoot: r.workspace.root,
    door: r.door,
    lastCallAt: r.lastCallAt,
  }));
}

/** Filters of the timeline, from the page's query string (every field optional). */
export const TimelineFilters = z.object({
  tool: z.string().max(100).optional().catch(undefined),
  status: z.string().max(40).optional().catch(undefined),
  decision: z.enum(["allow", "ask", "deny", "none"]).optional().catch(undefined),
  /** Path prefix on the call's workspace-relative target ("src/" = everything under src). */
  path: z.string().max(1000).optional().catch(undefined),
  /** Free text searched in paths, commands, URLs and summaries. */
  q: z.string().max(1000).optional().catch(undefined),
  /** Time range on the call's creation time, as `YYYY-MM-DDTHH:MM[:SS]` in UTC (datetime-local). */
  from: z.string().max(40).optional().catch(undefined),
  to: z.string().max(40).optional().catch(undefined),
});
export type TimelineFilters = z.infer<typeof TimelineFilters>;

/**
 * Parses search params into filters; empty strings count as absent and bad values are dropped.
 * @param params a page's `searchParams` object
 */
export function parseTimelineFilters(params: Record<string, string | string[] | undefined>): TimelineFilters {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined && value.trim() !== "") flat[k] = value.trim();
  }
  return TimelineFilters.parse(flat);
}

/** A UTC `datetime-local` value ("2026-05-01T12:30") as a Date, or undefined when not a time. */
export function parseUtcInput(value: string | undefined): Date | undefined {
  if (!value) return undefined;
  const date = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The Prisma filter of one session's calls under `filters`. */
export function timelineWhere(sessionId: string, filters: TimelineFilters): Prisma.ToolCallWhereInput {
  const and: Prisma.ToolCallWhereInput[] = [{ sessionId }];
  if (filters.tool) and.push({ tool: filters.tool });
  if (filters.status) and.push({ status: filters.status });
  if (filters.decision) and.push({ decision: filters.decision === "none" ? null : filters.decision });
  if (filters.path) and.push({ target: { startsWith: filters.path } });
  if (filters.q) {
    and.push({ OR: [{ target: { contains: filters.q } }, { pathRaw: { contains: filters.q } }, { summary: { contains: filters.q } }] });
  }
  const from = parseUtcInput(filters.from);
  const to = parseUtcInput(filters.to);
  if (from || to) and.push({ createdAt: { ...(from && { gte: from }), ...(to && { lte: to }) } });
  return { AND: and };
}

/**
 * A session's calls in columns (dictionary-coded strings), compact enough to hand 10,000+ calls
 * to the browser: row i is `ids[i]`, `tools[tool[i]]`, … Times are epoch milliseconds.
 */
export interface TimelineData {
  ids: string[];
  /** Creation time of each call (ms). */
  start: number[];
  /** Finish time (ms); -1 while it has not finished. */
  end: number[];
  /** Run time in ms (durationMs), -1 when unknown. */
  duration: number[];
  tool: number[];
  status: number[];
  decision: number[];
  target: string[];
  error: number[];
  /** Outcome of each call (index into `outcomes`): "succeeded", "exit 4", "rejected · …". */
  outcome: number[];
  /** Final decision of each call (index into `finals`): "auto-allowed", "approved", "rejected", … */
  final: number[];
  /** Dictionaries the index columns point into. `decisions`/`errors` hold "" for none. */
  tools: string[];
  statuses: string[];
  decisions: string[];
  errors: string[];
  outcomes: { label: string; tone: OutcomeTone; failed: boolean }[];
  finals: string[];
  /** Calls matching the filters (may exceed `ids.length`, which stops at TIMELINE_LIMIT). */
  matched: number;
  /** Server time when read (ms), to draw bars of unfinished calls up to now. */
  now: number;
}

/** Distinct tools and statuses of a session, for the filter menus. */
export async function timelineFacets(sessionId: string): Promise<{ tools: string[]; statuses: string[] }> {
  const [tools, statuses] = await Promise.all([
    db().toolCall.groupBy({ by: ["tool"], where: { sessionId }, orderBy: { tool: "asc" } }),
    db().toolCall.groupBy({ by: ["status"], where: { sessionId }, orderBy: { status: "asc" } }),
  ]);
  return { tools: tools.map((t) => t.tool), statuses: statuses.map((s) => s.status) };
}

/** A session's calls under `filters`, oldest first, at most TIMELINE_LIMIT, as `TimelineData`. */
export async function loadTimeline(sessionId: string, filters: TimelineFilters): Promise<TimelineData> {
  const where = timelineWhere(sessionId, filters);
  const [rows, matched] = await Promise.all([
    db().toolCall.findMany({
      where,
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: TIMELINE_LIMIT,
      select: { id: true, createdAt: true, finishedAt: true, durationMs: true, tool: true, status: true, decision: true, target: true, errorName: true, summary: true, reviewer: true },
    }),
    db().toolCall.count({ where }),
  ]);
  const dict = () => {
    const index = new Map<string, number>();
    const values: string[] = [];
    return {
      values,
      code(value: string) {
        let i = index.get(value);
        if (i === undefined) {
          i = values.length;
          values.push(value);
          index.set(value, i);
        }
        return i;
      },
    };
  };
  const tools = dict();
  const statuses = dict();
  const decisions = dict();
  const errors = dict();
  const outcomes = dict();
  const finals = dict();
  const outcomeInfo: TimelineData["outcomes"] = [];
  const data: TimelineData = {
    ids: [],
    start: [],
    end: [],
    duration: [],
    tool: [],
    status: [],
    decision: [],
    target: [],
    error: [],
    tools: tools.values,
    statuses: statuses.values,
    decisions: decisions.values,
    errors: errors.values,
    outcome: [],
    final: [],
    outcomes: outcomeInfo,
    finals: finals.values,
    matched,
    now: Date.now(),
  };
  for (const r of rows) {
    data.ids.push(r.id);
    data.start.push(r.createdAt.getTime());
    data.end.push(r.finishedAt?.getTime() ?? -1);
    data.duration.push(r.durationMs ?? -1);
    data.tool.push(tools.code(r.tool));
    data.status.push(statuses.code(r.status));
    data.decision.push(decisions.code(r.decision ?? ""));
    data.target.push(r.target ?? "");
    data.error.push(errors.code(r.errorName ?? ""));
    const outcome = callOutcome(r);
    const o = outcomes.code(outcome.label);
    if (o === outcomeInfo.length) outcomeInfo.push(outcome);
    data.outcome.push(o);
    data.final.push(finals.code(finalDecision(r)));
  }
  return data;
}
