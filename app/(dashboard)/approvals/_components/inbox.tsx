"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState, useTransition } from "react";
import type { DecisionOutcome, InboxItem } from "@/lib/dashboard/approvals";
import { formatAge } from "@/lib/dashboard/format";
import { revealPlain } from "@/lib/dashboard/reveal";
import { useLive } from "../../_components/live";
import { EmptyState } from "../../_components/page-parts";
import { approveAction, approveEditedAction, rejectAction } from "../actions";
import { ApprovalDetail, type DetailHandle } from "./approval-detail";

/**
 * The inbox: the list of pending calls and the selected call's detail. Live: any call event on
 * the dashboard's stream refreshes the server data (no page reload). Keyboard: j/k move the
 * selection, a approves, r starts a rejection (type the reason, Enter), e edits a write's
 * content, Escape cancels. Keys are ignored while typing in a field.
 */
export function Inbox({ items, initialSelected, workspaceRoot, renderedAt }: { items: InboxItem[]; initialSelected: string | null; workspaceRoot: string; renderedAt: number }) {
  const router = useRouter();
  const { subscribe, pending } = useLive();
  const [selectedId, setSelectedId] = useState<string | null>(initialSelected ?? items[0]?.call_id ?? null);
  const lastIndex = useRef(0);
  const [outcome, setOutcome] = useState<DecisionOutcome | null>(null);
  const [busy, startDecision] = useTransition();
  const detail = useRef<DetailHandle>(null);

  // Keep a valid selection when the list changes: the same call, else the one now at its place.
  const index = items.findIndex((i) => i.call_id === selectedId);
  const selected = index >= 0 ? items[index] : (items[Math.min(lastIndex.current, items.length - 1)] ?? null);
  if (index >= 0) lastIndex.current = index;

  useEffect(() => {
    const id = selected?.call_id ?? null;
    if (id !== selectedId) setSelectedId(id);
    const url = id ? `/approvals?call=${encodeURIComponent(id)}` : "/approvals";
    if (window.location.pathname + window.location.search !== url) window.history.replaceState(null, "", url);
  }, [selected?.call_id, selectedId]);

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
    (run: () => Promise<DecisionOutcome>) => {
      startDecision(async () => {
        const result = await run();
        setOutcome(result);
        router.refresh();
      });
    },
    [router],
  );

  const move = useCallback(
    (delta: number) => {
      if (items.length === 0) return;
      const from = index >= 0 ? index : lastIndex.current;
      const to = Math.max(0, Math.min(items.length - 1, from + delta));
      setSelectedId(items[to].call_id);
      document.getElementById(`inbox-item-${items[to].call_id}`)?.scrollIntoView({ block: "nearest" });
    },
    [items, index],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
      const el = e.target as HTMLElement | null;
      if (el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName))) {
        if (e.key === "Escape") el.blur();
        return;
      }
      if (e.key === "j") move(1);
      else if (e.key === "k") move(-1);
      else if (e.key === "a" && selected && !busy) detail.current?.approve();
      else if (e.key === "r" && selected) detail.current?.startReject();
      else if (e.key === "e" && selected) detail.current?.toggleEdit();
      else if (e.key === "Escape") detail.current?.cancel();
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [move, selected, busy]);

  return (
    <div className="space-y-3">
      {outcome && (
        <div
          role="status"
          data-testid="decision-outcome"
          className={`flex flex-wrap items-center justify-between gap-2 rounded-md border px-3 py-2 text-sm ${
            outcome.ok ? "border-emerald-300 bg-emerald-50 text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100" : "border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
          }`}
        >
          <span className="min-w-0 break-words">{outcome.message}</span>
          <span className="flex gap-3">
            <Link className="underline" href={`/calls/${outcome.callId}`}>
              Open the call
            </Link>
            <button type="button" className="underline" onClick={() => setOutcome(null)}>
              Dismiss
            </button>
          </span>
        </div>
      )}
      {items.length === 0 ? (
        <EmptyState title="Nothing waits for you">
          New calls that need a decision appear here as they arrive, without reloading. Turn on notifications to hear about them in another tab.
        </EmptyState>
      ) : (
        <div className="grid gap-4 lg:grid-cols-[20rem_minmax(0,1fr)]">
          <ol className="flex max-h-72 flex-col gap-1 overflow-y-auto lg:max-h-[calc(100vh-10rem)]" aria-label="Pending calls" data-testid="inbox-list">
            {items.map((item, i) => (
              <li key={item.call_id}>
                <button
                  id={`inbox-item-${item.call_id}`}
                  type="button"
                  onClick={() => setSelectedId(item.call_id)}
                  aria-current={item.call_id === selected?.call_id ? "true" : undefined}
                  className={`w-full rounded-md border px-3 py-2 text-left text-sm ${
                    item.call_id === selected?.call_id
                      ? "border-zinc-900 bg-white shadow-sm dark:border-zinc-300 dark:bg-zinc-900"
                      : "border-zinc-200 bg-white/60 hover:border-zinc-400 dark:border-zinc-800 dark:bg-zinc-900/60"
                  }`}
                >
                  <div className="flex items-center justify-between gap-2">
                    <span className="font-mono text-xs font-semibold">
                      {i + 1}. {item.tool}
                    </span>
                    <span className="shrink-0 text-xs text-zinc-500">{formatAge(item.created_at, renderedAt)}</span>
                  </div>
                  <div className="mt-0.5 line-clamp-3 break-all font-mono text-xs text-zinc-600 dark:text-zinc-400">{revealPlain(itemSubject(item))}</div>
                  {item.target?.changedSince && <div className="mt-1 text-xs font-medium text-orange-700 dark:text-orange-300">file changed since</div>}
                </button>
              </li>
            ))}
          </ol>
          {selected && (
            <ApprovalDetail
              key={selected.call_id}
              ref={detail}
              item={selected}
              workspaceRoot={workspaceRoot}
              busy={busy}
              onApprove={() => decide(() => approveAction(selected.call_id))}
              onApproveEdited={(content) => decide(() => approveEditedAction(selected.call_id, content))}
              onReject={(reason) => decide(() => rejectAction(selected.call_id, reason))}
            />
          )}
        </div>
      )}
    </div>
  );
}

/** One line naming what a call is about: the command, the path or the URL. */
function itemSubject(item: InboxItem): string {
  if (item.command) return item.command.command;
  const args = (item.args ?? {}) as Record<string, unknown>;
  return item.preview.path ?? item.path ?? (typeof args.url === "string" ? args.url : JSON.stringify(args));
}
