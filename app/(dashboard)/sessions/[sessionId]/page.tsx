import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { formatTime } from "@/lib/dashboard/format";
import { getSession, loadTimeline, parseTimelineFilters, timelineFacets, TIMELINE_LIMIT, type NamedSession, type TimelineFilters } from "@/lib/dashboard/sessions";
import { Card, Facts, Mono, PageHeader } from "../../_components/page-parts";
import { CopyId } from "../../_components/copy-id";
import { RevealedText } from "../../_components/revealed-text";
import { PageSkeleton } from "../../_components/states";
import { TimelineFilterForm } from "./_components/filter-form";
import { resolveSessionRef } from "./_components/resolve-session";
import { Timeline } from "./_components/timeline";
import { changingCalls } from "@/lib/dashboard/effects";

export const metadata: Metadata = { title: "Session timeline" };

type Params = { params: Promise<{ sessionId: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

/**
 * One session: its calls on a time axis above a virtualised table, with filters and search. The
 * URL names the session by id (`ses_…`) or by its name (see resolveSessionRef).
 */
export default async function SessionPage({ params, searchParams }: Params) {
  const [{ sessionId: ref }, query] = await Promise.all([params, searchParams]);
  await requireReviewerPage(pathWithQuery(`/sessions/${ref}`, query));
  // `ref` is the session's id, or its name (one session: redirected to its id; several: listed).
  const resolved = await resolveSessionRef(ref, "", query);
  if (resolved.several) return <SessionsNamed name={ref} sessions={resolved.several} />;
  const sessionId = resolved.id;
  const session = await getSession(sessionId);
  if (!session) notFound();
  const filters = parseTimelineFilters(query);
  return (
    <>
      <PageHeader
        title={
          <span className="break-words" data-testid="session-title">
            <RevealedText text={session.name} /> <span className="text-base font-normal text-zinc-600 dark:text-zinc-400">· {session.agentName ?? "an anonymous agent"}</span>
          </span>
        }
        description={<CopyId id={session.id} />}
      >
        <Link href="/sessions" className="text-sm underline">
          All sessions
        </Link>
      </PageHeader>
      <Card className="mb-4">
        <Facts
          items={[
            ["Workspace", <Mono key="w"><RevealedText text={session.workspaceRoot} /></Mono>],
            ["Door and key", <span key="d">{session.door} · <Mono><RevealedText text={session.externalId} /></Mono></span>],
            ["Started", formatTime(session.startedAt)],
            ["Last call", formatTime(session.lastCallAt)],
            [
              "Calls",
              <span key="c" data-testid="session-counts">
                {session.calls.toLocaleString("en")} ({session.pending} pending,{" "}
                <span className={session.errors > 0 ? "font-semibold text-red-700 dark:text-red-400" : ""}>{session.errors.toLocaleString("en")} with errors</span>)
              </span>,
            ],
            [
              "Unseen changes",
              <span key="u" data-testid="session-unseen">
                {session.unseen > 0 ? (
                  <Link href={`/sessions/${session.id}/review`} className="font-semibold text-sky-800 underline underline-offset-2 dark:text-sky-300">
                    {session.unseen} applied without asking: review them
                  </Link>
                ) : (
                  <Link href={`/sessions/${session.id}/review?show=all`} className="underline underline-offset-2">
                    none (see reviewed)
                  </Link>
                )}
              </span>,
            ],
          ]}
        />
      </Card>
      <Suspense key={`${sessionId}?${JSON.stringify(filters)}`} fallback={<PageSkeleton />}>
        <SessionCalls sessionId={sessionId} filters={filters} />
      </Suspense>
    </>
  );
}

async function SessionCalls({ sessionId, filters }: { sessionId: string; filters: TimelineFilters }) {
  const [facets, data] = await Promise.all([timelineFacets(sessionId), loadTimeline(sessionId, filters)]);
  const filtered = Object.values(filters).some((v) => v !== undefined);
  return (
    <>
      <TimelineFilterForm action={`/sessions/${sessionId}`} filters={filters} tools={facets.tools} statuses={facets.statuses} />
      {data.matched > data.ids.length && (
        <p className="mb-3 rounded-md border border-amber-300 bg-amber-50 p-2 text-sm dark:border-amber-800 dark:bg-amber-950">
          Showing the first {TIMELINE_LIMIT.toLocaleString("en")} of {data.matched.toLocaleString("en")} matching calls; narrow the filters or the time range to see the rest.
        </p>
      )}
      <Timeline data={data} filtered={filtered} />
      <RewindList sessionId={sessionId} />
    </>
  );
}

/** The session's calls that changed files, each with its diff (call page) and a rewind to before it. */
async function RewindList({ sessionId }: { sessionId: string }) {
  const calls = await changingCalls(sessionId);
  if (calls.length === 0) return null;
  return (
    <Card title="File changes of this session (newest first)" className="mt-4">
      <ol className="space-y-1 text-sm" data-testid="session-changes">
        {calls.map((c) => (
          <li key={c.id} className="flex flex-wrap items-center gap-2">
            <span className="font-mono text-xs text-zinc-500">{formatTime(c.createdAt)}</span>
            <span className="font-mono">{c.tool}</span>
            <Link className="underline" href={`/calls/${c.id}`}>
              <RevealedText text={c.summary ?? c.target ?? c.id} />
            </Link>
            <Link className="ml-auto rounded-md border border-zinc-300 px-2 py-0.5 text-xs dark:border-zinc-700" href={`/sessions/${sessionId}/rewind?before=${c.id}`} data-testid="rewind-link">
              Rewind to before this call
            </Link>
          </li>
        ))}
      </ol>
    </Card>
  );
}

/** Several sessions share the name in the URL (other workspaces, or the MCP and HTTP doors): pick one. */
function SessionsNamed({ name, sessions }: { name: string; sessions: NamedSession[] }) {
  return (
    <>
      <PageHeader title={<span className="break-words">Sessions named <RevealedText text={name} /></span>} description={`${sessions.length} sessions have this name; pick one.`}>
        <Link href="/sessions" className="text-sm underline">
          All sessions
        </Link>
      </PageHeader>
      <Card>
        <ul className="space-y-1 text-sm" data-testid="sessions-named">
          {sessions.map((s) => (
            <li key={s.id} className="flex flex-wrap gap-2">
              <Link className="font-mono underline" href={`/sessions/${s.id}`}>
                {s.id}
              </Link>
              <span>{s.agentName ?? "an anonymous agent"}</span>
              <span className="text-zinc-500">
                {s.door} · <RevealedText text={s.workspaceRoot} /> · last call {formatTime(s.lastCallAt)}
              </span>
            </li>
          ))}
        </ul>
      </Card>
    </>
  );
}
