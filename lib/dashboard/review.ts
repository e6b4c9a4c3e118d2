import { db } from "@/lib/db";
import { appendEvent } from "@/lib/audit/events";
import { callDiff, getCallDetail } from "@/lib/dashboard/calls";
import { revertCallAsReviewer } from "@/lib/dashboard/effects";
import { sessionName } from "@/lib/dashboard/outcome";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { Envelope } from "@/lib/result";
import { toolNamesChanging } from "@/lib/tools/registry";

/**
 * The review stream: file changes that applied without a reviewer being asked (the policy allowed
 * the write, edit or command, whatever rule or grant allowed it), listed per session for a
 * reviewer to read afterwards, mark reviewed, or revert. A change is "unseen" until a reviewer
 * marks its call reviewed (ToolCall.reviewedAt); marking and reverting are audited.
 */

/** Tools whose one-file change is read from the call's row (its backup and sha256s). */
const WRITE_TOOLS = toolNamesChanging("file");

/** Most changes one review page shows. */
export const REVIEW_PAGE_SIZE = 50;

/** Tools whose changes are a journaled change set (captured by the sandbox, or a revert). */
const CHANGE_SET_TOOLS = toolNamesChanging("change_set");

/**
 * Where-clause of the calls that changed files without asking: decided "allow" by the policy (no
 * reviewer approved them; the dashboard's own actions excluded), succeeded, and either a write
 * tool with a new file state, or a call whose change set applied with at least one file. The
 * change sets are looked up for the candidate calls only, by their small columns (the stored
 * summary with its diff is never read here: this runs for every dashboard page's count).
 */
/** The newest applied change sets the review stream considers (older ones are in the timeline). */
const CHANGE_SET_WINDOW = 5000;

async function allowedChangesWhere(extra: Prisma.ToolCallWhereInput): Promise<Prisma.ToolCallWhereInput> {
  const base: Prisma.ToolCallWhereInput = { ...extra, decision: "allow", reviewer: null, door: { not: "dashboard" }, status: "succeeded" };
  // Start from the applied change sets, newest first: a call that changed no file has none, so
  // commands that change nothing (however many) cannot push real changes out of the window.
  const applied = await db().changeSet.findMany({ where: { status: "applied" }, orderBy: { createdAt: "desc" }, select: { callId: true }, take: CHANGE_SET_WINDOW });
  const candidates = applied.length ? await db().toolCall.findMany({ where: { ...base, id: { in: applied.map((a) => a.callId) }, tool: { in: CHANGE_SET_TOOLS } }, select: { id: true } }) : [];
  const ids = candidates.map((c) => c.id);
  const withFiles = ids.length ? await db().fileChange.groupBy({ by: ["callId"], where: { callId: { in: ids } }, _count: { _all: true } }) : [];
  const changed = withFiles.filter((g) => g._count._all > 0).map((g) => g.callId);
  return { ...base, OR: [{ id: { in: changed } }, { tool: { in: WRITE_TOOLS }, shaAfter: { not: null } }] };
}

/** A write that left the file as it was (same sha256 before and after) changed nothing. */
function changedSomething(row: { tool: string; shaBefore: string | null; shaAfter: string | null }): boolean {
  return !WRITE_TOOLS.includes(row.tool) || row.shaBefore !== row.shaAfter;
}

/**
 * Unseen (not yet reviewed) changes per session.
 * @param sessionIds only these sessions, when given
 * @returns session id → count (sessions without unseen changes are absent)
 */
export async function unseenCounts(sessionIds?: string[]): Promise<Map<string, number>> {
  const where = await allowedChangesWhere({ reviewedAt: null, ...(sessionIds && { sessionId: { in: sessionIds } }) });
  const rows = await db().toolCall.findMany({ where, select: { sessionId: true, tool: true, shaBefore: true, shaAfter: true } });
  const out = new Map<string, number>();
  for (const r of rows) if (changedSomething(r)) out.set(r.sessionId, (out.get(r.sessionId) ?? 0) + 1);
  return out;
}

/** Unseen changes in all sessions (the navigation's and the overview's count). */
export async function unseenTotal(): Promise<number> {
  let total = 0;
  for (const n of (await unseenCounts()).values()) total += n;
  return total;
}

/** One change in the review stream. */
export interface ReviewItem {
  callId: string;
  tool: string;
  target: string | null;
  summary: string | null;
  createdAt: Date;
  /** The rule (or grant) that allowed it, from the stored decision. */
  allowedBy: string | null;
  reviewedAt: Date | null;
  reviewedBy: string | null;
  /** The unified diff of what it changed ("" when none could be shown). */
  diff: string;
  additions: number;
  deletions: number;
  /** A file the call created (diff shown as a new file). */
  created: boolean;
  truncated: boolean;
  /** Files it changed (1 for a write). */
  files: number;
}

/**
 * The session's changes that applied without asking, oldest first, with their diffs (the same
 * diffs the call page shows: recomputed from stored bytes for writes, the change set's combined
 * diff for commands).
 * @param include "unseen" (default) or "all" (reviewed ones too)
 */
export async function loadReview(sessionId: string, include: "unseen" | "all" = "unseen"): Promise<{ session: { id: string; name: string } | null; items: ReviewItem[]; more: number }> {
  const session = await db().session.findUnique({ where: { id: sessionId }, select: { id: true, externalId: true } });
  if (!session) return { session: null, items: [], more: 0 };
  const where = await allowedChangesWhere({ sessionId, ...(include === "unseen" && { reviewedAt: null }) });
  const rows = (
    await db().toolCall.findMany({
      where,
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: REVIEW_PAGE_SIZE * 2,
      select: { id: true, tool: true, target: true, summary: true, createdAt: true, decisionJson: true, reviewedAt: true, reviewedBy: true, shaBefore: true, shaAfter: true },
    })
  ).filter(changedSomething);
  const shown = rows.slice(0, REVIEW_PAGE_SIZE);
  const items = await Promise.all(shown.map((r) => reviewItem(r)));
  return { session: { id: session.id, name: sessionName(session.externalId) }, items, more: rows.length - shown.length };
}

async function reviewItem(r: { id: string; tool: string; target: string | null; summary: string | null; createdAt: Date; decisionJson: string | null; reviewedAt: Date | null; reviewedBy: string | null; shaBefore: string | null }): Promise<ReviewItem> {
  const base = { callId: r.id, tool: r.tool, target: r.target, summary: r.summary, createdAt: r.createdAt, allowedBy: decidingRule(r.decisionJson), reviewedAt: r.reviewedAt, reviewedBy: r.reviewedBy };
  const set = await db().changeSet.findUnique({ where: { callId: r.id }, select: { summaryJson: true } });
  if (set) {
    const summary = JSON.parse(set.summaryJson) as { diff?: string; total_files?: number; diff_truncated?: boolean };
    const diff = summary.diff ?? "";
    return { ...base, diff, ...countLines(diff), created: false, truncated: summary.diff_truncated === true, files: summary.total_files ?? 0 };
  }
  const detail = await getCallDetail(r.id);
  const d = detail ? await callDiff(detail) : null;
  return { ...base, diff: d?.diff ?? "", additions: d?.additions ?? 0, deletions: d?.deletions ?? 0, created: r.shaBefore === null, truncated: d?.truncated ?? false, files: 1 };
}

function countLines(diff: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+") && !line.startsWith("+++")) additions++;
    else if (line.startsWith("-") && !line.startsWith("---")) deletions++;
  }
  return { additions, deletions };
}

/** The deciding rule's id in a stored verdict (for commands: the parts' rules), or null. */
function decidingRule(json: string | null): string | null {
  if (!json) return null;
  try {
    const v = JSON.parse(json) as { rule?: { id?: string } | null; parts?: Array<{ rule?: { id?: string } | null }> };
    if (v.rule?.id) return v.rule.id;
    const ids = [...new Set((v.parts ?? []).map((p) => p.rule?.id).filter((id): id is string => !!id))];
    return ids.length ? ids.join(", ") : null;
  } catch {
    return null;
  }
}

/**
 * Marks calls reviewed as reviewer `login`: only calls of the review stream not yet reviewed are
 * marked; each gets a `call.reviewed` event (the reviewer as actor).
 * @returns the ids marked now
 */
export async function markReviewed(callIds: string[], login: string): Promise<string[]> {
  if (callIds.length === 0) return [];
  const where = await allowedChangesWhere({ id: { in: callIds.slice(0, 500) }, reviewedAt: null });
  const rows = await db().toolCall.findMany({ where, select: { id: true } });
  const marked: string[] = [];
  const now = new Date();
  for (const { id } of rows) {
    const { count } = await db().toolCall.updateMany({ where: { id, reviewedAt: null }, data: { reviewedAt: now, reviewedBy: login } });
    if (count !== 1) continue;
    marked.push(id);
    await appendEvent({ type: "call.reviewed", actor: `reviewer:${login}`, callId: id, data: { reviewed_at: now.toISOString() } });
  }
  return marked;
}

/**
 * Reverts a change of the review stream as reviewer `login`, through revert_call (the same path
 * as the call page's and the agent's revert: backed up, journaled, conflicts refused), then marks
 * it reviewed (the reviewer has dealt with it).
 * @returns the revert call's envelope (conflict 605 lists the files changed since; nothing changes then)
 */
export async function revertFromReview(callId: string, login: string): Promise<Envelope> {
  const envelope = await revertCallAsReviewer(callId, login);
  if (envelope.ok) await markReviewed([callId], login);
  return envelope;
}
