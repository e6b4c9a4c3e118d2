import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { formatDuration, formatTime } from "@/lib/dashboard/format";
import { loadOverview } from "@/lib/dashboard/overview";
import { finalDecision } from "@/lib/dashboard/outcome";
import { FinalDecision, OutcomeBadge } from "./_components/badges";
import { LiveRefresh } from "./_components/live-refresh";
import { Card, EmptyState, PageHeader } from "./_components/page-parts";
import { RevealedText } from "./_components/revealed-text";
import { PageSkeleton } from "./_components/states";

export const metadata: Metadata = { title: "Overview" };

/** Overview: what waits, the last day's activity and the newest calls. */
export default async function OverviewPage() {
  await requireReviewerPage("/");
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Overview />
    </Suspense>
  );
}

async function Overview() {
  const o = await loadOverview();
  const stats: [string, number, string][] = [
    ["Waiting for you", o.pending, "/approvals"],
    ["Unseen changes", o.unseen, "/review"],
    ["Calls, last 24 h", o.callsLastDay, "/sessions"],
    ["Failed, last 24 h", o.errorsLastDay, "/sessions"],
    ["Sessions, last 24 h", o.sessionsLastDay, "/sessions"],
    ["Active agent tokens", o.activeAgents, "/tokens"],
  ];
  return (
    <>
      <LiveRefresh />
      <PageHeader title="Overview" description="Every tool call your agents make goes through Agent Reach and is recorded here." />
      <div className="mb-6 grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
        {stats.map(([label, value, href]) => (
          <Link key={label} href={href} className="rounded-lg border border-zinc-200 bg-white p-3 hover:border-zinc-400 dark:border-zinc-800 dark:bg-zinc-900 dark:hover:border-zinc-600">
            <div className="text-2xl font-semibold tabular-nums">{value.toLocaleString("en")}</div>
            <div className="text-xs text-zinc-600 dark:text-zinc-400">{label}</div>
          </Link>
        ))}
      </div>
      <Card title="Newest calls">
        {o.recent.length === 0 ? (
          <EmptyState title="No calls yet">
            Point an agent at <code>/api/tools</code> or <code>/api/mcp</code> with an agent token (see the README); its calls appear here as they happen.
          </EmptyState>
        ) : (
          <div className="-mx-4 overflow-x-auto px-4">
            <table className="w-full min-w-[40rem] text-left text-sm" data-testid="recent-calls">
              <thead className="text-xs text-zinc-500">
                <tr>
                  <th className="py-2 pr-3 font-medium">Time (UTC)</th>
                  <th className="py-2 pr-3 font-medium">Tool</th>
                  <th className="py-2 pr-3 font-medium">Target</th>
                  <th className="py-2 pr-3 font-medium">Decision</th>
                  <th className="py-2 pr-3 font-medium">Outcome</th>
                  <th className="py-2 text-right font-medium">Duration</th>
                </tr>
              </thead>
              <tbody>
                {o.recent.map((c) => (
                  <tr key={c.id} className="border-t border-zinc-100 align-top dark:border-zinc-800">
                    <td className="whitespace-nowrap py-2 pr-3 font-mono text-xs">
                      <Link href={`/calls/${c.id}`} className="hover:underline">
                        {formatTime(c.createdAt)}
                      </Link>
                    </td>
                    <td className="py-2 pr-3 font-mono text-xs">{c.tool}</td>
                    <td className="py-2 pr-3 font-mono text-xs">
                      <RevealedText text={c.summary ?? c.target ?? ""} />
                    </td>
                    <td className="py-2 pr-3">
                      <FinalDecision value={finalDecision(c)} />
                    </td>
                    <td className="py-2 pr-3">
                      <OutcomeBadge call={c} />
                    </td>
                    <td className="whitespace-nowrap py-2 text-right tabular-nums text-xs">{formatDuration(c.durationMs)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
