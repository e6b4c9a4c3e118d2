import { db } from "@/lib/db";

/**
 * The deletion budget of an agent: how many files its commands deleted, or destroyed the content
 * of (replaced by a link, emptied, cut by half: lib/effects/stage.ts `destroyedHow`), in this
 * workspace, without a reviewer, in the last `DELETION_WINDOW_MS`. The large-deletion hold (lib/effects/stage.ts)
 * counts these with the change set at hand, so an agent that removes a tree fifty files at a time
 * meets the same hold as one that removes it at once. The budget belongs to the agent's token,
 * not to a session: the session key is the agent's own choice, and a new one per call would
 * reset it. A change set a reviewer approved does not count (the person saw it), nor do bulky
 * generated files (node_modules, caches) that keep no backups.
 */

/** How far back an agent's earlier deletions count (ms): 30 minutes. */
export const DELETION_WINDOW_MS = 30 * 60 * 1000;

/** Earlier deletions of the same agent that count against the budget. */
export interface PriorDeletions {
  /** Files whose content was destroyed: deleted, replaced by a link, emptied or cut by half. */
  count: number;
  /** Of `count`, the files not deleted but emptied, replaced by links or cut by half. */
  emptied?: number;
  /** The calls that deleted them, newest first (at most 5). */
  calls: string[];
}

/**
 * Files deleted or emptied by the applied, unreviewed command change sets of the agent that made `callId`,
 * in `workspaceId`, since `now - DELETION_WINDOW_MS` (the call itself excluded). A call without an
 * agent (in process, tests) has no budget of its own: nothing earlier counts.
 * @returns the count and the newest calls that contributed (a few ids, for the hold's reason)
 */
export async function priorDeletions(callId: string, workspaceId: string, now = new Date()): Promise<PriorDeletions> {
  const call = await db().toolCall.findUnique({ where: { id: callId }, select: { agentId: true } });
  if (!call?.agentId) return { count: 0, calls: [] };
  const recent = await db().toolCall.findMany({
    where: { agentId: call.agentId, workspaceId, reviewer: null, id: { not: callId }, createdAt: { gte: new Date(now.getTime() - DELETION_WINDOW_MS) } },
    select: { id: true },
    orderBy: { createdAt: "desc" },
  });
  if (recent.length === 0) return { count: 0, calls: [] };
  const applied = await db().changeSet.findMany({ where: { callId: { in: recent.map((c) => c.id) }, status: "applied" }, select: { callId: true, summaryJson: true } });
  if (applied.length === 0) return { count: 0, calls: [] };
  const byCall = await db().fileChange.groupBy({
    by: ["callId"],
    where: { callId: { in: applied.map((c) => c.callId) }, kind: "deleted", bulky: false },
    _count: { _all: true },
  });
  const counted = new Map(byCall.map((g) => [g.callId, g._count._all]));
  // The change set's summary counts every file whose content it destroyed (`destroyed`), deletions
  // included; a change set staged before that count existed has its deleted rows only.
  let emptied = 0;
  for (const set of applied) {
    const destroyed = Number((JSON.parse(set.summaryJson) as { destroyed?: unknown }).destroyed ?? 0);
    const deleted = counted.get(set.callId) ?? 0;
    if (Number.isFinite(destroyed) && destroyed > deleted) {
      emptied += destroyed - deleted;
      counted.set(set.callId, destroyed);
    }
  }
  const calls = recent.map((c) => c.id).filter((id) => (counted.get(id) ?? 0) > 0);
  return { count: [...counted.values()].reduce((a, b) => a + b, 0), emptied, calls: calls.slice(0, 5) };
}
