import { db } from "@/lib/db";
import type { BusEvent } from "@/lib/events/bus";
import { sha256Hex } from "@/lib/ids";
import { signCheckpoint } from "@/lib/audit/checkpoint";
import { HEAD_SETTING, headSignatureOk, parseHead } from "@/lib/audit/head";
import { eventHashInput, GENESIS_HASH, submit, type EventInput } from "@/lib/audit/writer";

/**
 * The hash-chained event log. Every state change of a call (and every reviewer action) is one
 * Event row whose `hash` = sha256(prevHash + "\n" + canonical JSON of {seq, type, callId, actor,
 * data, createdAt}). Changing, inserting or deleting any row breaks every later link, which
 * `verifyChain` reports; deleting the newest rows is caught by the signed head (lib/audit/head.ts).
 * Appends go through the audit writer (lib/audit/writer.ts).
 */

export { GENESIS_HASH, eventHashInput } from "@/lib/audit/writer";

export type AppendEventInput = EventInput;

/**
 * Appends one event to the chain (through the audit writer, sharing a commit with concurrent
 * writes) and publishes it on the in-process bus and to other instances.
 * @returns the stored event.
 */
export async function appendEvent(input: AppendEventInput): Promise<BusEvent> {
  const { event } = await submit({ kind: "append", event: input });
  if (!event) throw new Error("the audit writer did not append the event");
  return event;
}

export interface ChainVerification {
  ok: boolean;
  /** Number of events checked. */
  checked: number;
  /** Sequence number the check started after (a signed checkpoint of pruned history), or 0. */
  from_checkpoint: number;
  /** First broken link, when any. */
  broken: {
    seq: number;
    reason:
      | "prev_hash_mismatch"
      | "hash_mismatch"
      | "seq_gap"
      | "checkpoint_signature"
      /** Events after the signed head's seq are gone (the newest events were deleted). */
      | "truncated"
      /** The newest event is not the one the head signs (events added or replaced without the key). */
      | "head_mismatch"
      /** The head's signature does not verify under the audit key. */
      | "head_signature"
      /** Events exist but the signed head is gone. */
      | "head_missing"
      /** A writer found the head deleted at `seq` and started a new one; history before it is unproven at its end. */
      | "head_reset";
  } | null;
  /** The signed head the chain was checked against: its seq and hash, or null when there is none. */
  head: { seq: number; hash: string } | null;
}

/**
 * Recomputes the whole chain in pages of 1,000 rows. When history was pruned, the check starts
 * from the newest checkpoint: its signature must verify, and the first kept event must follow it
 * (seq and prevHash). Without a checkpoint the chain must start at seq 1 from the genesis hash.
 * Then the end: the signed head must verify under the audit key and name exactly the newest
 * event (seq and hash), so deleting the newest events (`truncated`), appending events without
 * the key (`head_mismatch`) or removing the head (`head_missing`, `head_reset`) is reported.
 * @returns ok, the number checked, the first broken link (seq and why) and the head.
 */
export async function verifyChain(): Promise<ChainVerification> {
  const head = parseHead((await db().setting.findUnique({ where: { key: HEAD_SETTING } }))?.value);
  const headOut = head ? { seq: head.seq, hash: head.hash } : null;
  const checkpoint = await db().checkpoint.findFirst({ orderBy: { upToSeq: "desc" } });
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1;
  if (checkpoint) {
    const body = {
      upToSeq: checkpoint.upToSeq,
      hash: checkpoint.hash,
      cutoff: checkpoint.cutoff.toISOString(),
      prunedEvents: checkpoint.prunedEvents,
      prunedCalls: checkpoint.prunedCalls,
      createdAt: checkpoint.createdAt.toISOString(),
    };
    if (signCheckpoint(body) !== checkpoint.signature) {
      return { ok: false, checked: 0, from_checkpoint: checkpoint.upToSeq, broken: { seq: checkpoint.upToSeq, reason: "checkpoint_signature" }, head: headOut };
    }
    prevHash = checkpoint.hash;
    expectedSeq = checkpoint.upToSeq + 1;
  }
  const from = expectedSeq - 1;
  let checked = 0;
  let cursor = 0;
  for (;;) {
    const rows = await db().event.findMany({ where: { seq: { gt: cursor } }, orderBy: { seq: "asc" }, take: 1000 });
    if (rows.length === 0) break;
    for (const row of rows) {
      const fail = (reason: NonNullable<ChainVerification["broken"]>["reason"]) => ({ ok: false, checked, from_checkpoint: from, broken: { seq: row.seq, reason }, head: headOut });
      if (row.seq !== expectedSeq) return fail("seq_gap");
      if (row.prevHash !== prevHash) return fail("prev_hash_mismatch");
      if (sha256Hex(eventHashInput(prevHash, row)) !== row.hash) return fail("hash_mismatch");
      prevHash = row.hash;
      expectedSeq = row.seq + 1;
      checked++;
    }
    cursor = rows[rows.length - 1].seq;
  }
  const lastSeq = expectedSeq - 1;
  const end = (seq: number, reason: NonNullable<ChainVerification["broken"]>["reason"]): ChainVerification => ({
    ok: false,
    checked,
    from_checkpoint: from,
    broken: { seq, reason },
    head: headOut,
  });
  if (!head) return lastSeq === 0 ? { ok: true, checked, from_checkpoint: from, broken: null, head: null } : end(lastSeq, "head_missing");
  if (!headSignatureOk(head)) return end(head.seq, "head_signature");
  if (head.seq > lastSeq) return end(lastSeq + 1, "truncated");
  if (head.seq < lastSeq || head.hash !== prevHash) return end(head.seq, "head_mismatch");
  if (head.resetAt !== null) return end(head.resetAt, "head_reset");
  return { ok: true, checked, from_checkpoint: from, broken: null, head: headOut };
}
