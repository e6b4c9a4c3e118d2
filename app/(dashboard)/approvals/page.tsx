import type { Metadata } from "next";
import { Suspense } from "react";
import { loadInbox } from "@/lib/dashboard/approvals";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { PageHeader } from "../_components/page-parts";
import { PageSkeleton } from "../_components/states";
import { Inbox } from "./_components/inbox";

export const metadata: Metadata = { title: "Approvals" };

/**
 * The approvals inbox: pending calls oldest first, live. `?call=<id>` selects one (the webhook
 * links here).
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
            Calls waiting for a person, oldest first. Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>a</kbd> approve, <kbd>r</kbd> reject, <kbd>e</kbd> edit content.
          </>
        }
      />
      <Suspense fallback={<PageSkeleton />}>
        <InboxLoader selected={selected} />
      </Suspense>
    </>
  );
}

async function InboxLoader({ selected }: { selected: string | null }) {
  const { items, workspaceRoot } = await loadInbox();
  return <Inbox items={items} initialSelected={selected} workspaceRoot={workspaceRoot} renderedAt={Date.now()} />;
}
