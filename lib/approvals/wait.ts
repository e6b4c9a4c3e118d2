import { db } from "@/lib/db";
import { errorBody } from "@/lib/errors";
import { subscribeCall } from "@/lib/events/bus";
import { failure, type Envelope } from "@/lib/result";
import { finishCall, isFinal } from "@/lib/audit/calls";
import { recalledOutcome } from "@/lib/approvals/outcomes";
import { resultColumn } from "@/lib/audit/record";
import { dropHeldEffects } from "@/lib/effects/call-hooks";

/**
 * Waiting for a call's outcome, and withdrawing a call nobody should run any more. A leaf module
 * with a small API for every door that waits (HTTP `Prefer: wait`, the status route, get_call,
 * MCP tasks):
 *
 * - `waitForOutcome(callId, waitMs, signal?)` → the envelope the call finished with, or null when
 *   it has not finished within `waitMs` (or `signal` aborted). In the process that ran the call,
 *   that is the envelope exactly as the tool produced it (unmasked where a rule says
 *   `redact: false`, whole past the stored copy's size cap); elsewhere it is the stored copy
 *   (redacted; when cut for storage, a valid envelope with `truncated_for_storage`). Wakes on the
 *   call's events (in-process bus; other instances' events arrive through LISTEN/NOTIFY) and
 *   re-reads the database every 500 ms in case an event was missed. A pending call whose expiry
 *   has passed is expired on the way (603).
 * - `withdrawCall(callId, reason, actor)` → ends a call that still waits for a reviewer (status
 *   "pending") as rejected (602, `detail.reason` "withdrawn"), e.g. when its agent cancelled the
 *   MCP task or its token was revoked. @returns true when this caller ended it; false when the
 *   call was not pending any more (decided, running, finished).
 */

/** How often a waiter re-reads the database when no event arrives (ms). */
const POLL_MS = 500;

/**
 * Waits until the call has finished or `waitMs` passed.
 * @returns the call's final envelope, or null when it is still undecided or running.
 */
export async function waitForOutcome(callId: string, waitMs: number, signal?: AbortSignal): Promise<Envelope | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const recalled = recalledOutcome(callId);
    if (recalled) return recalled;
    const row = await db().toolCall.findUnique({ where: { id: callId }, select: { status: true, resultJson: true, expiresAt: true } });
    const stored = row && isFinal(row.status) ? resultColumn.decode(row.resultJson) : null;
    if (stored) return recalledOutcome(callId) ?? stored;
    if (row && isOverdue(row)) {
      await expireCall(callId);
      continue;
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0 || signal?.aborted) return null;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(POLL_MS, remaining));
      const unsubscribe = subscribeCall(callId, done);
      signal?.addEventListener("abort", done, { once: true });
      function done() {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener("abort", done);
        resolve();
      }
    });
  }
}

/** True for a pending call whose `expiresAt` has passed. */
export function isOverdue(row: { status: string; expiresAt: Date | null }): boolean {
  return row.status === "pending" && row.expiresAt !== null && row.expiresAt < new Date();
}

/** Ends one pending call with `approval_expired` (603). @returns true when this caller ended it. */
export async function expireCall(callId: string): Promise<boolean> {
  const envelope = failure(callId, errorBody("approval_expired", "No reviewer decided on this call in time; it was not run.", { call_id: callId }));
  const done = await finishCall(callId, ["pending"], "expired", envelope, { actor: "system", extra: { decidedAt: new Date() } });
  if (done) await dropHeldEffects(callId); // a held change set nobody decided is discarded with its call
  return done;
}

/**
 * Withdraws a pending call: it ends "rejected" with `approval_rejected` (602), `detail.reason`
 * "withdrawn" and the given reason, and is never run. @returns true when this caller ended it.
 */
export async function withdrawCall(callId: string, reason: string, actor = "system"): Promise<boolean> {
  const envelope = failure(
    callId,
    errorBody("approval_rejected", `The call was withdrawn before a reviewer decided: ${reason}`, { reason: "withdrawn", why: reason, call_id: callId }),
  );
  const done = await finishCall(callId, ["pending"], "rejected", envelope, { actor, extra: { reviewReason: `withdrawn: ${reason}`, decidedAt: new Date() } });
  if (done) await dropHeldEffects(callId);
  return done;
}
