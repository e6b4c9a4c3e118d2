import { subscribe } from "@/lib/events/bus";

/**
 * The one executor of approved calls in this process. Approving is only a conditional
 * transition (pending → approved) plus a wait; the call.approved event that transition appends
 * reaches this executor through the in-process bus (and, from other instances, through
 * LISTEN/NOTIFY), and the executor runs the call when this instance owns the call's workspace
 * (`runApproved` moves approved → running conditionally, so a call runs once however many
 * executors see the event). The server's periodic sweep (`runApprovedBacklog`) is the fallback
 * for an announcement that was missed.
 *
 * The queue is loaded when the first approval arrives (a dynamic import), not with this module:
 * the queue starts this executor, so a static import back would be an import cycle.
 */

const globalForExecutor = globalThis as unknown as { agentReachExecutor?: () => void };

/** Starts the executor (idempotent). @returns nothing; it runs for the life of the process. */
export function startExecutor(): void {
  if (globalForExecutor.agentReachExecutor) return;
  globalForExecutor.agentReachExecutor = subscribe((event) => {
    if (event.type !== "call.approved" || !event.callId) return;
    const callId = event.callId;
    import("@/lib/approvals/queue")
      .then(({ runApproved }) => runApproved(callId))
      .catch((err) => console.error("[agent-reach] running an approved call failed:", (err as Error).message));
  });
}
