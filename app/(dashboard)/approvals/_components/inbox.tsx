"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useLayoutEffect, useRef, useState, useTransition } from "react";
import type { DecisionOutcome, InboxItem } from "@/lib/dashboard/approvals";
import { formatAge } from "@/lib/dashboard/format";
import { revealPlain } from "@/lib/dashboard/reveal";
import { useLive } from "../../_components/live";
import { BUTTON, EmptyState } from "../../_components/page-parts";
import { approveAction, approveEditedAction, rejectAction } from "../actions";
import { ApprovalDetail, type DetailHandle } from "./approval-detail";
import { itemSubject, itemTitle } from "./subject";

/**
 * How long a call must have been on screen, unchanged, before a decision on it counts (ms). A
 * key pressed sooner (a second `a` right after the first, a key held down) decides nothing.
 */
export const ARM_DELAY_MS = 600;

/** Why nothing is selected: the reviewer reached the end of the queue, or the call in view left it. */
type Hold = { kind: "end"; after: number } | { kind: "gone"; after: number; title: string; why: string } | null;

/**
 * The inbox: the list of pending calls and the selected call's detail. A decision is always about
 * the call in view: after approving or rejecting, the next call is shown but not armed until it
 * has been on screen for ARM_DELAY_MS (keys and buttons decide nothing before); after the last
 * call in order the selection stays empty rather than jumping back to an earlier, unseen call; a
 * call that expires, is decided elsewhere or changes while in view is announced (aria-live),
 * never swapped for another silently. Live: call events refresh the server data. Keyboard: j/k
 * move, a approves, r starts a rejection (a reason is required), e edits an editable call's
 * argument, Escape cancels; keys are ignored while typing in a field and when held down.
 */
export function Inbox({ items, initialSelected, workspaceRoot, renderedAt }: { items: InboxItem[]; initialSelected: string | null; workspaceRoot: string; renderedAt: number }) {
  const router = useRouter();
  const { subscribe, pending } = useLive();
  const [selectedId, setSelectedId] = useState<string | null>(initialSelected && items.some((i) => i.call_id === initialSelected) ? initialSelected : (items[0]?.call_id ?? null));
  const [hold, setHold] = useState<Hold>(null);
  const [outcome, setOutcome] = useState<DecisionOutcome | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const [armed, setArmed] = useState(false);
  const [busy, startDecision] = useTransition();
  const detail = useRef<DetailHandle>(null);
  const previous = useRef<{ ids: string[]; fingerprints: Map<string, string> }>({ ids: items.map((i) => i.call_id), fingerprints: new Map(items.map((i) => [i.call_id, fingerprint(i)])) });
  const decidedHere = useRef(new Set<string>());
  /** Why a call left the queue, from the live stream: "expired", "approved by admin", … */
  const endings = useRef(new Map<string, string>());
  const [shownKey, setShownKey] = useState(0);
  // Titles of calls seen, to name a call after it left the list.
  const lastTitles = useRef(new Map<string, string>());
  for (const item of items) lastTitles.current.set(item.call_id, itemTitle(item));

  const selected = items.find((i) => i.call_id === selectedId) ?? null;

  // Arm the decision controls once the call in view has been on screen, unchanged, long enough.
  useEffect(() => {
    setArmed(false);
    if (!selected) return;
    const timer = setTimeout(() => setArmed(true), ARM_DELAY_MS);
    return () => clearTimeout(timer);
  }, [selected?.call_id, shownKey]);

  // Reconcile the selection with a new list: keep the call in view; when it left the queue, show
  // the next one after it (after a decision made here) or say why it is gone; never jump back.
  useLayoutEffect(() => {
    const before = previous.current;
    const now = new Map(items.map((i) => [i.call_id, fingerprint(i)]));
    previous.current = { ids: items.map((i) => i.call_id), fingerprints: now };
    if (selectedId && now.has(selectedId)) {
      const was = before.fingerprints.get(selectedId);
      if (was !== undefined && was !== now.get(selectedId)) {
        const item = items.find((i) => i.call_id === selectedId)!;
        setAnnouncement(`${itemTitle(item)} changed while you were viewing it${item.target?.changedSince ? ": the file changed since the diff was computed" : ""}. Look again before deciding.`);
        setShownKey((k) => k + 1);
      }
      return;
    }
    if (selectedId) {
      const at = before.ids.indexOf(selectedId);
      const after = before.ids.slice(at + 1).find((id) => now.has(id));
      const position = after ? items.findIndex((i) => i.call_id === after) : items.length;
      if (decidedHere.current.has(selectedId)) {
        if (after) {
          setSelectedId(after);
          setHold(null);
        } else {
          setSelectedId(null);
          setHold({ kind: "end", after: position });
        }
      } else {
        const why = endings.current.get(selectedId) ?? "it is no longer pending (expired, withdrawn or decided elsewhere)";
        const title = lastTitles.current.get(selectedId) ?? `call ${selectedId}`;
        setSelectedId(null);
        setHold({ kind: "gone", after: position, title, why });
        setAnnouncement(`${title} left the queue: ${why}. Nothing else was selected.`);
      }
      return;
    }
    if (!hold && items.length > 0) setSelectedId(items[0].call_id);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [items]);

  // The address names the call in view (a reload or a shared link shows the same call). Not while
  // the page is being left: rewriting it then would cut into the navigation away.
  const leaving = useRef(false);
  useEffect(() => {
    const leave = () => (leaving.current = true);
    const stay = () => (leaving.current = false);
    window.addEventListener("beforeunload", leave);
    window.addEventListener("pageshow", stay);
    return () => {
      window.removeEventListener("beforeunload", leave);
      window.removeEventListener("pageshow", stay);
    };
  }, []);
  useEffect(() => {
    if (leaving.current || window.location.pathname !== "/approvals") return;
    const url = selectedId ? `/approvals?call=${encodeURIComponent(selectedId)}` : "/approvals";
    if (window.location.pathname + window.location.search !== url) window.history.replaceState(window.history.state, "", url);
  }, [selectedId]);

  // Live: refresh the server data after call events, and whenever the live pending count differs
  // from what this list shows (e.g. a call queued while the page was being rendered). Coalesced.
  const refreshTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const refreshSoon = useCallback(() => {
    if (refreshTimer.current) return;
    refreshTimer.current = setTimeout(() => {
      refreshTimer.current = null;
      router.refresh();
    }, 150);
  }, [router]);
  useEffect(
    () =>
      subscribe((event) => {
        if (event.callId && ["call.expired", "call.approved", "call.rejected", "call.interrupted"].includes(event.type)) {
          const who = event.actor.startsWith("reviewer:") ? ` by ${event.actor.slice("reviewer:".length)}` : "";
          const what = event.type === "call.expired" ? "it expired (nobody decided in time)" : `it was ${event.type.slice(5)}${who}`;
          endings.current.set(event.callId, what);
        }
        if (event.type.startsWith("call.") || event.type === "reset") refreshSoon();
      }),
    [subscribe, refreshSoon],
  );
  const shown = items.length;
  useEffect(() => {
    if (pending !== shown) refreshSoon();
    // Only when the live count changes (or on mount): a list capped below the count must not loop.
  }, [pending, refreshSoon]);

  const decide = useCallback(
    (item: InboxItem, run: () => Promise<DecisionOutcome>) => {
      startDecision(async () => {
        const result = await run();
        const decided = result.ok || result.status !== "pending";
        if (decided) decidedHere.current.add(item.call_id);
        setOutcome(result);
        setAnnouncement(result.message);
        router.refresh();
      });
    },
    [router],
  );

  /** Select by an explicit move (key or click): the call is shown and armed after the delay. */
  const select = useCallback((id: string) => {
    setSelectedId(id);
    setHold(null);
    document.getElementById(`inbox-item-${id}`)?.scrollIntoView({ block: "nearest" });
  }, []);

  const move = useCallback(
    (delta: number) => {
      if (items.length === 0) return;
      const index = items.findIndex((i) => i.call_id === selectedId);
      let to: number;
      if (index >= 0) to = index + delta;
      else if (hold) to = delta > 0 ? hold.after : hold.after - 1;
      else to = 0;
      to = Math.max(0, Math.min(items.length - 1, to));
      select(items[to].call_id);
    },
    [items, selectedId, hold, select],
  );

  /** A decision key: refused (and said) unless the call has been on screen long enough. */
  const guarded = useCallback(
    (what: string, run: () => void) => {
      if (!selected || busy) return;
      if (!armed) {
        setAnnouncement(`Nothing ${what}: ${itemTitle(selected)} has been on screen for less than ${ARM_DELAY_MS / 1000} s. Read it, then press again.`);
        return;
      }
      run();
    },
    [selected, busy, armed],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
      const el = e.target as HTMLElement | null;
      if (el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName))) {
        if (e.key === "Escape") el.blur();
        return;
      }
      if (e.repeat && ["a", "r", "e"].includes(e.key)) {
        e.preventDefault();
        return;
      }
      if (e.key === "j") move(1);
      else if (e.key === "k") move(-1);
      else if (e.key === "a") guarded("approved", () => detail.current?.approve());
      else if (e.key === "r" && selected) detail.current?.startReject();
      else if (e.key === "e" && selected) detail.current?.toggleEdit();
      else if (e.key === "Escape") detail.current?.cancel();
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [move, selected, guarded]);

  return (
    <div className="space-y-3">
      <p className="sr-only" aria-live="assertive" aria-atomic="true" data-testid="announcer">
        {announcement}
      </p>
      {outcome && <OutcomeBanner outcome={outcome} onDismiss={() => setOutcome(null)} />}
      {items.length === 0 ? (
        <EmptyState title="Nothing waits for you">
          New calls that need a decision appear here as they arrive, without reloading. Turn on notifications to hear about them in another tab.
        </EmptyState>
      ) : (
        <div className="grid gap-4 lg:grid-cols-[20rem_minmax(0,1fr)]">
          <ol className="flex max-h-72 flex-col gap-1 overflow-y-auto lg:max-h-[calc(100vh-10rem)]" aria-label="Pending calls" data-testid="inbox-list">
            {items.map((item, i) => (
              <li key={item.call_id}>
                <InboxRow item={item} index={i} current={item.call_id === selected?.call_id} renderedAt={renderedAt} onSelect={() => select(item.call_id)} />
              </li>
            ))}
          </ol>
          {selected ? (
            <ApprovalDetail
              key={selected.call_id}
              ref={detail}
              item={selected}
              workspaceRoot={workspaceRoot}
              busy={busy}
              armed={armed}
              onApprove={(grant) => guarded("approved", () => decide(selected, () => approveAction(selected.call_id, grant ?? undefined)))}
              onApproveEdited={(content, grant) => guarded("approved", () => decide(selected, () => approveEditedAction(selected.call_id, content, grant ?? undefined)))}
              onReject={(reason) => decide(selected, () => rejectAction(selected.call_id, reason))}
            />
          ) : (
            <HoldPanel hold={hold} remaining={items.length} onMove={move} />
          )}
        </div>
      )}
    </div>
  );
}

/** What the detail pane shows when nothing is selected: why, and how to go on. */
function HoldPanel({ hold, remaining, onMove }: { hold: Hold; remaining: number; onMove(delta: number): void }) {
  const earlier = hold ? hold.after : 0;
  const later = remaining - earlier;
  return (
    <div className="rounded-lg border border-dashed border-zinc-400 p-6 text-sm dark:border-zinc-600" data-testid="inbox-hold" data-kind={hold?.kind ?? "none"}>
      {hold?.kind === "gone" ? (
        <p role="alert" className="mb-3 font-medium">
          {hold.title} left the queue: {hold.why}.
        </p>
      ) : (
        <p className="mb-3 font-medium">You reached the end of the queue.</p>
      )}
      <p className="mb-3 text-zinc-700 dark:text-zinc-300">
        {remaining} call{remaining === 1 ? "" : "s"} still wait{remaining === 1 ? "s" : ""}
        {later > 0 ? `, ${later} after this point` : ""}. Nothing is selected until you choose one.
      </p>
      <div className="flex flex-wrap gap-2">
        {later > 0 && (
          <button type="button" className={BUTTON.secondary} onClick={() => onMove(1)}>
            Show the next call <kbd className="ar-key-hint">j</kbd>
          </button>
        )}
        {earlier > 0 && (
          <button type="button" className={BUTTON.secondary} onClick={() => onMove(-1)}>
            Show the previous call <kbd className="ar-key-hint">k</kbd>
          </button>
        )}
      </div>
    </div>
  );
}

/** The banner after a decision: it names the call, says what happened, and links to undo it. */
function OutcomeBanner({ outcome, onDismiss }: { outcome: DecisionOutcome; onDismiss(): void }) {
  return (
    <div
      role="status"
      data-testid="decision-outcome"
      data-call-id={outcome.callId}
      className={`flex flex-wrap items-center justify-between gap-2 rounded-md border px-3 py-2 text-sm ${
        outcome.ok ? "border-emerald-400 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-50" : "border-red-400 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50"
      }`}
    >
      <span className="min-w-0 break-words">{revealPlain(outcome.message)}</span>
      <span className="flex flex-wrap gap-3">
        <Link className="ar-touch underline" href={`/calls/${outcome.callId}`}>
          Open the call
        </Link>
        {outcome.revertHref && (
          <Link className="ar-touch font-medium underline" href={outcome.revertHref} data-testid="revert-link">
            Revert (restore the previous bytes)
          </Link>
        )}
        <button type="button" className="ar-touch underline" onClick={onDismiss}>
          Dismiss
        </button>
      </span>
    </div>
  );
}

/** Lines of a command shown in the list before "+N more lines". */
const LIST_LINES = 3;

function InboxRow({ item, index, current, renderedAt, onSelect }: { item: InboxItem; index: number; current: boolean; renderedAt: number; onSelect(): void }) {
  const subject = revealPlain(itemSubject(item));
  const lines = subject.split("\n");
  const more = lines.length - LIST_LINES;
  return (
    <button
      id={`inbox-item-${item.call_id}`}
      type="button"
      onClick={onSelect}
      aria-current={current ? "true" : undefined}
      className={`w-full rounded-md border px-3 py-2 text-left text-sm ${
        current ? "border-zinc-900 bg-white shadow-sm dark:border-zinc-300 dark:bg-zinc-900" : "border-zinc-300 bg-white/60 hover:border-zinc-500 dark:border-zinc-700 dark:bg-zinc-900/60"
      }`}
    >
      <div className="flex items-center justify-between gap-2">
        <span className="font-mono text-xs font-semibold">
          {index + 1}. {item.tool}
        </span>
        <span className="shrink-0 text-xs text-zinc-700 dark:text-zinc-300">{formatAge(item.created_at, renderedAt)}</span>
      </div>
      <div className="mt-0.5 whitespace-pre-wrap break-words font-mono text-xs text-zinc-700 dark:text-zinc-300">{lines.slice(0, LIST_LINES).join("\n")}</div>
      {more > 0 && <div className="mt-0.5 text-xs font-medium text-zinc-800 dark:text-zinc-200">+{more} more line{more === 1 ? "" : "s"}</div>}
      {item.target?.changedSince && <div className="mt-1 text-xs font-medium text-orange-800 dark:text-orange-300">file changed since</div>}
    </button>
  );
}

/** What, if it changes while a call is in view, the reviewer must be told about. */
function fingerprint(item: InboxItem): string {
  return JSON.stringify([item.preview.diff ?? null, item.preview.targetSha256 ?? null, item.target?.changedSince ?? null, item.target?.currentSha256 ?? null, item.args]);
}
