import type { Metadata } from "next";
import Form from "next/form";
import Link from "next/link";
import { Suspense } from "react";
import { verifyChain } from "@/lib/audit/events";
import { auditCounts, eventActors, eventTypes, listEvents, type EventFilters } from "@/lib/dashboard/audit";
import { parseUtcInput } from "@/lib/dashboard/sessions";
import { CopyId } from "../_components/copy-id";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { formatTime } from "@/lib/dashboard/format";
import { BUTTON, Card, EmptyState, INPUT, Mono, PageHeader } from "../_components/page-parts";
import { RevealedText } from "../_components/revealed-text";
import { PageSkeleton } from "../_components/states";

export const metadata: Metadata = { title: "Audit" };

/**
 * The audit log: the hash-chain verification result, the JSONL export of calls and events for a
 * time range, and the event log, newest first, filtered by type, call, session, actor and time.
 */
export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  await requireReviewerPage(pathWithQuery("/audit", params));
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Audit params={params} />
    </Suspense>
  );
}

async function Audit({ params }: { params: Record<string, string | string[] | undefined> }) {
  const text = (key: string) => (typeof params[key] === "string" && (params[key] as string).trim() ? (params[key] as string).trim().slice(0, 200) : undefined);
  const before = text("before") && /^\d+$/.test(text("before")!) ? Number(text("before")) : undefined;
  const type = text("type");
  const query = { type, call: text("call"), session: text("session"), actor: text("actor"), from: text("from"), to: text("to") };
  const filters: EventFilters = { before, type, callId: query.call, sessionId: query.session, actor: query.actor, from: parseUtcInput(query.from), to: parseUtcInput(query.to) };
  const [chain, counts, types, actors, events] = await Promise.all([verifyChain(), auditCounts(), eventTypes(), eventActors(), listEvents(filters)]);
  const label = "flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-700 dark:text-zinc-300";
  return (
    <>
      <PageHeader title="Audit" description="Every state change is an event whose hash covers the previous one, so an edited or deleted row breaks the chain from there on." />
      <div className="grid gap-4 lg:grid-cols-2">
        <Card title="Hash chain">
          {chain.ok ? (
            <p className="text-sm" data-testid="chain-status">
              <span className="mr-2 inline-block rounded bg-emerald-100 px-2 py-0.5 font-semibold text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100">intact</span>
              all {chain.checked.toLocaleString("en")} events verified, from {formatTime(counts.first)} to {formatTime(counts.last)}.
            </p>
          ) : (
            <p className="text-sm" role="alert" data-testid="chain-status">
              <span className="mr-2 inline-block rounded bg-red-100 px-2 py-0.5 font-semibold text-red-900 dark:bg-red-900 dark:text-red-100">broken</span>
              at event #{chain.broken?.seq} ({chain.broken?.reason.replace(/_/g, " ")}), after {chain.checked.toLocaleString("en")} good events. History from there on may have been altered.
            </p>
          )}
          <p className="mt-2 text-xs text-zinc-700 dark:text-zinc-300">
            {counts.calls.toLocaleString("en")} calls and {counts.events.toLocaleString("en")} events in the log.
          </p>
        </Card>
        <Card title="Export (JSON Lines)">
          <form action="/api/audit/export" method="get" className="flex flex-col gap-2 sm:flex-row sm:items-end" data-testid="export-form">
            <label className={label}>
              From (UTC)
              <input type="datetime-local" step="1" name="from" className={INPUT} />
            </label>
            <label className={label}>
              To (UTC)
              <input type="datetime-local" step="1" name="to" className={INPUT} />
            </label>
            <button type="submit" className={BUTTON.primary}>
              Download
            </button>
          </form>
          <p className="mt-2 text-xs text-zinc-700 dark:text-zinc-300">One object per line: the calls created in the range, then the events with their hashes. Leave a field empty for an open range.</p>
        </Card>
      </div>
      <Card title="Events" className="mt-4">
        <Form action="/audit" className="mb-3 grid grid-cols-1 items-end gap-2 sm:grid-cols-2 lg:grid-cols-4 xl:grid-cols-7" data-testid="audit-filters">
          <label className={label}>
            Type
            <select name="type" defaultValue={type ?? ""} className={INPUT}>
              <option value="">all</option>
              {types.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </label>
          <label className={label}>
            Call id
            <input name="call" defaultValue={query.call ?? ""} placeholder="call_…" className={`${INPUT} font-mono`} />
          </label>
          <label className={label}>
            Session id
            <input name="session" defaultValue={query.session ?? ""} placeholder="ses_…" className={`${INPUT} font-mono`} />
          </label>
          <label className={label}>
            Actor
            <select name="actor" defaultValue={query.actor ?? ""} className={INPUT}>
              <option value="">anyone</option>
              <option value="reviewer:">any reviewer</option>
              <option value="agent:">any agent</option>
              {actors.map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </label>
          <label className={label}>
            From (UTC)
            <input type="datetime-local" step="1" name="from" defaultValue={query.from ?? ""} className={INPUT} />
          </label>
          <label className={label}>
            To (UTC)
            <input type="datetime-local" step="1" name="to" defaultValue={query.to ?? ""} className={INPUT} />
          </label>
          <div className="flex gap-2">
            <button type="submit" className={BUTTON.secondary}>
              Filter
            </button>
            <Link href="/audit" className={BUTTON.secondary}>
              Clear
            </Link>
          </div>
        </Form>
        {events.items.length === 0 ? (
          <EmptyState title="No events">Events appear as agents call tools and reviewers decide.</EmptyState>
        ) : (
          <div className="-mx-4 overflow-x-auto px-4">
            <table className="w-full min-w-[48rem] text-left text-xs" data-testid="events">
              <thead className="text-zinc-700 dark:text-zinc-300">
                <tr>
                  <th className="py-1.5 pr-3 font-medium">#</th>
                  <th className="py-1.5 pr-3 font-medium">Time (UTC)</th>
                  <th className="py-1.5 pr-3 font-medium">Type</th>
                  <th className="py-1.5 pr-3 font-medium">Actor</th>
                  <th className="py-1.5 pr-3 font-medium">Call</th>
                  <th className="py-1.5 pr-3 font-medium">Data</th>
                  <th className="py-1.5 font-medium">Hash</th>
                </tr>
              </thead>
              <tbody>
                {events.items.map((e) => (
                  <tr key={e.seq} className="border-t border-zinc-100 align-top dark:border-zinc-800">
                    <td className="py-1.5 pr-3 tabular-nums">{e.seq}</td>
                    <td className="whitespace-nowrap py-1.5 pr-3 font-mono">{formatTime(e.createdAt)}</td>
                    <td className="py-1.5 pr-3 font-mono">{e.type}</td>
                    <td className="py-1.5 pr-3 font-mono">{e.actor}</td>
                    <td className="py-1.5 pr-3">
                      {e.callId ? (
                        <CopyId id={e.callId} href={`/calls/${e.callId}`} />
                      ) : (
                        "—"
                      )}
                    </td>
                    <td className="max-w-md py-1.5 pr-3 font-mono text-zinc-600 dark:text-zinc-400">{e.data === "{}" ? "" : <RevealedText text={e.data} />}</td>
                    <td className="py-1.5">
                      <Mono className="text-[0.7rem]">{e.hash}</Mono>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {events.next !== null && (
          <Link className={`${BUTTON.secondary} mt-3`} href={pathWithQuery("/audit", { ...query, before: String(events.next) })}>
            Older events →
          </Link>
        )}
      </Card>
    </>
  );
}
