import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { formatTime } from "@/lib/dashboard/format";
import { listSessions, SESSIONS_PAGE_SIZE } from "@/lib/dashboard/sessions";
import { LiveRefresh } from "../_components/live-refresh";
import { Card, EmptyState, PageHeader, Pager } from "../_components/page-parts";
import { RevealedText } from "../_components/revealed-text";
import { PageSkeleton } from "../_components/states";

export const metadata: Metadata = { title: "Sessions" };

/** Agent sessions, most recently active first, with their call, pending, unseen-change and error counts. */
export default async function SessionsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  await requireReviewerPage(pathWithQuery("/sessions", params));
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Sessions params={params} />
    </Suspense>
  );
}

async function Sessions({ params }: { params: Record<string, string | string[] | undefined> }) {
  const page = Math.max(1, Number(params.page) || 1);
  const agent = typeof params.agent === "string" ? params.agent : undefined;
  const { items, total } = await listSessions(page, agent);
  return (
    <>
      <LiveRefresh />
      <PageHeader title="Sessions" description="One session per agent run (its X-Agent-Session or MCP session, else one per token per server start)." />
      {items.length === 0 ? (
        <EmptyState title="No sessions yet">An agent&apos;s first tool call starts a session.</EmptyState>
      ) : (
        <Card>
          <div className="-mx-4 overflow-x-auto px-4">
            <table className="w-full min-w-[50rem] text-left text-sm" data-testid="sessions">
              <thead className="text-xs text-zinc-500">
                <tr>
                  <th className="py-2 pr-3 font-medium">Session</th>
                  <th className="py-2 pr-3 font-medium">Workspace</th>
                  <th className="py-2 pr-3 font-medium">Started (UTC)</th>
                  <th className="py-2 pr-3 font-medium">Last call</th>
                  <th className="py-2 pr-3 text-right font-medium">Calls</th>
                  <th className="py-2 pr-3 text-right font-medium">Pending</th>
                  <th className="py-2 pr-3 text-right font-medium">Unseen changes</th>
                  <th className="py-2 text-right font-medium">With errors</th>
                </tr>
              </thead>
              <tbody>
                {items.map((s) => (
                  <tr key={s.id} className="border-t border-zinc-100 align-top dark:border-zinc-800">
                    <td className="py-2 pr-3">
                      <Link href={`/sessions/${s.id}`} className="break-words font-medium underline underline-offset-2" data-testid="session-name">
                        <RevealedText text={s.name} />
                      </Link>
                      <div className="text-xs text-zinc-600 dark:text-zinc-400">
                        {s.agentName ?? "anonymous"} · {s.door}
                      </div>
                    </td>
                    <td className="py-2 pr-3 font-mono text-xs">
                      <RevealedText text={s.workspaceRoot} />
                    </td>
                    <td className="whitespace-nowrap py-2 pr-3 font-mono text-xs">{formatTime(s.startedAt)}</td>
                    <td className="whitespace-nowrap py-2 pr-3 font-mono text-xs">{formatTime(s.lastCallAt)}</td>
                    <td className="py-2 pr-3 text-right tabular-nums">{s.calls.toLocaleString("en")}</td>
                    <td className="py-2 pr-3 text-right tabular-nums">
                      {s.pending > 0 ? <Link className="font-semibold text-amber-700 underline dark:text-amber-300" href="/approvals">{s.pending}</Link> : 0}
                    </td>
                    <td className="py-2 pr-3 text-right tabular-nums" data-testid="session-unseen">
                      {s.unseen > 0 ? <Link className="font-semibold text-sky-800 underline dark:text-sky-300" href={`/sessions/${s.id}/review`}>{s.unseen}</Link> : 0}
                    </td>
                    <td data-testid="session-errors" className={`py-2 text-right tabular-nums ${s.errors > 0 ? "font-semibold text-red-700 dark:text-red-400" : ""}`}>{s.errors.toLocaleString("en")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={page} pageSize={SESSIONS_PAGE_SIZE} total={total} href={(p) => pathWithQuery("/sessions", { ...params, page: String(p) })} />
        </Card>
      )}
    </>
  );
}
