import { db } from "@/lib/db";
import { listRecentCalls, type RecentCall } from "@/lib/audit/queries";
import { FAILED_CALL_WHERE } from "@/lib/dashboard/outcome";
import { unseenTotal } from "@/lib/dashboard/review";

/** Figures of the overview page. */
export interface Overview {
  pending: number;
  /** Changes that applied without asking and no reviewer has marked reviewed (the review stream). */
  unseen: number;
  /** Calls created in the last 24 hours, and those of them that failed (errors and failed commands). */
  callsLastDay: number;
  errorsLastDay: number;
  sessionsLastDay: number;
  activeAgents: number;
  recent: RecentCall[];
}

/** The overview: counts over the last 24 hours and the 25 newest calls. */
export async function loadOverview(now = new Date()): Promise<Overview> {
  const since = new Date(now.getTime() - 86_400_000);
  const [pending, callsLastDay, errorsLastDay, sessionsLastDay, activeAgents, recent, unseen] = await Promise.all([
    db().toolCall.count({ where: { status: "pending" } }),
    db().toolCall.count({ where: { createdAt: { gte: since } } }),
    db().toolCall.count({ where: { AND: [{ createdAt: { gte: since } }, FAILED_CALL_WHERE] } }),
    db().session.count({ where: { lastCallAt: { gte: since } } }),
    db().agent.count({ where: { revokedAt: null } }),
    listRecentCalls(25),
    unseenTotal(),
  ]);
  return { pending, unseen, callsLastDay, errorsLastDay, sessionsLastDay, activeAgents, recent };
}
