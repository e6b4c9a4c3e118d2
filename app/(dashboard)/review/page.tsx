import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { db } from "@/lib/db";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { formatTime } from "@/lib/dashboard/format";
import { sessionName } from "@/lib/dashboard/outcome";
import { unseenCounts } from "@/lib/dashboard/review";
import { LiveRefresh } from "../_components/live-refresh";
import { Card, EmptyState, PageHeader } from "../_components/page-parts";
import { RevealedText } from "../_components/revealed-text";
import { PageSkeleton } from "../_components/states";

export const metadata: Metadata = { title: "Review" };

/** The review stream across sessions: each session with changes that applied without asking and nobody has reviewed yet. */
export default async function ReviewPage() {
  await requireReviewerPage("/review");
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Sessions />
    </Suspense>
  );
}

async function Sessions() {
  const counts = await unseenCounts();
  const sessions = await db().session.findMany({
    where: { id: { in: [...counts.keys()] } },
    orderBy: [{ lastCallAt: "desc" }, { id: "desc" }],
    include: { agent: { select: { name: true } } },
  });
  return (
    <>
      <LiveRefresh />
      <PageHeader title="Review" description="Writes, edits and command changes that applied without asking, per session, until a reviewer marks them reviewed or reverts them." />
      {sessions.length === 0 ? (
        <EmptyState title="Nothing to review">Every change that applied without asking has been reviewed.</EmptyState>
      ) : (
        <Card>
          <ul className="space-y-2 text-sm" data-testid="review-sessions">
            {sessions.map((s) => (
              <li key={s.id} className="flex flex-wrap items-baseline gap-x-3">
                <Link href={`/sessions/${s.id}/review`} className="font-medium underline underline-offset-2" data-testid="review-session">
                  <RevealedText text={sessionName(s.externalId)} />
                </Link>
                <span className="rounded-full bg-sky-800 px-2 text-xs font-semibold text-white" data-testid="unseen-count">
                  {counts.get(s.id)} unseen
                </span>
                <span className="text-xs text-zinc-700 dark:text-zinc-300">
                  {s.agent?.name ?? "anonymous"} · last call {formatTime(s.lastCallAt)}
                </span>
              </li>
            ))}
          </ul>
        </Card>
      )}
    </>
  );
}
