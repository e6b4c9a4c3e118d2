import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { loadReview, REVIEW_PAGE_SIZE } from "@/lib/dashboard/review";
import { EmptyState, PageHeader } from "../../../_components/page-parts";
import { RevealedText } from "../../../_components/revealed-text";
import { PageSkeleton } from "../../../_components/states";
import { ReviewList } from "./_components/review-list";
import { resolveSessionRef } from "../_components/resolve-session";

export const metadata: Metadata = { title: "Review changes" };

type Params = { params: Promise<{ sessionId: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

/**
 * The review stream of one session: the file changes that applied without a reviewer being asked
 * (writes, edits and command change sets the policy allowed), oldest first, with their diffs, to
 * mark reviewed or revert. `?show=all` includes the ones already reviewed.
 */
export default async function SessionReviewPage({ params, searchParams }: Params) {
  const [{ sessionId: ref }, query] = await Promise.all([params, searchParams]);
  await requireReviewerPage(pathWithQuery(`/sessions/${ref}/review`, query));
  // A session's name in the URL redirects to its id (see resolveSessionRef).
  const { id: sessionId } = await resolveSessionRef(ref, "/review", query);
  if (!sessionId) notFound();
  const all = query.show === "all";
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Review sessionId={sessionId} all={all} />
    </Suspense>
  );
}

async function Review({ sessionId, all }: { sessionId: string; all: boolean }) {
  const { session, items, more } = await loadReview(sessionId, all ? "all" : "unseen");
  if (!session) notFound();
  const unseen = items.filter((i) => i.reviewedAt === null).length;
  return (
    <>
      <PageHeader
        title={
          <span className="break-words">
            Review: <RevealedText text={session.name} />
          </span>
        }
        description="Changes that applied without asking (the policy or a grant allowed them). Each was backed up; read the diff, mark it reviewed, or revert it."
      >
        <span className="flex flex-wrap gap-3 text-sm">
          <span data-testid="review-unseen-count">{unseen} unseen</span>
          <Link href={all ? `/sessions/${sessionId}/review` : `/sessions/${sessionId}/review?show=all`} className="underline">
            {all ? "Only unseen" : "Include reviewed"}
          </Link>
          <Link href={`/sessions/${sessionId}`} className="underline">
            Session timeline
          </Link>
        </span>
      </PageHeader>
      {items.length === 0 ? (
        <EmptyState title="Nothing to review">Every change this session made without asking has been reviewed.</EmptyState>
      ) : (
        <ReviewList sessionId={sessionId} items={items} />
      )}
      {more > 0 && (
        <p className="mt-4 text-sm text-zinc-700 dark:text-zinc-300">
          {more} more beyond the first {REVIEW_PAGE_SIZE}: mark these reviewed to see the next ones.
        </p>
      )}
    </>
  );
}
