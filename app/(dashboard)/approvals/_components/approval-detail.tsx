"use client";

import Link from "next/link";
import { useImperativeHandle, useRef, useState } from "react";
import type { InboxItem } from "@/lib/dashboard/approvals";
import { formatTime } from "@/lib/dashboard/format";
import { DiffView } from "../../_components/diff-view";
import { BUTTON, Card, Facts, INPUT, Mono } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { JsonBlock, TextBlock } from "../../_components/text-block";
import { VerdictView } from "../../_components/verdict-view";
import { ContentEditor } from "./content-editor";

/** What the inbox's keyboard shortcuts call on the selected call. */
export interface DetailHandle {
  approve(): void;
  startReject(): void;
  toggleEdit(): void;
  cancel(): void;
}

interface Props {
  item: InboxItem;
  workspaceRoot: string;
  busy: boolean;
  onApprove(): void;
  onApproveEdited(content: string): void;
  onReject(reason: string): void;
  ref?: React.Ref<DetailHandle>;
}

/**
 * One pending call in full: who asks and why the policy asks; for a write, the diff, the sha256
 * it was computed against and whether the file changed since; for a command, the whole command,
 * its cwd and every parsed part with its decision and rule; the exact arguments; and the
 * decision buttons (approve, reject with a reason, edit the content then approve).
 */
export function ApprovalDetail({ item, workspaceRoot, busy, onApprove, onApproveEdited, onReject, ref }: Props) {
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const [editing, setEditing] = useState(false);
  const [edited, setEdited] = useState<string | null>(null);
  const reasonInput = useRef<HTMLInputElement>(null);
  const editable = item.proposedContent !== null;

  const approve = () => {
    if (busy) return;
    if (editing && edited !== null) onApproveEdited(edited);
    else onApprove();
  };
  const startReject = () => {
    setRejecting(true);
    reasonInput.current?.focus();
  };
  useImperativeHandle(ref, () => ({
    approve,
    startReject,
    toggleEdit: () => editable && setEditing((e) => !e),
    cancel: () => {
      setRejecting(false);
      setEditing(false);
    },
  }));

  const { content: _content, ...argsWithoutContent } = (item.args ?? {}) as Record<string, unknown>;
  const verdictPaths = item.preview.path ?? item.path;

  return (
    <div className="min-w-0 space-y-4" data-testid="approval-detail" data-call-id={item.call_id}>
      <Card>
        <div className="flex flex-wrap items-start justify-between gap-3">
          <div className="min-w-0">
            <h2 className="font-mono text-lg font-semibold">{item.tool}</h2>
            {verdictPaths && (
              <p className="font-mono text-sm">
                <RevealedText text={verdictPaths} />
              </p>
            )}
          </div>
          <DecisionBar
            busy={busy}
            editing={editing}
            editable={editable}
            onApprove={approve}
            onReject={startReject}
            onEdit={() => setEditing((e) => !e)}
          />
        </div>
        {rejecting && (
          <form
            className="mt-3 flex flex-col gap-2 sm:flex-row"
            onSubmit={(e) => {
              e.preventDefault();
              onReject(reason);
            }}
          >
            <input
              ref={reasonInput}
              autoFocus
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              placeholder="Why? The agent receives this reason."
              aria-label="Reason for rejecting"
              name="reason"
              className={INPUT}
              maxLength={2000}
            />
            <div className="flex gap-2">
              <button type="submit" className={BUTTON.danger} disabled={busy}>
                Reject
              </button>
              <button type="button" className={BUTTON.secondary} onClick={() => setRejecting(false)}>
                Cancel
              </button>
            </div>
          </form>
        )}
        {item.external && (
          <p className="mt-3 rounded-md border border-sky-300 bg-sky-50 p-2 text-sm text-sky-900 dark:border-sky-800 dark:bg-sky-950 dark:text-sky-100">
            The agent&apos;s own tool carries this call out (it came through a hook): approving lets it run as shown, rejecting stops it. It cannot be edited here.
          </p>
        )}
        <div className="mt-3">
          <Facts
            items={[
              ["Call", <Link key="c" className="font-mono text-xs underline" href={`/calls/${item.call_id}`}>{item.call_id}</Link>],
              ["Agent", <span key="a">{item.agentName ?? item.agent_id ?? "anonymous"} <span className="text-zinc-500">via {item.door}</span></span>],
              ["Session", <Link key="s" className="font-mono text-xs underline" href={`/sessions/${item.session_id}`}>{item.session_id}</Link>],
              ["Queued", formatTime(item.created_at)],
              ["Expires", formatTime(item.expires_at)],
            ]}
          />
        </div>
      </Card>

      <Card title="Why it asks">
        <VerdictView verdict={item.verdict} />
      </Card>

      {item.command && (
        <Card title="Command">
          <TextBlock label="Runs with bash -c, exactly:" text={item.command.command} tall />
          <div className="mt-2 text-sm">
            <span className="text-zinc-500">cwd: </span>
            {item.command.cwd === null ? (
              <span>
                the workspace root <Mono>{workspaceRoot}</Mono>
              </span>
            ) : (
              <Mono>
                <RevealedText text={item.command.cwd} />
              </Mono>
            )}
          </div>
        </Card>
      )}

      {item.preview.diff !== undefined && (
        <Card title="Change">
          <TargetFacts item={item} />
          {editing && item.proposedContent !== null ? (
            <ContentEditor callId={item.call_id} original={item.proposedContent} onChange={setEdited} onApprove={(c) => onApproveEdited(c)} busy={busy} />
          ) : (
            <DiffView
              diff={item.preview.diff}
              title={
                <span>
                  <span className="text-emerald-700 dark:text-emerald-400">+{item.preview.additions ?? 0}</span>{" "}
                  <span className="text-red-700 dark:text-red-400">−{item.preview.deletions ?? 0}</span> lines
                </span>
              }
            />
          )}
        </Card>
      )}

      <Card title="Exact arguments">
        <JsonBlock value={argsWithoutContent} />
        {item.proposedContent !== null && (
          <p className="mt-2 text-xs text-zinc-500">
            content: {item.proposedContent.length.toLocaleString("en")} characters, shown as the diff above
            {editable ? " (press e to edit it)" : ""}.
          </p>
        )}
      </Card>
    </div>
  );
}

function DecisionBar({ busy, editing, editable, onApprove, onReject, onEdit }: { busy: boolean; editing: boolean; editable: boolean; onApprove(): void; onReject(): void; onEdit(): void }) {
  return (
    <div className="flex flex-wrap gap-2">
      <button type="button" className={BUTTON.approve} onClick={onApprove} disabled={busy} data-testid="approve">
        {busy ? "Working…" : editing ? "Approve edited" : "Approve"} <kbd className="rounded bg-white/20 px-1 text-xs">a</kbd>
      </button>
      <button type="button" className={BUTTON.secondary} onClick={onReject} disabled={busy} data-testid="reject">
        Reject <kbd className="rounded bg-zinc-200 px-1 text-xs dark:bg-zinc-700">r</kbd>
      </button>
      {editable && (
        <button type="button" className={BUTTON.secondary} onClick={onEdit} aria-pressed={editing} data-testid="edit">
          {editing ? "Stop editing" : "Edit content"} <kbd className="rounded bg-zinc-200 px-1 text-xs dark:bg-zinc-700">e</kbd>
        </button>
      )}
    </div>
  );
}

/** The sha256 the diff was computed against, the file's state now, and the preview's warnings. */
function TargetFacts({ item }: { item: InboxItem }) {
  const target = item.target;
  return (
    <div className="mb-3 space-y-2 text-sm">
      <Facts
        items={[
          [
            "Diff computed against",
            item.preview.targetSha256 === null ? (
              <span key="n">no file (it will be created)</span>
            ) : (
              <Mono key="s">sha256 {item.preview.targetSha256}</Mono>
            ),
          ],
          ...(target && !target.changedSince ? [["File now", <span key="u">unchanged since then</span>] as [string, React.ReactNode]] : []),
        ]}
      />
      {target?.changedSince && (
        <div role="alert" data-testid="changed-since" className="rounded-md border border-orange-300 bg-orange-50 p-3 text-orange-900 dark:border-orange-800 dark:bg-orange-950 dark:text-orange-100">
          <strong>The file changed since this diff was computed.</strong>{" "}
          {target.error ? (
            <>It cannot be read now: {target.error}</>
          ) : target.currentSha256 === null ? (
            <>It does not exist any more.</>
          ) : (
            <>
              It now has sha256 <Mono>{target.currentSha256}</Mono>.
            </>
          )}{" "}
          Approving will not write anything (the call ends with conflict, 605); reject it so the agent reads the file again.
        </div>
      )}
      {item.preview.warnings && item.preview.warnings.length > 0 && (
        <ul className="list-disc space-y-0.5 pl-5 text-amber-800 dark:text-amber-200" data-testid="preview-warnings">
          {item.preview.warnings.map((w, i) => (
            <li key={i}>
              <RevealedText text={w} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
