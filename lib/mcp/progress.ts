import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";

/** How often a waiting call reports progress (ms). */
export const PROGRESS_INTERVAL_MS = 5000;

export interface ProgressReporter {
  /** Starts reporting: one notification now, then one every interval until `stop`. */
  onPending(callId: string): void;
  /** Stops reporting (idempotent). */
  stop(): void;
}

/**
 * Progress notifications for a `tools/call` that waits for a reviewer (MCP spec, "Utilities →
 * Progress"): sent only when the request carried `_meta.progressToken`; `progress` increases by
 * one per notification (no `total`: the wait has no known length); `message` names the call so a
 * client can show it. A client that sets `resetTimeoutOnProgress` keeps the request alive.
 * @param send the request's `sendNotification` (routes the notification to the request's stream).
 * @param token the request's progress token, or undefined (then nothing is sent).
 * @param intervalMs milliseconds between notifications.
 */
export function progressReporter(
  send: (notification: ServerNotification) => Promise<void>,
  token: ProgressToken | undefined,
  intervalMs = PROGRESS_INTERVAL_MS,
): ProgressReporter {
  let timer: ReturnType<typeof setInterval> | null = null;
  let progress = 0;
  let stopped = false;
  const notify = (callId: string, startedAt: number) => {
    progress += 1;
    const waited = Math.round((Date.now() - startedAt) / 1000);
    send({
      method: "notifications/progress",
      params: {
        progressToken: token!,
        progress,
        message: `Waiting for a reviewer to approve call ${callId} (${waited} s so far).`,
      },
    }).catch(() => {
      /* the client went away; the wait ends through the request's abort signal */
    });
  };
  return {
    onPending(callId) {
      if (token === undefined || stopped || timer) return;
      const startedAt = Date.now();
      notify(callId, startedAt);
      timer = setInterval(() => notify(callId, startedAt), intervalMs);
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
