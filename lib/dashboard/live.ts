import { db } from "@/lib/db";
import { subscribe } from "@/lib/events/bus";
import { countPending } from "@/lib/dashboard/approvals";

/**
 * The dashboard's live feed as a server-sent event stream (WHATWG HTML "Server-sent events").
 * The source of truth is the Event table: the stream sends every event after a cursor, in seq
 * order, and wakes up on the in-process bus (instant) or every POLL_MS (events written by another
 * instance). Each event carries its seq as the SSE `id`, so a reconnecting EventSource resumes
 * with `Last-Event-ID` without missing or repeating anything.
 *
 * Messages:
 * - `event: hello`   data {seq, pending}: sent once on connect (seq = the cursor).
 * - `event: audit`   data {seq, type, callId, actor, data, createdAt}: one per audit event.
 * - `event: pending` data {count}: calls waiting for a reviewer, after any call event.
 * - `event: reset`   data {}: more events were missed than are replayed; reload the data.
 * - a comment line every HEARTBEAT_MS keeps proxies from closing an idle stream.
 */

const POLL_MS = 2000;
const HEARTBEAT_MS = 15_000;
/** Most events replayed after a reconnect before the client is told to reload instead. */
const MAX_REPLAY = 1000;
const BATCH = 200;

/** The seq of the newest audit event (0 when there is none): where a page's live feed starts. */
export async function latestEventSeq(): Promise<number> {
  return (await db().event.findFirst({ orderBy: { seq: "desc" }, select: { seq: true } }))?.seq ?? 0;
}

/** One SSE message: `event`, optional `id`, JSON `data`. */
export function sseMessage(event: string, data: unknown, id?: number): string {
  return `${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Opens the stream.
 * @param resumeFrom the seq of the last event the client has seen: the `Last-Event-ID` header of
 *   a reconnect, or the `since` query parameter (the seq the page was rendered at, so events
 *   between rendering and connecting are not missed); null to start from now
 * @param signal aborted when the client goes away (the request's signal)
 */
export function liveEventStream(resumeFrom: string | null, signal: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cleanup = () => {};
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      let closed = false;
      const send = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      const latest = await latestEventSeq();
      const resume = resumeFrom !== null && /^\d{1,15}$/.test(resumeFrom) ? Math.min(Number(resumeFrom), latest) : null;
      let cursor = resume ?? latest;
      if (resume !== null && latest - resume > MAX_REPLAY) {
        send(sseMessage("reset", {}));
        cursor = latest;
      }
      send(`retry: 2000\n\n`);
      send(sseMessage("hello", { seq: cursor, pending: await countPending() }));

      let running = false;
      let again = false;
      const pump = async () => {
        if (running) {
          again = true;
          return;
        }
        running = true;
        try {
          do {
            again = false;
            let callEvents = false;
            for (;;) {
              const rows = await db().event.findMany({ where: { seq: { gt: cursor } }, orderBy: { seq: "asc" }, take: BATCH });
              for (const e of rows) {
                send(sseMessage("audit", { seq: e.seq, type: e.type, callId: e.callId, actor: e.actor, data: JSON.parse(e.dataJson), createdAt: e.createdAt.toISOString() }, e.seq));
                cursor = e.seq;
                callEvents ||= e.type.startsWith("call.");
              }
              if (rows.length < BATCH || closed) break;
            }
            if (callEvents) send(sseMessage("pending", { count: await countPending() }));
          } while (again && !closed);
        } catch (err) {
          console.warn(`[agent-reach] live stream: ${(err as Error).message}`);
        } finally {
          running = false;
        }
      };

      const unsubscribe = subscribe(() => void pump());
      const poll = setInterval(() => void pump(), POLL_MS);
      const heartbeat = setInterval(() => send(`: keep-alive\n\n`), HEARTBEAT_MS);
      cleanup = () => {
        if (closed) return;
        closed = true;
        unsubscribe();
        clearInterval(poll);
        clearInterval(heartbeat);
        try {
          controller.close();
        } catch {
          /* already closed */
        }
      };
      signal.addEventListener("abort", cleanup, { once: true });
      if (resume !== null) await pump();
    },
    cancel() {
      cleanup();
    },
  });
}
