import { canonicalJson } from "@/lib/canonical-json";
import { getConfig } from "@/lib/config";
import { db, dbProvider, isDatabaseBusy, isDatabaseUnavailable } from "@/lib/db";
import { pgWriterPool } from "@/lib/db/pg-connection";
import { sqliteConnection } from "@/lib/db/sqlite-connection";
import type { Prisma } from "@/lib/generated/prisma/client";
import { sha256Hex } from "@/lib/ids";
import { withLock } from "@/lib/mutex";
import { publishAll, type BusEvent } from "@/lib/events/bus";
import { ANNOUNCE_CHANNEL, announcementPayloads } from "@/lib/events/fanout";
import { HEAD_SETTING, makeHead, parseHead } from "@/lib/audit/head";
import { rememberOutcome } from "@/lib/approvals/outcomes";
import type { Envelope } from "@/lib/result";

/**
 * The audit writer: the only code that appends to the event chain and moves a call's status.
 *
 * Group commit. Writes are submitted as operations; the writer runs whatever has accumulated
 * while the previous transaction was committing as one transaction, so concurrent calls share a
 * commit (one BEGIN/COMMIT and one fsync for many calls). A flush starts at the end of the
 * event-loop turn the first write arrived in (setImmediate), so writes from requests handled in
 * the same turn share it; an idle gateway adds no waiting beyond that turn. Each operation's promise settles only after its
 * transaction committed: a "received" record is durable before the tool runs.
 *
 * Inside a batch:
 * - the chain head (last seq and hash) is read once, and each event's seq and hash are computed
 *   here, in order; all the batch's events go in with one INSERT (no read-last-then-insert per
 *   event). On PostgreSQL a transaction-scoped advisory lock serialises writers across instances;
 *   in one process the "event-chain" lock does (SQLite has one writer anyway);
 * - a status change is a conditional UPDATE (`status IN from`) and its event is appended only
 *   when that UPDATE moved the row, in the same transaction: a status never changes without its
 *   event, and an event never claims a change that did not happen;
 * - the signed head (lib/audit/head.ts) is rewritten once per batch, so `verifyChain` can tell a
 *   truncated chain from a complete one.
 *
 * When a batch fails, its operations are retried one by one, so one bad operation (a foreign key
 * that does not exist) fails alone. A SQLite database locked by another process is retried with
 * an asynchronous back-off (the event loop keeps serving) for up to `BUSY_BUDGET_MS`, then the
 * operation fails with the driver's error, which the doors answer as 503 `unavailable`.
 */

/** Hash that the first event links to. */
export const GENESIS_HASH = "0".repeat(64);

/** Advisory lock key of the event chain (PostgreSQL). */
export const EVENT_CHAIN_LOCK = 74_201_132;

/** Most operations in one transaction. */
const MAX_BATCH = 256;

/** How long a locked SQLite database is retried before an operation fails (ms). */
const BUSY_BUDGET_MS = 10_000;

/** One event to append. */
export interface EventInput {
  type: string;
  callId?: string | null;
  /** Who caused it: "agent:<id>", "reviewer:<login>", "system". */
  actor: string;
  data?: Record<string, unknown>;
}

/** Writes a new ToolCall row and its first event. */
export interface InsertCallOp {
  kind: "insert";
  row: Prisma.ToolCallUncheckedCreateInput;
  event: EventInput;
}

/** Moves a call from one of `from` to `to` (with column values) and appends `event` when it moved. */
export interface TransitionOp {
  kind: "transition";
  callId: string;
  from: readonly string[];
  to: string;
  columns: Prisma.ToolCallUncheckedUpdateManyInput;
  event: EventInput;
  /** The envelope a final transition ends the call with, handed to waiters in this process once committed. */
  outcome?: Envelope;
}

/** Appends an event that is not a call's status change (reviewer actions, settings). */
export interface AppendOp {
  kind: "append";
  event: EventInput;
}

export type WriteOp = InsertCallOp | TransitionOp | AppendOp;

/** What one operation did: `applied` is false for a transition whose call was not in `from`. */
export interface WriteResult {
  applied: boolean;
  event: BusEvent | null;
}

/** The bytes hashed for one event (exported for verification and tests). */
export function eventHashInput(prevHash: string, e: { seq: number; type: string; callId: string | null; actor: string; dataJson: string; createdAt: Date }): string {
  return `${prevHash}\n${canonicalJson({ seq: e.seq, type: e.type, callId: e.callId, actor: e.actor, data: JSON.parse(e.dataJson), createdAt: e.createdAt })}`;
}

/**
 * `eventHashInput` of an event whose `dataJson` is already canonical JSON (as the writer makes
 * it): the same bytes, built without parsing the data and serialising it again. The hashed
 * object's canonical form has its keys in code-unit order: actor, callId, createdAt, data, seq,
 * type; and canonical JSON read and written again is unchanged, so `data` goes in as it is.
 */
export function canonicalEventHashInput(prevHash: string, e: { seq: number; type: string; callId: string | null; actor: string; dataJson: string; createdAt: Date }): string {
  return (
    `${prevHash}\n{"actor":${JSON.stringify(e.actor)},"callId":${JSON.stringify(e.callId)},"createdAt":${JSON.stringify(e.createdAt.toISOString())},` +
    `"data":${e.dataJson},"seq":${JSON.stringify(e.seq)},"type":${JSON.stringify(e.type)}}`
  );
}

interface Pending {
  op: WriteOp;
  resolve: (r: WriteResult) => void;
  reject: (err: unknown) => void;
}

interface WriterState {
  queue: Pending[];
  flushing: boolean;
  /** Transactions committed and operations written (for benchmarks and tests). */
  stats: { transactions: number; operations: number };
}

const globalForWriter = globalThis as unknown as { agentReachAuditWriter?: WriterState };

function state(): WriterState {
  globalForWriter.agentReachAuditWriter ??= { queue: [], flushing: false, stats: { transactions: 0, operations: 0 } };
  return globalForWriter.agentReachAuditWriter;
}

/** Counters of the writer in this process: transactions committed, operations written. */
export function writerStats(): { transactions: number; operations: number } {
  return { ...state().stats };
}

/**
 * Submits one write; it is committed together with whatever else is waiting.
 * @returns once committed: whether it applied (a transition may find its call moved already) and
 *   the event appended. @throws the database's error when it could not be written.
 */
export function submit(op: WriteOp): Promise<WriteResult> {
  const s = state();
  return new Promise<WriteResult>((resolve, reject) => {
    s.queue.push({ op, resolve, reject });
    // Flush after the current turn of the event loop: every write submitted by the requests
    // handled in this turn goes into the same transaction.
    if (!s.flushing) {
      s.flushing = true;
      setImmediate(() => void drain());
    }
  });
}

async function drain(): Promise<void> {
  const s = state();
  try {
    while (s.queue.length > 0) {
      const batch = s.queue.splice(0, MAX_BATCH);
      await writeBatch(batch);
    }
  } finally {
    s.flushing = false;
  }
}

async function writeBatch(batch: Pending[]): Promise<void> {
  let results: WriteResult[];
  try {
    results = await withBusyRetry(() => commit(batch.map((p) => p.op)));
  } catch (err) {
    if (batch.length === 1) {
      batch[0].reject(err);
      return;
    }
    // One operation may be the cause: write each alone so only that one fails.
    for (const p of batch) await writeBatch([p]);
    return;
  }
  const events = results.flatMap((r) => (r.event ? [r.event] : []));
  batch.forEach((p, i) => {
    if (p.op.kind === "transition" && p.op.outcome && results[i].applied) rememberOutcome(p.op.callId, p.op.outcome);
  });
  publishAll(events);
  batch.forEach((p, i) => p.resolve(results[i]));
}

/** Retries `fn` while SQLite reports the database locked, with an asynchronous back-off. */
async function withBusyRetry<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + BUSY_BUDGET_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isDatabaseBusy(err) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, Math.min(200, 5 * 2 ** attempt)));
    }
  }
}

/** Writes a batch in one transaction. @returns one result per operation, in order. */
async function commit(ops: WriteOp[]): Promise<WriteResult[]> {
  const s = state();
  const out = await withLock("event-chain", () => (dbProvider() === "sqlite" ? Promise.resolve(commitSqlite(ops)) : commitPg(ops)));
  s.stats.transactions += 1;
  s.stats.operations += ops.length;
  return out;
}

/**
 * The rows a batch inserts, with the status changes of those same calls that follow their insert
 * folded in: a call received and started in one transaction is inserted "running" with both
 * events appended, instead of an INSERT and then an UPDATE that rewrites the row and its
 * indexes. A change is folded only while every earlier change of that call in the batch was; the
 * first one that cannot be (its call is not in `from`) and everything after it run as ordinary
 * conditional UPDATEs, so the outcome is the same as applying the operations one by one.
 * @returns the rows to insert, and the indexes of the operations folded (applied without an UPDATE)
 */
export function foldIntoInserts(ops: readonly WriteOp[]): { rows: Prisma.ToolCallUncheckedCreateInput[]; folded: Set<number> } {
  const rows: Prisma.ToolCallUncheckedCreateInput[] = [];
  const open = new Map<string, Prisma.ToolCallUncheckedCreateInput>();
  const folded = new Set<number>();
  ops.forEach((op, i) => {
    if (op.kind === "insert") {
      const row = { ...op.row };
      rows.push(row);
      open.set(row.id, row);
    } else if (op.kind === "transition") {
      const row = open.get(op.callId);
      if (!row) return;
      if (!op.from.includes(String(row.status))) {
        open.delete(op.callId);
        return;
      }
      for (const [key, value] of Object.entries(op.columns)) if (value !== undefined) (row as Record<string, unknown>)[key] = value;
      row.status = op.to;
      folded.add(i);
    }
  });
  return { rows, folded };
}

/** The chain arithmetic shared by both back ends: seq, hash and the bus event of each append. */
class ChainCursor {
  readonly rows: { seq: number; type: string; callId: string | null; actor: string; dataJson: string; createdAt: Date; prevHash: string; hash: string }[] = [];
  constructor(
    public seq: number,
    public hash: string,
  ) {}
  append(input: EventInput): BusEvent {
    this.seq += 1;
    const createdAt = new Date();
    const dataJson = canonicalJson(input.data ?? {});
    const callId = input.callId ?? null;
    const prevHash = this.hash;
    this.hash = sha256Hex(canonicalEventHashInput(prevHash, { seq: this.seq, type: input.type, callId, actor: input.actor, dataJson, createdAt }));
    this.rows.push({ seq: this.seq, type: input.type, callId, actor: input.actor, dataJson, createdAt, prevHash, hash: this.hash });
    return { seq: this.seq, type: input.type, callId, actor: input.actor, data: JSON.parse(dataJson), createdAt: createdAt.toISOString() };
  }
  /** The head to store after this batch (null when nothing was appended). */
  headValue(previousHeadValue: string | null | undefined, lastBefore: number | null): string | null {
    if (this.rows.length === 0) return null;
    // A head row that is gone while events exist was deleted by someone: keep saying so.
    const previous = parseHead(previousHeadValue);
    const resetAt = previous ? previous.resetAt : lastBefore;
    return JSON.stringify(makeHead(this.seq, this.hash, resetAt));
  }
}

/**
 * PostgreSQL: the batch on the writer's own connection (lib/db/pg-connection.ts) as plain
 * parameterised SQL in one transaction. A transaction-scoped advisory lock serialises writers
 * across instances; the events are announced to the other instances (pg_notify) inside the same
 * transaction, so they hear of exactly what was committed, at commit.
 *
 * Round trips, since each is a wait on the server: one for BEGIN, the lock and the reads of the
 * chain's end and the signed head (a multi-statement simple query; each statement takes its own
 * snapshot, so the reads see every commit made before the lock was granted), one per status
 * UPDATE (its row count decides the event), one statement for every row the batch writes (the
 * calls inserted, the events, the head, the announcements, as data-modifying CTEs), and COMMIT.
 */
async function commitPg(ops: WriteOp[]): Promise<WriteResult[]> {
  const client = await pgWriterPool().connect();
  let broken: Error | undefined;
  try {
    try {
      const opened = (await client.query(
        `BEGIN; SELECT pg_advisory_xact_lock(${EVENT_CHAIN_LOCK}); ` +
          `SELECT "seq", "hash" FROM "Event" ORDER BY "seq" DESC LIMIT 1; ` +
          `SELECT "value" FROM "Setting" WHERE "key" = '${HEAD_SETTING}'`,
      )) as unknown as Array<{ rows: Record<string, unknown>[] }>;
      const last = opened[2].rows[0] as { seq: number | string; hash: string } | undefined;
      const headRow = opened[3].rows[0] as { value: string } | undefined;
      const { rows: inserts, folded } = foldIntoInserts(ops);
      const lastSeq = last ? Number(last.seq) : null;
      const chain = new ChainCursor(lastSeq ?? 0, last?.hash ?? GENESIS_HASH);
      const statement = pgStatement();
      const insertRows = () => {
        for (const row of inserts) {
          const cols = Object.keys(row).filter((k) => (row as Record<string, unknown>)[k] !== undefined);
          statement.writes.push(`INSERT INTO "ToolCall" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map((c) => statement.param((row as Record<string, unknown>)[c])).join(", ")})`);
        }
      };
      // A status change that was not folded may be of a call this batch inserts: its row must exist first.
      const updatesAhead = ops.some((op, i) => op.kind === "transition" && !folded.has(i));
      if (updatesAhead && inserts.length > 0) {
        insertRows();
        await statement.run(client);
      }
      const results: WriteResult[] = [];
      for (const [i, op] of ops.entries()) {
        if (op.kind === "transition" && !folded.has(i)) {
          const columns = Object.entries({ ...op.columns, status: op.to }).filter(([, v]) => v !== undefined);
          const from = op.from.map((_, k) => `$${columns.length + 2 + k}`).join(", ");
          const { rowCount } = await client.query(
            `UPDATE "ToolCall" SET ${columns.map(([k], j) => `"${k}" = $${j + 1}`).join(", ")} WHERE "id" = $${columns.length + 1} AND "status" IN (${from})`,
            [...columns.map(([, v]) => pgValue(v)), op.callId, ...op.from],
          );
          if (rowCount !== 1) {
            results.push({ applied: false, event: null });
            continue;
          }
        }
        results.push({ applied: true, event: chain.append(op.event) });
      }
      if (!updatesAhead) insertRows();
      const value = chain.headValue(headRow?.value, lastSeq);
      if (value !== null) {
        const { param } = statement;
        const tuples = chain.rows.map((r) => `(${[r.seq, r.type, r.callId, r.actor, r.dataJson, r.createdAt, r.prevHash, r.hash].map(param).join(", ")})`);
        statement.writes.push(`INSERT INTO "Event" ("seq", "type", "callId", "actor", "dataJson", "createdAt", "prevHash", "hash") VALUES ${tuples.join(", ")}`);
        statement.writes.push(
          `INSERT INTO "Setting" ("key", "value", "updatedAt") VALUES (${param(HEAD_SETTING)}, ${param(value)}, ${param(new Date())}) ` +
            `ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "updatedAt" = excluded."updatedAt"`,
        );
        const events = results.flatMap((r) => (r.event ? [r.event] : []));
        const channel = param(ANNOUNCE_CHANNEL);
        for (const payload of announcementPayloads(events)) statement.selects.push(`pg_notify(${channel}, ${param(payload)})`);
      }
      await statement.run(client);
      await client.query("COMMIT");
      return results;
    } catch (err) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw err;
    }
  } catch (err) {
    broken ??= isDatabaseUnavailable(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    // A connection whose rollback failed, or that failed as unreachable, is discarded, not reused.
    client.release(broken);
  }
}

/**
 * Rows to write in one statement: each write a data-modifying CTE (they all run, with one
 * snapshot, whether or not the final SELECT reads them), then a SELECT of `selects` (the
 * announcements). `run` sends it when there is anything to send, then starts afresh.
 */
function pgStatement(): { writes: string[]; selects: string[]; param: (v: unknown) => string; run: (client: { query: (text: string, values: unknown[]) => Promise<unknown> }) => Promise<void> } {
  let params: unknown[] = [];
  const st = {
    writes: [] as string[],
    selects: [] as string[],
    param: (v: unknown) => {
      params.push(pgValue(v));
      return `$${params.length}`;
    },
    async run(client: { query: (text: string, values: unknown[]) => Promise<unknown> }) {
      if (st.writes.length === 0 && st.selects.length === 0) return;
      const text = `${st.writes.length > 0 ? `WITH ${st.writes.map((w, k) => `w${k} AS (${w})`).join(", ")} ` : ""}SELECT ${st.selects.length > 0 ? st.selects.join(", ") : "1"}`;
      const values = params;
      st.writes = [];
      st.selects = [];
      params = [];
      await client.query(text, values);
    },
  };
  return st;
}

/**
 * A JS value as the pg driver should send it: a Date as its UTC ISO text (the columns are
 * `timestamp(3)` without a zone, holding UTC as Prisma writes them; pg's own Date encoding would
 * use the process's local zone).
 */
function pgValue(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (v === undefined) return null;
  return v;
}

/**
 * SQLite: the batch runs synchronously on the writer's own better-sqlite3 connection (prepared
 * statements, no query compilation), inside BEGIN IMMEDIATE … COMMIT. Prisma's per-statement cost
 * was most of an audited call's CPU time; this path spends microseconds per statement. The
 * connection waits at most SQLITE_BUSY_WAIT_MS for a lock; the caller retries asynchronously.
 */
function commitSqlite(ops: WriteOp[]): WriteResult[] {
  const conn = sqliteConnection();
  const run = conn.handle.transaction((): WriteResult[] => {
    const { rows: inserts, folded } = foldIntoInserts(ops);
    for (const row of inserts) {
      const cols = Object.keys(row).filter((k) => (row as Record<string, unknown>)[k] !== undefined);
      conn.statement(`INSERT INTO "ToolCall" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).run(
        ...cols.map((c) => sqliteValue((row as Record<string, unknown>)[c])),
      );
    }
    const last = conn.statement(`SELECT "seq", "hash" FROM "Event" ORDER BY "seq" DESC LIMIT 1`).get() as { seq: number | bigint; hash: string } | undefined;
    const headRow = conn.statement(`SELECT "value" FROM "Setting" WHERE "key" = ?`).get(HEAD_SETTING) as { value: string } | undefined;
    const lastSeq = last ? Number(last.seq) : null;
    const chain = new ChainCursor(lastSeq ?? 0, last?.hash ?? GENESIS_HASH);
    const results: WriteResult[] = [];
    for (const [i, op] of ops.entries()) {
      if (op.kind === "transition" && !folded.has(i)) {
        const columns = Object.entries({ ...op.columns, status: op.to }).filter(([, v]) => v !== undefined);
        const sql =
          `UPDATE "ToolCall" SET ${columns.map(([k]) => `"${k}" = ?`).join(", ")} ` +
          `WHERE "id" = ? AND "status" IN (${op.from.map(() => "?").join(", ")})`;
        const { changes } = conn.statement(sql).run(...columns.map(([, v]) => sqliteValue(v)), op.callId, ...op.from);
        if (changes !== 1) {
          results.push({ applied: false, event: null });
          continue;
        }
      }
      results.push({ applied: true, event: chain.append(op.event) });
    }
    const value = chain.headValue(headRow?.value, lastSeq);
    if (value !== null) {
      const insert = conn.statement(
        `INSERT INTO "Event" ("seq", "type", "callId", "actor", "dataJson", "createdAt", "prevHash", "hash") VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const r of chain.rows) insert.run(r.seq, r.type, r.callId, r.actor, r.dataJson, sqliteValue(r.createdAt), r.prevHash, r.hash);
      conn
        .statement(`INSERT INTO "Setting" ("key", "value", "updatedAt") VALUES (?, ?, ?) ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "updatedAt" = excluded."updatedAt"`)
        .run(HEAD_SETTING, value, sqliteValue(new Date()));
    }
    return results;
  });
  return run.immediate();
}

/** A JS value as better-sqlite3 binds it, in the forms Prisma's SQLite adapter reads back. */
function sqliteValue(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString().replace("Z", "+00:00");
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v === undefined) return null;
  return v;
}

/**
 * Signs the current end of the chain when no head exists yet (a database written before heads
 * existed). Run at start-up, before serving; a head that exists is left alone.
 * @returns true when it wrote a head.
 */
export async function ensureHead(): Promise<boolean> {
  return withLock("event-chain", () =>
    db().$transaction(async (tx) => {
      if (dbProvider() === "postgresql") await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${EVENT_CHAIN_LOCK})`);
      const existing = await tx.setting.findUnique({ where: { key: HEAD_SETTING } });
      if (existing) return false;
      const last = await tx.event.findFirst({ orderBy: { seq: "desc" }, select: { seq: true, hash: true } });
      const checkpoint = last ? null : await tx.checkpoint.findFirst({ orderBy: { upToSeq: "desc" } });
      const head = makeHead(last?.seq ?? checkpoint?.upToSeq ?? 0, last?.hash ?? checkpoint?.hash ?? GENESIS_HASH, null);
      await tx.setting.create({ data: { key: HEAD_SETTING, value: JSON.stringify(head) } });
      return true;
    }),
  );
}
