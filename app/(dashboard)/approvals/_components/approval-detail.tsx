"use client";

import Link from "next/link";
import { useEffect, useImperativeHandle, useRef, useState } from "react";
import type { InboxItem } from "@/lib/dashboard/approvals";
import { formatTime } from "@/lib/dashboard/format";
import { OUTCOME_BADGE } from "@/lib/dashboard/outcome";
import { revealPlain } from "@/lib/dashboard/reveal";
import { CopyId } from "../../_components/copy-id";
import { DiffView } from "../../_components/diff-view";
import { BUTTON, Card, Facts, INPUT, Mono } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { JsonBlock } from "../../_components/text-block";
import { RisksAndReasons, VerdictView } from "../../_components/verdict-view";
import { contextDiffAction } from "../actions";
import { ContentEditor } from "./content-editor";
import { GrantOffer, type GrantChoice } from "./grant-offer";

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
  /** False until the call has been on screen long enough for a decision to count. */
  armed: boolean;
  /** `grant`: the "don't ask again" choice to save with the approval, or null. */
  onApprove(grant: GrantChoice | null): void;
  onApproveEdited(content: string, grant: GrantChoice | null): void;
  onReject(reason: string): void;
  ref?: React.Ref<DetailHandle>;
}

/** Lines of a command shown before "expand, N more lines" (approving needs the whole command seen). */
export const COMMAND_SHOWN_LINES = 15;

/**
 * One pending call in full, in reading order: what it is (tool, target, the agent's own
 * description, token, session, time left), the danger (risk labels, then reasons), what will
 * happen (the whole command, or the whole diff) directly above the decision controls (sticky at
 * the bottom of the screen while the call is read), then the session's earlier calls, the
 * policy's parsed parts and the exact arguments.
 */
export function ApprovalDetail({ item, workspaceRoot, busy, armed, onApprove, onApproveEdited, onReject, ref }: Props) {
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [edited, setEdited] = useState<string | null>(null);
  const [expanded, setExpanded] = useState(false);
  const [grant, setGrant] = useState<GrantChoice | null>(null);
  const reasonInput = useRef<HTMLInputElement>(null);
  const editable = item.editable !== null;
  const commandLines = item.command ? item.command.command.split("\n").length : 0;
  const clipped = commandLines > COMMAND_SHOWN_LINES && !expanded;

  const approve = () => {
    if (busy || clipped) return;
    if (editing) {
      if (edited !== null) onApproveEdited(edited, grant);
    } else onApprove(grant);
  };
  const startReject = () => {
    setRejecting(true);
    setTimeout(() => reasonInput.current?.focus(), 0);
  };
  const toggleEdit = () => editable && setEditing((e) => !e);
  useImperativeHandle(ref, () => ({
    approve,
    startReject,
    toggleEdit,
    cancel: () => {
      setRejecting(false);
      setEditing(false);
    },
  }));

  const { [item.editable?.field ?? "content"]: _edited, ...argsWithoutEditable } = (item.args ?? {}) as Record<string, unknown>;
  const target = item.preview.path ?? item.path;

  return (
    <div className="min-w-0 space-y-4" data-testid="approval-detail" data-call-id={item.call_id} data-armed={armed ? "true" : "false"}>
      <Card>
        <h2 className="font-mono text-lg font-semibold">{item.tool}</h2>
        {target && (
          <p className="font-mono text-sm">
            <RevealedText text={target} />
          </p>
        )}
        {item.description && (
          <p className="mt-2 rounded-md bg-zinc-100 px-3 py-2 text-sm dark:bg-zinc-800" data-testid="call-description">
            <span className="font-medium">The agent says: </span>
            <RevealedText text={item.description} />
          </p>
        )}
        <div className="mt-3">
          <Facts
            items={[
              ["Agent token", <span key="a" data-testid="agent-name">{item.agentName ?? (item.agent_id ? item.agent_id : "anonymous")} <span className="text-zinc-600 dark:text-zinc-400">via {item.door}</span></span>],
              [
                "Session",
                <Link key="s" className="break-words underline underline-offset-2" href={`/sessions/${item.session_id}`} data-testid="session-name">
                  <RevealedText text={item.sessionName} />
                </Link>,
              ],
              ["Queued", formatTime(item.created_at)],
              ["Expires", <Countdown key="e" expiresAt={item.expires_at} />],
              ["Call", <CopyId key="c" id={item.call_id} href={`/calls/${item.call_id}`} />],
            ]}
          />
        </div>
      </Card>

      <Card title="What it risks">
        <RisksAndReasons verdict={item.verdict} />
        {item.secretsStayMasked && (
          <p className="mt-3 rounded-md border border-sky-400 bg-sky-50 p-2 text-sm text-sky-950 dark:border-sky-800 dark:bg-sky-950 dark:text-sky-50" data-testid="secrets-stay-masked">
            The command runs in the sandbox, where the workspace&apos;s secret files read as empty: approving runs it, but it will not see their contents. Approval never widens the sandbox; to give an agent a secret, hand it over yourself.
          </p>
        )}
        {item.external && (
          <p className="mt-3 rounded-md border border-sky-400 bg-sky-50 p-2 text-sm text-sky-950 dark:border-sky-800 dark:bg-sky-950 dark:text-sky-50">
            The agent&apos;s own tool carries this call out (it came through a hook): approving lets it run as shown, rejecting stops it. It cannot be edited here.
          </p>
        )}
      </Card>

      {item.command && (
        <Card title="What will run">
          <CommandBlock command={item.command.command} expanded={expanded} onExpand={() => setExpanded(true)} />
          <div className="mt-2 text-sm">
            <span className="text-zinc-700 dark:text-zinc-300">cwd: </span>
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
        <Card title="What will change">
          <TargetFacts item={item} />
          {editing && item.editable ? (
            <ContentEditor callId={item.call_id} field={item.editable} diff={item.preview.diff} onChange={setEdited} busy={busy} />
          ) : (
            <ExpandableDiff item={item} />
          )}
        </Card>
      )}

      <DecisionBar
        busy={busy}
        armed={armed}
        clipped={clipped}
        editing={editing}
        editReady={edited !== null}
        editable={editable}
        editLabel={item.editable?.label ?? ""}
        onApprove={approve}
        onReject={startReject}
        onEdit={toggleEdit}
      >
        {item.grantOffer && <GrantOffer key={item.call_id} offer={item.grantOffer} onChange={setGrant} disabled={busy} />}
        {rejecting && (
          <form
            className="mt-2 flex flex-col gap-2 sm:flex-row"
            onSubmit={(e) => {
              e.preventDefault();
              if (reason.trim() === "") {
                setReasonError("Give the agent a reason: it reads it to decide what to do instead.");
                reasonInput.current?.focus();
                return;
              }
              onReject(reason);
            }}
            noValidate
          >
            <input
              ref={reasonInput}
              value={reason}
              onChange={(e) => {
                setReason(e.target.value);
                setReasonError(null);
              }}
              placeholder="Why? The agent receives this reason."
              aria-label="Reason for rejecting (required)"
              aria-invalid={reasonError ? true : undefined}
              aria-describedby={reasonError ? `reason-error-${item.call_id}` : undefined}
              required
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
            {reasonError && (
              <p id={`reason-error-${item.call_id}`} role="alert" className="basis-full text-sm font-medium text-red-800 dark:text-red-300" data-testid="reason-error">
                {reasonError}
              </p>
            )}
          </form>
        )}
      </DecisionBar>

      <SessionContext item={item} />

      {item.verdict?.parts && item.verdict.parts.length > 0 && (
        <Card title="How the policy read the command">
          <VerdictView verdict={item.verdict} detailsOnly />
        </Card>
      )}

      <Card title="Exact arguments">
        <JsonBlock value={argsWithoutEditable} />
        {item.editable && (
          <p className="mt-2 text-xs text-zinc-700 dark:text-zinc-300">
            {item.editable.field}: {item.editable.value.length.toLocaleString("en")} characters, shown as the diff above (you can edit it before approving).
          </p>
        )}
      </Card>
    </div>
  );
}

/**
 * The queued diff, with buttons to read more of the file around the changes (±MORE lines, or the
 * whole file), recomputed from the file as it is now; refused once the file changed since.
 */
function ExpandableDiff({ item }: { item: InboxItem }) {
  const [shown, setShown] = useState<{ context: number; diff: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const expandable = item.moreContext && !item.target?.changedSince && (item.preview.diff ?? "") !== "";
  const load = async (context: number) => {
    setLoading(true);
    const result = await contextDiffAction(item.call_id, context);
    setLoading(false);
    if (result.ok) {
      setShown({ context, diff: result.diff });
      setMessage(null);
    } else setMessage(result.error.message);
  };
  const counts = (
    <span>
      <span className="text-emerald-800 dark:text-emerald-400">+{item.preview.additions ?? 0}</span> <span className="text-red-800 dark:text-red-400">−{item.preview.deletions ?? 0}</span> lines
      {shown && <span className="text-zinc-700 dark:text-zinc-300"> · {shown.context === -1 ? "whole file" : `${shown.context} lines of context`}</span>}
    </span>
  );
  return (
    <div className="space-y-2">
      <DiffView diff={shown?.diff ?? item.preview.diff ?? ""} created={item.preview.targetSha256 === null} title={counts} />
      {expandable && (
        <div className="flex flex-wrap items-center gap-2 text-sm" data-testid="diff-context">
          {shown === null || shown.context !== 25 ? (
            <button type="button" className={BUTTON.small} disabled={loading} onClick={() => load(25)}>
              More context (±25 lines)
            </button>
          ) : null}
          {shown?.context !== -1 && (
            <button type="button" className={BUTTON.small} disabled={loading} onClick={() => load(-1)}>
              Whole file
            </button>
          )}
          {shown && (
            <button type="button" className={BUTTON.small} onClick={() => setShown(null)}>
              Back to the queued diff
            </button>
          )}
          {message && <span role="alert" className="text-red-800 dark:text-red-300">{message}</span>}
        </div>
      )}
    </div>
  );
}

/** The command exactly as it will run, clipped past COMMAND_SHOWN_LINES until expanded. */
function CommandBlock({ command, expanded, onExpand }: { command: string; expanded: boolean; onExpand(): void }) {
  const lines = command.split("\n");
  const hidden = lines.length - COMMAND_SHOWN_LINES;
  const shown = hidden > 0 && !expanded ? lines.slice(0, COMMAND_SHOWN_LINES).join("\n") : command;
  return (
    <div className="min-w-0" data-testid="command">
      <div className="mb-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">Runs with bash -c, exactly:</div>
      <pre className="overflow-x-auto rounded-md border border-zinc-300 bg-zinc-50 p-3 font-mono text-xs leading-relaxed dark:border-zinc-700 dark:bg-zinc-950">
        <RevealedText text={shown} />
      </pre>
      {hidden > 0 && !expanded && (
        <button type="button" className={`${BUTTON.secondary} mt-2`} onClick={onExpand} data-testid="expand-command">
          Expand, {hidden} more line{hidden === 1 ? "" : "s"} (needed before approving)
        </button>
      )}
    </div>
  );
}

/**
 * Approve / reject / edit, right under what will happen. Sticky at the bottom of the screen, so
 * on a phone the controls stay in reach while the diff above is read. Approve is disabled while a
 * clipped command has not been expanded, and reads "wait" until the call is armed.
 */
function DecisionBar({
  busy,
  armed,
  clipped,
  editing,
  editReady,
  editable,
  editLabel,
  onApprove,
  onReject,
  onEdit,
  children,
}: {
  busy: boolean;
  armed: boolean;
  clipped: boolean;
  editing: boolean;
  editReady: boolean;
  editable: boolean;
  editLabel: string;
  onApprove(): void;
  onReject(): void;
  onEdit(): void;
  children?: React.ReactNode;
}) {
  return (
    <div
      className="sticky bottom-0 z-20 -mx-1 rounded-lg border border-zinc-300 bg-white/95 p-2 shadow-[0_-4px_12px_rgba(0,0,0,0.08)] backdrop-blur dark:border-zinc-700 dark:bg-zinc-900/95"
      data-testid="decision-bar"
      role="group"
      aria-label="Decision"
    >
      <div className="flex flex-wrap items-center gap-2">
        <button
          type="button"
          className={`${BUTTON.approve} ${armed ? "" : "ar-disarmed"}`}
          onClick={onApprove}
          disabled={busy || clipped || (editing && !editReady)}
          aria-disabled={!armed || undefined}
          data-testid={editing ? "approve-edited" : "approve"}
          title={clipped ? "Expand the whole command first" : undefined}
        >
          {busy ? "Working…" : editing ? "Approve edited" : "Approve"} <kbd className="ar-key-hint rounded bg-white/20 px-1 text-xs">a</kbd>
        </button>
        <button type="button" className={BUTTON.secondary} onClick={onReject} disabled={busy} data-testid="reject">
          Reject <kbd className="ar-key-hint rounded bg-zinc-200 px-1 text-xs dark:bg-zinc-700">r</kbd>
        </button>
        {editable && (
          <button type="button" className={BUTTON.secondary} onClick={onEdit} aria-pressed={editing} data-testid="edit">
            {editing ? "Stop editing" : `Edit ${editLabel.toLowerCase()}`} <kbd className="ar-key-hint rounded bg-zinc-200 px-1 text-xs dark:bg-zinc-700">e</kbd>
          </button>
        )}
        {clipped && <span className="text-xs font-medium text-amber-900 dark:text-amber-200">Expand the whole command to approve it.</span>}
        {!armed && !busy && <span className="text-xs text-zinc-700 dark:text-zinc-300" data-testid="arming">Read it first…</span>}
      </div>
      {children}
    </div>
  );
}

/** Time left before the call expires, ticking every second; amber in the last minute. */
function Countdown({ expiresAt }: { expiresAt: string | null }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  if (!expiresAt) return <span>never</span>;
  const left = new Date(expiresAt).getTime() - (now ?? new Date(expiresAt).getTime());
  const text = left <= 0 ? "expired" : `in ${formatLeft(left)}`;
  return (
    <span data-testid="countdown" className={now !== null && left < 60_000 ? "font-semibold text-amber-900 dark:text-amber-200" : ""}>
      {now === null ? formatTime(expiresAt) : text} <span className="text-zinc-600 dark:text-zinc-400">({formatTime(expiresAt)})</span>
    </span>
  );
}

/** "4 min 05 s", "1 h 02 min", "12 s". */
export function formatLeft(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** The session's earlier calls, compact, with their outcomes and final decisions. */
function SessionContext({ item }: { item: InboxItem }) {
  return (
    <Card title="Earlier in this session">
      {item.earlier.length === 0 ? (
        <p className="text-sm text-zinc-700 dark:text-zinc-300">This is the session&apos;s first call.</p>
      ) : (
        <>
          <ol className="space-y-1 text-xs" data-testid="session-context">
            {item.earlier.map((c) => (
              <li key={c.id} className="flex min-w-0 flex-wrap items-center gap-x-2 gap-y-0.5">
                <span className={`rounded px-1.5 py-0.5 font-medium ${OUTCOME_BADGE[c.outcome.tone]}`}>{c.outcome.label}</span>
                <span className="text-zinc-700 dark:text-zinc-300">{c.decision}</span>
                <Link href={`/calls/${c.id}`} className="min-w-0 break-words font-mono underline-offset-2 hover:underline">
                  {c.tool} {revealPlain(c.target ?? "").slice(0, 160)}
                </Link>
              </li>
            ))}
          </ol>
          {item.earlierTotal > item.earlier.length && (
            <Link href={`/sessions/${item.session_id}`} className="mt-2 inline-block text-xs underline">
              All {item.earlierTotal.toLocaleString("en")} earlier calls on the session timeline
            </Link>
          )}
        </>
      )}
    </Card>
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
              <span key="n">no file: it will be created</span>
            ) : (
              <Mono key="s">sha256 {item.preview.targetSha256}</Mono>
            ),
          ],
          ...(target && !target.changedSince ? [["File now", <span key="u">{item.preview.targetSha256 === null ? "still absent" : "unchanged since then"}</span>] as [string, React.ReactNode]] : []),
        ]}
      />
      {target?.changedSince && (
        <div role="alert" data-testid="changed-since" className="rounded-md border border-orange-400 bg-orange-50 p-3 text-orange-950 dark:border-orange-800 dark:bg-orange-950 dark:text-orange-50">
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
        <ul className="list-disc space-y-0.5 pl-5 text-amber-900 dark:text-amber-200" data-testid="preview-warnings">
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
