"use client";

import Link from "next/link";
import { useActionState } from "react";
import type { ReviewItem } from "@/lib/dashboard/review";
import { formatTime } from "@/lib/dashboard/format";
import { DiffView } from "../../../../_components/diff-view";
import { BUTTON, Card } from "../../../../_components/page-parts";
import { RevealedText } from "../../../../_components/revealed-text";
import { ErrorNote } from "../../../../_components/action-form";
import { markReviewedAction, revertFromReviewAction, type ReviewActionState } from "../actions";

/**
 * The changes of one session that applied without asking, each with its diff and its own
 * "Mark reviewed" and "Revert" buttons, and "Mark all shown reviewed" above them. A revert's
 * conflicts (files changed since) are shown beside the change; nothing is changed then.
 */
export function ReviewList({ sessionId, items }: { sessionId: string; items: ReviewItem[] }) {
  const unseen = items.filter((i) => i.reviewedAt === null);
  const [allState, markAll, markingAll] = useActionState(markReviewedAction, null);
  const allDone = allState?.ok === true;
  return (
    <div className="space-y-4">
      {unseen.length > 0 && (
        <form action={markAll} className="flex flex-wrap items-center gap-2" data-testid="mark-all">
          <input type="hidden" name="sessionId" value={sessionId} />
          <input type="hidden" name="callIds" value={unseen.map((i) => i.callId).join(",")} />
          <button type="submit" className={BUTTON.primary} disabled={markingAll || allDone}>
            Mark all {unseen.length} shown reviewed
          </button>
          {allState && <Message state={allState} />}
        </form>
      )}
      {items.map((item) => (
        <ReviewCard key={item.callId} sessionId={sessionId} item={item} markedByAll={allState?.ok === true && (allState.callIds ?? []).includes(item.callId)} />
      ))}
    </div>
  );
}

function Message({ state }: { state: NonNullable<ReviewActionState> }) {
  if (!state.ok) return <ErrorNote error={state.error} className="font-medium" />;
  return (
    <p role="status" className="text-sm text-emerald-800 dark:text-emerald-300">
      {state.message}
    </p>
  );
}

function ReviewCard({ sessionId, item, markedByAll }: { sessionId: string; item: ReviewItem; markedByAll: boolean }) {
  const [markState, mark, marking] = useActionState(markReviewedAction, null);
  const [revertState, revert, reverting] = useActionState(revertFromReviewAction, null);
  const reviewedHere = markedByAll || markState?.ok === true || revertState?.ok === true;
  const counts = (
    <span>
      <span className="text-emerald-800 dark:text-emerald-400">+{item.additions}</span> <span className="text-red-800 dark:text-red-400">−{item.deletions}</span> lines
      {item.files > 1 ? ` · ${item.files} files` : ""}
      {item.truncated ? " · diff cut (see the call page)" : ""}
    </span>
  );
  return (
    <Card>
      <div className="min-w-0 space-y-2" data-testid="review-item" data-call-id={item.callId} data-reviewed={item.reviewedAt || reviewedHere ? "true" : "false"}>
        <div className="flex flex-wrap items-baseline justify-between gap-2">
          <h2 className="min-w-0 break-words font-mono text-sm font-semibold">
            {item.tool} <RevealedText text={(item.target ?? "").slice(0, 300)} />
          </h2>
          <span className="text-xs text-zinc-700 dark:text-zinc-300">
            {formatTime(item.createdAt)} · allowed by <span className="font-mono">{item.allowedBy ?? "policy"}</span> ·{" "}
            <Link href={`/calls/${item.callId}`} className="underline underline-offset-2">
              call
            </Link>
          </span>
        </div>
        {item.diff ? <DiffView diff={item.diff} created={item.created} title={counts} testId="review-diff" /> : <p className="text-sm text-zinc-700 dark:text-zinc-300">No diff could be shown for this change; the call page has what is known.</p>}
        <div className="flex flex-wrap items-center gap-2">
          {item.reviewedAt ? (
            <span className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="reviewed-by">
              Reviewed by {item.reviewedBy} at {formatTime(item.reviewedAt)}
            </span>
          ) : reviewedHere ? (
            <span className="text-sm font-medium text-emerald-800 dark:text-emerald-300">Reviewed</span>
          ) : (
            <form action={mark}>
              <input type="hidden" name="sessionId" value={sessionId} />
              <input type="hidden" name="callId" value={item.callId} />
              <button type="submit" className={BUTTON.secondary} disabled={marking} data-testid="mark-reviewed">
                Mark reviewed
              </button>
            </form>
          )}
          {revertState?.ok !== true && (
          <form
            action={revert}
            onSubmit={(e) => {
              if (!window.confirm(`Revert ${item.tool} ${item.target ?? ""}? Its files get their old bytes back (the current ones are backed up).`)) e.preventDefault();
            }}
          >
            <input type="hidden" name="sessionId" value={sessionId} />
            <input type="hidden" name="callId" value={item.callId} />
            <button type="submit" className={BUTTON.danger} disabled={reverting} data-testid="revert">
              Revert
            </button>
          </form>
          )}
          {markState && <Message state={markState} />}
          {revertState && (
            <span data-testid="revert-result">
              <Message state={revertState} />
            </span>
          )}
        </div>
      </div>
    </Card>
  );
}
