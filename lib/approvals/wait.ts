import { db } from "@/lib/db";
import { errorBody } from "@/lib/errors";
import { subscribeCall } from "@/lib/events/bus";
import { failure, type Envelope } from "@/lib/result";
import { finishCall, isFinal } from "@/lib/audit/calls";
import { recalledOutcome } from "@/lib/approvals/outcomes";
import { resultColumn } from "@/lib/audit/record";
import { dropHeldEffects, heldEnvelope, isHeldEffects } from "@/lib/effects/call-hooks";

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
 * - `waitForAnswer(callId, waitMs, signal?)` → like waitForOutcome, but also returns when the
 *   call's command ran and its change set is held for a reviewer: then the held result envelope
 *   (see below). For the requests that wait for a call to *run*: the agent's own waiting tool
 *   call and the reviewer's approve request.
 * - `withdrawCall(callId, reason, actor)` → ends a call that still waits for a reviewer (status
 *   "pending") as rejected (602, `detail.reason` "withdrawn"), e.g. when its agent cancelled the
 *   MCP task or its token was revoked. @returns true when this caller ended it; false when the
 *   call was not pending any more (decided, running, finished).
 */

/*
 * The states a call with held effects passes through, and what each waiter gets:
 *
 *   pending (asks for approval) ──approve──▶ approved ──executor──▶ running ──command ran,
 *   change set held──▶ pending, held (pendingJson.effects; ChangeSet.status "held")
 *     ──approve──▶ approved ──▶ running ──▶ succeeded (applied) | conflict (605) | failed
 *     ──reject──▶ rejected (602, changes discarded)     ──expiry──▶ expired (603, discarded)
 *
 * A held call is status "pending" with `pendingJson.effects` (the dashboard and the pending
 * list show "effects held": the diff, the reasons). The command has already run, so:
 * - the agent's request that waited for the command (its tool call, `Prefer: wait`) and the
 *   approve request that ran it get the held result envelope as soon as the change set is held:
 *   `ok: true`, the command's output, `changes.status` "held" (waitForAnswer); a call that
 *   runs without approval answers the same envelope directly;
 * - get_call with `wait_ms` and `GET /api/calls/{id}?wait=` wait for the final decision on the
 *   held effect (waitForOutcome): the envelope with `changes.status` "applied", 605 or 602;
 *   until then, status "pending" and no result (202 `approval_pending` over HTTP);
 * - the approve request of the held effect itself waits for the apply: its final envelope.
 */

/** How often a waiter re-reads the database when no event arrives (ms). */
const POLL_MS = 500;

/**
 * Waits until the call has finished or `waitMs` passed.
 * @returns the call's final envelope, or null when it is still undecided or running.
 */
export async function waitForOutcome(callId: string, waitMs: number, signal?: AbortSignal): Promise<Envelope | null> {
  return waitFor(callId, waitMs, false, signal);
}

/**
 * Waits until the call has finished, or its command ran and its change set is held for a
 * reviewer, or `waitMs` passed.
 * @returns the final envelope; the held result envelope (`changes.status` "held") while the
 *   call is pending with held effects; null when it is still undecided or running.
 */
export async function waitForAnswer(callId: string, waitMs: number, signal?: AbortSignal): Promise<Envelope | null> {
  return waitFor(callId, waitMs, true, signal);
}

async function waitFor(callId: string, waitMs: number, orHeld: boolean, signal?: AbortSignal): Promise<Envelope | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const recalled = recalledOutcome(callId);
    if (recalled) return recalled;
    const row = await db().toolCall.findUnique({ where: { id: callId }, select: { status: true, resultJson: true, expiresAt: true, pendingJson: true } });
    const stored = row && isFinal(row.status) ? resultColumn.decode(row.resultJson) : null;
    if (stored) return recalledOutcome(callId) ?? stored;
    if (orHeld && row?.status === "pending" && isHeldEffects(row.pendingJson) && !isOverdue(row)) {
      const held = await heldEnvelope(callId);
      if (held) return held;
    }
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
