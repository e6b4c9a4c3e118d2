import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { loadInbox, loadMissed } from "@/lib/dashboard/approvals";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { formatTime } from "@/lib/dashboard/format";
import { Card, PageHeader } from "../_components/page-parts";
import { RevealedText } from "../_components/revealed-text";
import { PageSkeleton } from "../_components/states";
import { Inbox } from "./_components/inbox";

export const metadata: Metadata = { title: "Approvals" };

/**
 * The approvals inbox: pending calls oldest first, live. `?call=<id>` selects one (the webhook
 * links here). Below it, the calls missed lately (expired or withdrawn without a decision).
 */
export default async function ApprovalsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  await requireReviewerPage(pathWithQuery("/approvals", params));
  const selected = typeof params.call === "string" ? params.call : null;
  return (
    <>
      <PageHeader
        title="Approvals"
        description={
          <>
            Calls waiting for a person, oldest first.{" "}
            <span className="ar-key-hint">
              Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>a</kbd> approve, <kbd>r</kbd> reject, <kbd>e</kbd> edit (where the tool allows it).
            </span>
          </>
        }
      />
      <Suspense fallback={<PageSkeleton />}>
        <InboxLoader selected={selected} />
      </Suspense>
      <Suspense fallback={null}>
        <Missed />
      </Suspense>
    </>
  );
}

async function InboxLoader({ selected }: { selected: string | null }) {
  const { items, workspaceRoot } = await loadInbox();
  return <Inbox items={items} initialSelected={selected} workspaceRoot={workspaceRoot} renderedAt={Date.now()} />;
}

/** Calls that waited and ended without a reviewer in the last week. */
async function Missed() {
  const missed = await loadMissed();
  if (missed.length === 0) return null;
  return (
    <Card title={`Missed (${missed.length}, last 7 days)`} className="mt-6">
      <p className="mb-2 text-sm text-zinc-700 dark:text-zinc-300">These waited for a decision and ended without one: they expired, or the system withdrew them. The agent was told; nothing ran.</p>
      <ul className="space-y-1 text-sm" data-testid="missed">
        {missed.map((m) => (
          <li key={m.id} className="flex min-w-0 flex-wrap items-baseline gap-x-2">
            <span className="rounded bg-zinc-200 px-1.5 py-0.5 text-xs font-medium text-zinc-900 dark:bg-zinc-700 dark:text-zinc-50">{m.how}</span>
            <Link href={`/calls/${m.id}`} className="min-w-0 break-words font-mono text-xs underline underline-offset-2">
              {m.tool} <RevealedText text={(m.target ?? "").slice(0, 200)} />
            </Link>
            <span className="text-xs text-zinc-700 dark:text-zinc-300">
              queued {formatTime(m.createdAt)}
              {m.endedAt ? `, ended ${formatTime(m.endedAt)}` : ""}
              {m.how === "withdrawn" && m.reason ? ` (${m.reason})` : ""}
            </span>
          </li>
        ))}
      </ul>
    </Card>
  );
}
