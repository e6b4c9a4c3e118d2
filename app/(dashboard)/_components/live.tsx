"use client";

import { createContext, useCallback, useContext, useEffect, useRef, useState } from "react";

/**
 * The dashboard's live connection: one EventSource on /api/events per tab (lib/dashboard/live.ts),
 * shared through context. It keeps the number of pending calls (shown in the nav and as "(N)" in
 * the tab title), raises a browser notification when a call starts waiting (once the reviewer
 * allowed notifications), and lets pages subscribe to audit events to refresh their data.
 */

/** An audit event as the stream sends it ("reset" is the stream's own: reload everything). */
export interface LiveEvent {
  seq: number;
  type: string;
  callId: string | null;
  actor: string;
  data: Record<string, unknown>;
  createdAt: string;
}

interface LiveState {
  pending: number;
  connected: boolean;
  subscribe(listener: (event: LiveEvent) => void): () => void;
}

const LiveContext = createContext<LiveState>({ pending: 0, connected: false, subscribe: () => () => {} });

/** The live state: pending count, connection, event subscription. */
export function useLive(): LiveState {
  return useContext(LiveContext);
}

const TITLE_COUNT = /^\(\d+\) /;

/** Keeps "(N) " in front of whatever title the page sets (Next.js rewrites it on navigation). */
function useTitleCount(count: number) {
  useEffect(() => {
    const apply = () => {
      const base = document.title.replace(TITLE_COUNT, "");
      const wanted = count > 0 ? `(${count}) ${base}` : base;
      if (document.title !== wanted) document.title = wanted;
    };
    apply();
    const observer = new MutationObserver(apply);
    observer.observe(document.head, { subtree: true, childList: true, characterData: true });
    return () => observer.disconnect();
  }, [count]);
}

function notifyWaiting(event: LiveEvent) {
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  const tool = typeof event.data.tool === "string" ? event.data.tool : "A call";
  const reasons = Array.isArray(event.data.reasons) ? event.data.reasons.join("; ") : "";
  const n = new Notification(`${tool} waits for approval`, { body: reasons || "Open the approvals inbox to decide.", tag: event.callId ?? undefined });
  n.onclick = () => {
    window.focus();
    window.location.assign(`/approvals?call=${encodeURIComponent(event.callId ?? "")}`);
  };
}

/**
 * @param since the newest event seq when the page was rendered: the stream starts after it, so a
 *   call queued between rendering and connecting still arrives.
 */
export function LiveProvider({ initialPending, since, children }: { initialPending: number; since: number; children: React.ReactNode }) {
  const [pending, setPending] = useState(initialPending);
  const [connected, setConnected] = useState(false);
  const listeners = useRef(new Set<(e: LiveEvent) => void>());

  useEffect(() => {
    const source = new EventSource(`/api/events?since=${since}`);
    source.addEventListener("open", () => setConnected(true));
    source.addEventListener("error", () => setConnected(false));
    source.addEventListener("hello", (e) => setPending(JSON.parse((e as MessageEvent).data).pending));
    source.addEventListener("pending", (e) => setPending(JSON.parse((e as MessageEvent).data).count));
    source.addEventListener("reset", () => listeners.current.forEach((l) => l({ seq: 0, type: "reset", callId: null, actor: "system", data: {}, createdAt: new Date().toISOString() })));
    source.addEventListener("audit", (e) => {
      const event = JSON.parse((e as MessageEvent).data) as LiveEvent;
      if (event.type === "call.pending") notifyWaiting(event);
      listeners.current.forEach((l) => l(event));
    });
    return () => source.close();
    // Connect once per mount; a later `since` (after refreshes) must not reconnect the stream.
  }, []);
  useTitleCount(pending);

  const subscribe = useCallback((listener: (e: LiveEvent) => void) => {
    listeners.current.add(listener);
    return () => listeners.current.delete(listener);
  }, []);

  return <LiveContext.Provider value={{ pending, connected, subscribe }}>{children}</LiveContext.Provider>;
}

/** A button that asks for permission to show browser notifications (hidden once decided). */
export function NotificationToggle() {
  const [permission, setPermission] = useState<NotificationPermission | "unsupported" | null>(null);
  useEffect(() => setPermission(typeof Notification === "undefined" ? "unsupported" : Notification.permission), []);
  if (permission === null || permission === "unsupported") return null;
  if (permission === "granted") return <span className="text-xs text-zinc-500">Notifications on</span>;
  if (permission === "denied") return <span className="text-xs text-zinc-500">Notifications blocked</span>;
  return (
    <button type="button" className="text-xs underline underline-offset-2" onClick={async () => setPermission(await Notification.requestPermission())}>
      Turn on notifications
    </button>
  );
}
