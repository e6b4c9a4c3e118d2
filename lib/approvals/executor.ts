import { subscribe } from "@/lib/events/bus";
import { runApproved } from "@/lib/approvals/queue";

/**
 * The one executor of approved calls in this process. Approving is only a conditional
 * transition (pending → approved) plus a wait; the call.approved event that transition appends
 * reaches this executor through the in-process bus (and, from other instances, through
 * LISTEN/NOTIFY), and the executor runs the call when this instance owns the call's workspace
 * (`runApproved` moves approved → running conditionally, so a call runs once however many
 * executors see the event). The server's periodic sweep (`runApprovedBacklog`) is the fallback
 * for an announcement that was missed.
 */

const globalForExecutor = globalThis as unknown as { agentReachExecutor?: () => void };

/** Starts the executor (idempotent). @returns nothing; it runs for the life of the process. */
export function startExecutor(): void {
  if (globalForExecutor.agentReachExecutor) return;
  globalForExecutor.agentReachExecutor = subscribe((event) => {
    if (event.type !== "call.approved" || !event.callId) return;
    runApproved(event.callId).catch((err) => console.error("[agent-reach] running an approved call failed:", (err as Error).message));
  });
}
