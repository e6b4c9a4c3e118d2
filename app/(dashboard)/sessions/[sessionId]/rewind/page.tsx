import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { rewindAsReviewer } from "@/lib/dashboard/effects";
import { formatTime } from "@/lib/dashboard/format";
import { ActionForm } from "../../../_components/action-form";
import { DiffView } from "../../../_components/diff-view";
import { Card, Mono, PageHeader } from "../../../_components/page-parts";
import { RevealedText } from "../../../_components/revealed-text";
import { rewindAction } from "./actions";
import { resolveSessionRef } from "../_components/resolve-session";

export const metadata: Metadata = { title: "Rewind session" };

type Params = { params: Promise<{ sessionId: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

/**
 * "Put the workspace back as it was before this call": the calls that will be undone (newest
 * first), the combined diff and any conflicts, computed without changing anything; then one
 * button that rewinds (one reviewer action in the audit log). After it ran, the page re-renders
 * with the rewind's answer: paths already back as they were are not conflicts (lib/effects/rewind.ts),
 * so a clean rewind shows only its result and nothing left to undo; the red box is for paths that
 * really changed since.
 */
export default async function RewindPage({ params, searchParams }: Params) {
  const [{ sessionId: ref }, query] = await Promise.all([params, searchParams]);
  const before = typeof query.before === "string" ? query.before : "";
  const reviewer = await requireReviewerPage(`/sessions/${ref}/rewind?before=${encodeURIComponent(before)}`);
  // A session's name in the URL redirects to its id (see resolveSessionRef).
  const { id: sessionId } = await resolveSessionRef(ref, "/rewind", query);
  if (!sessionId) notFound();
  const preview = await rewindAsReviewer(sessionId, before, reviewer.login, true);
  if (!preview.ok && preview.error.name === "not_found") notFound();
  const outcome = preview.ok ? preview.outcome : preview.outcome;
  if (!outcome) notFound();
  const c = outcome.changes;
  return (
    <>
      <PageHeader title="Rewind the session" description={<span>to just before <Mono>{before}</Mono></span>}>
        <Link href={`/sessions/${sessionId}`} className="text-sm underline">
          Back to the timeline
        </Link>
      </PageHeader>
      <div className="space-y-4" data-testid="rewind-preview">
        <Card title={outcome.reverted_calls.length > 0 ? `${outcome.reverted_calls.length} call(s) will be undone, newest first` : "No call after this one is left to undo"}>
          <ol className="space-y-1 text-sm">
            {outcome.reverted_calls.map((call) => (
              <li key={call.call_id} className="flex flex-wrap gap-2">
                <span className="font-mono text-xs text-zinc-500">{formatTime(new Date(call.created_at))}</span>
                <span className="font-mono">{call.tool}</span>
                <Link className="font-mono underline" href={`/calls/${call.call_id}`}>
                  {call.call_id}
                </Link>
                <span className="text-zinc-500">{call.files} path(s)</span>
              </li>
            ))}
          </ol>
          <p className="mt-3 text-sm">
            Result: <strong>{c.created}</strong> created, <strong>{c.modified}</strong> modified, <strong>{c.deleted}</strong> deleted.
          </p>
        </Card>
        {outcome.conflicts.length > 0 && (
          <Card title="Conflicts: files changed after the session's last change to them">
            <ul className="list-disc pl-5 text-sm text-red-700 dark:text-red-300" data-testid="rewind-conflicts">
              {outcome.conflicts.map((k) => (
                <li key={k.path}>
                  <Mono><RevealedText text={k.path} /></Mono>: expected {k.expected}, found {k.found}
                </li>
              ))}
            </ul>
            <p className="mt-2 text-sm">Nothing will be changed while there are conflicts; resolve them (or revert the later changes) first.</p>
          </Card>
        )}
        {outcome.not_revertible.length > 0 && (
          <Card title="Not revertible (generated files kept no backup)">
            <p className="text-sm">{outcome.not_revertible.slice(0, 20).join(", ")}</p>
          </Card>
        )}
        <Card title="Combined diff">{outcome.diff ? <DiffView diff={outcome.diff} title={<span>what the rewind will do</span>} /> : <p className="text-sm text-zinc-500">No line diff.</p>}</Card>
        {/* The form stays mounted after it ran: the action re-renders this page (now with nothing
            left to undo, or with conflicts), and its answer must still be shown. */}
        <ActionForm action={rewindAction} className="flex flex-wrap items-center gap-3" confirm="Rewind the workspace to before this call?" testId="rewind-form">
          <input type="hidden" name="sessionId" value={sessionId} />
          <input type="hidden" name="beforeCallId" value={before} />
          {outcome.conflicts.length === 0 && outcome.reverted_calls.length > 0 ? (
            <button type="submit" className="rounded-md bg-red-600 px-3 py-1.5 text-sm font-medium text-white">
              Rewind {outcome.reverted_calls.length} call(s)
            </button>
          ) : (
            <p className="text-sm text-zinc-500">{outcome.conflicts.length > 0 ? "Resolve the conflicts above to rewind." : "Nothing after this call is left to undo."}</p>
          )}
        </ActionForm>
      </div>
    </>
  );
}
