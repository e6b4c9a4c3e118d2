import { canonicalJson } from "@/lib/canonical-json";
import { db, dbProvider } from "@/lib/db";
import { publish, type BusEvent } from "@/lib/events/bus";
import { announce } from "@/lib/events/fanout";
import { sha256Hex } from "@/lib/ids";
import { withLock } from "@/lib/mutex";
import { signCheckpoint } from "@/lib/audit/checkpoint";

/**
 * The hash-chained event log. Every state change of a call (and every reviewer action) is one
 * Event row whose `hash` = sha256(prevHash + "\n" + canonical JSON of {seq, type, callId, actor,
 * data, createdAt}). Changing, inserting or deleting any row breaks every later link, which
 * `verifyChain` reports.
 */

/** Advisory lock key of the event chain (PostgreSQL). */
const EVENT_CHAIN_LOCK = 74_201_132;

/** Hash that the first event links to. */
export const GENESIS_HASH = "0".repeat(64);

export interface AppendEventInput {
  type: string;
  callId?: string | null;
  /** Who caused it: "agent:<id>", "reviewer:<login>", "system". */
  actor: string;
  data?: Record<string, unknown>;
}

/** The bytes hashed for one event (exported for verification tools and tests). */
export function eventHashInput(prevHash: string, e: { seq: number; type: string; callId: string | null; actor: string; dataJson: string; createdAt: Date }): string {
  return `${prevHash}\n${canonicalJson({ seq: e.seq, type: e.type, callId: e.callId, actor: e.actor, data: JSON.parse(e.dataJson), createdAt: e.createdAt })}`;
}

/**
 * Appends one event to the chain and publishes it on the in-process bus.
 * Appends are serialised (in-process lock + a database transaction), so the chain stays linear.
 * @returns the stored event.
 */
export async function appendEvent(input: AppendEventInput): Promise<BusEvent> {
  const stored = await withLock("event-chain", () =>
    db().$transaction(async (tx) => {
      // Across instances on one PostgreSQL database, a transaction-scoped advisory lock makes
      // the read-last-then-insert step a critical section (SQLite has one writer anyway).
      if (dbProvider() === "postgresql") await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${EVENT_CHAIN_LOCK})`);
      const last = await tx.event.findFirst({ orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
      const prevHash = last?.hash ?? GENESIS_HASH;
      const seq = (last?.seq ?? 0) + 1;
      const createdAt = new Date();
      const dataJson = canonicalJson(input.data ?? {});
      const callId = input.callId ?? null;
      const hash = sha256Hex(eventHashInput(prevHash, { seq, type: input.type, callId, actor: input.actor, dataJson, createdAt }));
      return tx.event.create({
        data: { seq, type: input.type, callId, actor: input.actor, dataJson, createdAt, prevHash, hash },
      });
    }),
  );
  const event: BusEvent = {
    seq: stored.seq,
    type: stored.type,
    callId: stored.callId,
    actor: stored.actor,
    data: JSON.parse(stored.dataJson),
    createdAt: stored.createdAt.toISOString(),
  };
  publish(event);
  await announce(event);
  return event;
}

export interface ChainVerification {
  ok: boolean;
  /** Number of events checked. */
  checked: number;
  /** Sequence number the check started after (a signed checkpoint of pruned history), or 0. */
  from_checkpoint: number;
  /** First broken link, when any. */
  broken: { seq: number; reason: "prev_hash_mismatch" | "hash_mismatch" | "seq_gap" | "checkpoint_signature" } | null;
}

/**
 * Recomputes the whole chain in pages of 1,000 rows. When history was pruned, the check starts
 * from the newest checkpoint: its signature must verify, and the first kept event must follow it
 * (seq and prevHash). Without a checkpoint the chain must start at seq 1 from the genesis hash.
 * @returns ok, the number checked and the first broken link (seq and why).
 */
export async function verifyChain(): Promise<ChainVerification> {
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
      return { ok: false, checked: 0, from_checkpoint: checkpoint.upToSeq, broken: { seq: checkpoint.upToSeq, reason: "checkpoint_signature" } };
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
      const fail = (reason: NonNullable<ChainVerification["broken"]>["reason"]) => ({ ok: false, checked, from_checkpoint: from, broken: { seq: row.seq, reason } });
      if (row.seq !== expectedSeq) return fail("seq_gap");
      if (row.prevHash !== prevHash) return fail("prev_hash_mismatch");
      if (sha256Hex(eventHashInput(prevHash, row)) !== row.hash) return fail("hash_mismatch");
      prevHash = row.hash;
      expectedSeq = row.seq + 1;
      checked++;
    }
    cursor = rows[rows.length - 1].seq;
  }
  return { ok: true, checked, from_checkpoint: from, broken: null };
}
