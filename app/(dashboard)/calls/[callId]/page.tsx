import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { callDiff, callExists, getCallDetail, splitOutputs, type CallBackup } from "@/lib/dashboard/calls";
import { formatBytes, formatDuration, formatTime } from "@/lib/dashboard/format";
import { finalDecision } from "@/lib/dashboard/outcome";
import { FinalDecision, StatusBadge } from "../../_components/badges";
import { CopyId } from "../../_components/copy-id";
import { DiffView } from "../../_components/diff-view";
import { Card, Facts, Mono, PageHeader } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { PageSkeleton } from "../../_components/states";
import { JsonBlock, TextBlock } from "../../_components/text-block";
import { VerdictView } from "../../_components/verdict-view";
import { MaskedResult } from "./_components/masked-result";
import { FileChanges } from "./_components/file-changes";
import { ActionForm } from "../../_components/action-form";
import { getCallChanges, isRevertible } from "@/lib/dashboard/effects";
import { revertCallAction } from "./actions";
import { grantsFromCall } from "@/lib/approvals/grants";

export const metadata: Metadata = { title: "Call" };

/**
 * One call in full: arguments (as received and as edited), the policy decision and rule, the
 * approval history (who, when, why: from the event log), the result and outputs, the diff and
 * the backup it made.
 */
export default async function CallPage({ params }: { params: Promise<{ callId: string }> }) {
  const { callId } = await params;
  await requireReviewerPage(`/calls/${callId}`);
  if (!(await callExists(callId))) notFound();
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Call callId={callId} />
    </Suspense>
  );
}

async function Call({ callId }: { callId: string }) {
  const call = await getCallDetail(callId);
  if (!call) notFound();
  const diff = await callDiff(call);
  const changes = await getCallChanges(callId);
  const revertible = await isRevertible(callId);
  const data = call.envelope?.ok ? call.envelope.data : undefined;
  const { outputs, rest } = splitOutputs(data);
  const grants = await grantsFromCall(callId);
  const history = call.events.filter((e) => e.actor.startsWith("reviewer:") || ["call.pending", "call.approved", "call.rejected", "call.expired"].includes(e.type));
  return (
    <>
      <PageHeader
        title={
          <span className="flex flex-wrap items-center gap-2">
            <span className="font-mono">{call.tool}</span>
            <StatusBadge status={call.status} error={call.errorName} tool={call.tool} summary={call.summary} />
            <FinalDecision value={finalDecision(call)} />
          </span>
        }
        description={<CopyId id={call.id} />}
      >
        {call.status === "pending" && (
          <Link href={`/approvals?call=${call.id}`} className="rounded-md bg-amber-500 px-3 py-1.5 text-sm font-medium text-white">
            Decide in the inbox
          </Link>
        )}
        <Link href={`/sessions/${call.session.id}`} className="text-sm underline">
          Session timeline
        </Link>
        {revertible && (
          <ActionForm action={revertCallAction} className="flex flex-wrap items-center gap-2" confirm="Undo this call's file changes? Files changed since are reported, never overwritten." testId="revert-call">
            <input type="hidden" name="callId" value={call.id} />
            <button type="submit" className="rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium dark:border-zinc-700">
              Revert this call
            </button>
          </ActionForm>
        )}
      </PageHeader>

      <div className="grid gap-4 xl:grid-cols-2">
        <Card title="Call">
          <Facts
            items={[
              ["Agent token", `${call.session.agentName ?? "anonymous"} via ${call.door}`],
              ["Session", <Link key="s" className="break-words underline" href={`/sessions/${call.session.id}`}><RevealedText text={call.sessionName} /></Link>],
              ...(call.description ? [["The agent says", <RevealedText key="d" text={call.description} />] as [string, React.ReactNode]] : []),
              ["Target", call.target ? <Mono key="t"><RevealedText text={call.target} /></Mono> : "—"],
              ["Path as sent", call.pathRaw ? <Mono key="p"><RevealedText text={call.pathRaw} /></Mono> : "—"],
              ["Resolved path", call.pathResolved ? <Mono key="r"><RevealedText text={call.pathResolved} /></Mono> : "—"],
              ["Received", formatTime(call.createdAt)],
              ["Decided", formatTime(call.decidedAt)],
              ["Started", formatTime(call.startedAt)],
              ["Finished", formatTime(call.finishedAt)],
              ["Run time", formatDuration(call.durationMs)],
              ["Bytes in / out", `${formatBytes(call.bytesIn)} / ${formatBytes(call.bytesOut)}${call.truncated ? " (output capped)" : ""}`],
              ["sha256 before", call.shaBefore ? <Mono key="b">{call.shaBefore}</Mono> : "—"],
              ["sha256 after", call.shaAfter ? <Mono key="a">{call.shaAfter}</Mono> : "—"],
            ]}
          />
        </Card>
        <Card title="Decision">
          <VerdictView verdict={call.verdict} />
          <h3 className="mb-1 mt-4 text-sm font-semibold">Approval history</h3>
          {history.length === 0 ? (
            <p className="text-sm text-zinc-500">No person was involved: the policy decided alone.</p>
          ) : (
            <ol className="space-y-1.5 text-sm" data-testid="approval-history">
              {history.map((e) => (
                <li key={e.seq} className="flex flex-wrap gap-x-2">
                  <span className="font-mono text-xs text-zinc-500">{formatTime(e.createdAt)}</span>
                  <span className="font-medium">{e.type.replace(/^call\./, "")}</span>
                  <span>by {e.actor}</span>
                  {e.type === "call.approved" && e.data.edited === true && <span className="text-amber-700 dark:text-amber-300">with edited content</span>}
                  {e.type === "call.approved" && Array.isArray(e.data.grants) && e.data.grants.length > 0 && (
                    <span data-testid="approval-grants">
                      and allowed from now on:{" "}
                      {(e.data.grants as Array<{ id: string; pattern: string; scope: string; expires_at: string | null }>).map((g) => (
                        <span key={g.id} className="mr-2">
                          <Mono>{g.pattern}</Mono> ({g.scope === "session" ? "this session" : "this workspace"}, until {formatTime(g.expires_at)}, rule <Mono>{g.id}</Mono>
                          {grants.find((x) => x.id === g.id)?.revokedAt ? ", since revoked" : ""})
                        </span>
                      ))}
                    </span>
                  )}
                  {e.type === "call.reviewed" && <span className="text-zinc-700 dark:text-zinc-300">(applied without asking; reviewed afterwards)</span>}
                  {e.type === "call.rejected" && e.actor.startsWith("reviewer:") && (
                    <span data-testid="reject-reason">
                      {call.reviewReason && call.reviewReason !== "no reason given" ? (
                        <>
                          — “<RevealedText text={call.reviewReason} />”
                        </>
                      ) : (
                        <em>— no reason given</em>
                      )}
                    </span>
                  )}
                </li>
              ))}
            </ol>
          )}
        </Card>
      </div>

      <div className="mt-4 space-y-4">
        <Card title="Arguments">
          <div className="grid gap-3">
            <JsonBlock label="As the agent sent them (secrets redacted)" value={call.args} />
          </div>
          {call.editDiff && (
            <div className="mt-3" data-testid="reviewer-edit">
              <DiffView
                diff={call.editDiff.diff}
                testId="reviewer-edit-diff"
                title={
                  <span>
                    The reviewer edited <code className="font-mono">{call.editDiff.field}</code> before approving (agent&apos;s proposal → what was approved):{" "}
                    <span className="text-emerald-800 dark:text-emerald-400">+{call.editDiff.additions}</span> <span className="text-red-800 dark:text-red-400">−{call.editDiff.deletions}</span>
                  </span>
                }
              />
            </div>
          )}
          {call.editedArgs !== null && !call.editDiff && <JsonBlock label="As the reviewer edited them before approving" value={call.editedArgs} />}
        </Card>

        {changes && <FileChanges changes={changes} />}

        {diff && !changes && (
          <Card title="Diff">
            {diff.truncated && <p className="mb-2 text-sm text-amber-800 dark:text-amber-200">This is the diff returned to the agent, which was capped; the full before and after bytes are no longer stored.</p>}
            {diff.notes.length > 0 && (
              <ul className="mb-2 list-disc pl-5 text-sm text-amber-800 dark:text-amber-200">
                {diff.notes.map((n, i) => (
                  <li key={i}>{n}</li>
                ))}
              </ul>
            )}
            <DiffView
              diff={diff.diff}
              title={
                <span>
                  <span className="text-emerald-700 dark:text-emerald-400">+{diff.additions}</span> <span className="text-red-700 dark:text-red-400">−{diff.deletions}</span> lines
                  <span className="text-zinc-500"> · {diff.source === "preview" ? "as shown for approval" : diff.source === "bytes" ? "from the stored bytes" : "from the result"}</span>
                </span>
              }
            />
          </Card>
        )}

        {(call.backupMade || call.restoredFrom) && (
          <Card title="Backups">
            <div className="space-y-2 text-sm">
              {call.backupMade && <BackupLine label="This call backed up the bytes it replaced:" backup={call.backupMade} />}
              {call.restoredFrom && <BackupLine label="It restored:" backup={call.restoredFrom} />}
            </div>
          </Card>
        )}

        <Card title="Result">
          {call.envelope === null ? (
            <p className="text-sm text-zinc-500">No result yet: the call is {call.status}.</p>
          ) : call.envelope.ok ? (
            Object.keys(call.masked).length > 0 ? (
              <MaskedResult callId={call.id} masked={call.masked}>
                <StoredOutput outputs={outputs} rest={rest} />
              </MaskedResult>
            ) : (
              <StoredOutput outputs={outputs} rest={rest} />
            )
          ) : (
            <div className="space-y-2">
              <p className="text-sm">
                <strong>
                  {call.envelope.error.name} ({call.envelope.error.code})
                </strong>
                : <RevealedText text={call.envelope.error.message} />
              </p>
              <JsonBlock label="detail" value={call.envelope.error.detail} />
            </div>
          )}
        </Card>

        <Card title="Event log">
          <ol className="space-y-1 text-xs" data-testid="call-events">
            {call.events.map((e) => (
              <li key={e.seq} className="flex flex-wrap gap-x-2 font-mono">
                <span className="text-zinc-500">#{e.seq}</span>
                <span>{formatTime(e.createdAt)}</span>
                <span className="font-semibold">{e.type}</span>
                <span>{e.actor}</span>
                {Object.keys(e.data).length > 0 && (
                  <span className="break-all text-zinc-500">
                    <RevealedText text={JSON.stringify(e.data)} />
                  </span>
                )}
              </li>
            ))}
          </ol>
        </Card>
      </div>
    </>
  );
}

/** The result's data as stored (secrets masked): long text outputs, then the other fields. */
function StoredOutput({ outputs, rest }: { outputs: { name: string; text: string }[]; rest: unknown }) {
  return (
    <div className="space-y-3" data-testid="stored-output">
      {outputs.map((o) => (
        <TextBlock key={o.name} label={o.name} text={o.text} tall />
      ))}
      <JsonBlock label={outputs.length ? "Other fields" : "data"} value={rest} />
    </div>
  );
}

function BackupLine({ label, backup }: { label: string; backup: CallBackup }) {
  return (
    <p>
      {label}{" "}
      <Link className="font-mono underline" href={`/backups/${backup.id}`}>
        {backup.id}
      </Link>{" "}
      of <Mono><RevealedText text={backup.path} /></Mono> ({formatBytes(backup.size)}, {formatTime(backup.createdAt)})
    </p>
  );
}
