import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { PrismaClient as PrismaClientPg } from "@/lib/generated/prisma-pg/client";
import { getConfig } from "@/lib/config";
import { isDatabaseBusy } from "@/lib/db-errors";
import { BACKSTOP_PAGES } from "@/lib/db/checkpointer";

export { isDatabaseBusy, isDatabaseUnavailable } from "@/lib/db-errors";

/**
 * The one Prisma client of this process, on `globalThis` so that Next.js bundles and hot
 * reloads share it. Only lib/ touches the database, always through `db()`.
 *
 * The provider follows DATABASE_URL: `file:…` is SQLite through the better-sqlite3 driver
 * adapter (WAL mode set by lib/db/migrate.ts; `synchronous = NORMAL` and a short busy wait set on
 * the connection here, see `tuneSqlite`); `postgres://` or
 * `postgresql://` is PostgreSQL through the pg adapter. Prisma 7 ties a generated client to one
 * provider, so there are two clients generated from one model (prisma/schema.prisma and its
 * derived prisma/postgres/schema.prisma); they have the same shape, and the rest of the code
 * sees one type.
 */
const globalForDb = globalThis as unknown as { agentReachDb?: PrismaClient };

/** "sqlite" or "postgresql", from a database URL. @throws Error for any other scheme. */
export function providerOf(url: string): "sqlite" | "postgresql" {
  if (url.startsWith("file:")) return "sqlite";
  if (/^postgres(ql)?:\/\//.test(url)) return "postgresql";
  throw new Error(`Unsupported DATABASE_URL scheme "${url.split(":")[0]}:" (use file:… for SQLite or postgresql://… for PostgreSQL)`);
}

/** Returns the process-wide Prisma client, creating it on first use. */
export function db(): PrismaClient {
  if (!globalForDb.agentReachDb) globalForDb.agentReachDb = createClient(getConfig().databaseUrl);
  return globalForDb.agentReachDb;
}

/**
 * Installs `client` as the process-wide client (in-process gateways and tests), or forgets the
 * current one (null) so the next `db()` opens DATABASE_URL again.
 */
export function useDb(client: PrismaClient | null): void {
  globalForDb.agentReachDb = client ?? undefined;
}

/** The provider of the process-wide database. */
export function dbProvider(): "sqlite" | "postgresql" {
  return providerOf(getConfig().databaseUrl);
}

/** Creates a client for `url` (used by db() and by scripts that open a specific database). */
export function createClient(url: string): PrismaClient {
  const trace = sqlTracing();
  const client =
    providerOf(url) === "sqlite"
      ? new PrismaClient({
          adapter: new TunedSqliteFactory(new PrismaBetterSqlite3({ url, timeout: SQLITE_BUSY_WAIT_MS, ...(trace && { verbose: (sql: unknown) => traceSql("prisma", String(sql)) }) })),
        })
      : (new PrismaClientPg({ adapter: tracedPg(new PrismaPg({ connectionString: url, max: 20, connectionTimeoutMillis: 5_000 }), trace) }) as unknown as PrismaClient);
  return client;
}

/**
 * Who sent a traced statement: Prisma's connection, or the process's own connection beside it
 * (lib/db/sqlite-connection.ts: the audit writer's commits and the token check on SQLite;
 * lib/db/pg-connection.ts: the audit writer's commits on PostgreSQL).
 */
export type SqlOrigin = "prisma" | "own";

/**
 * Statement tracing, for profiling only (bench/profile-call.ts, bench/pipeline.ts): with
 * AGENT_REACH_SQL_TRACE=1 in the environment when a connection opens, every SQL statement it
 * executes (BEGIN and COMMIT included) is handed to `globalThis.agentReachSqlTrace(sql, origin)`.
 * SQLite reports through better-sqlite3's `verbose` hook (the statement with its parameters
 * filled in); PostgreSQL by wrapping `query` of each pooled pg client. Off, it costs nothing.
 */
export function sqlTracing(): boolean {
  return process.env.AGENT_REACH_SQL_TRACE === "1";
}

/** Hands one executed statement to the trace sink, if a benchmark installed one. */
export function traceSql(origin: SqlOrigin, sql: string): void {
  (globalThis as unknown as { agentReachSqlTrace?: (sql: string, origin: SqlOrigin) => void }).agentReachSqlTrace?.(sql, origin);
}

type PgFactory = InstanceType<typeof PrismaPg>;
type PgQueryable = { query: (...args: unknown[]) => unknown };
type PgPoolLike = { on(e: "connect", f: (c: PgQueryable) => void): unknown };

/** Reports every statement of each client `pool` connects (a pg.Pool) as sent by `origin`. */
export function tracePgPool(pool: PgPoolLike, origin: SqlOrigin): void {
  pool.on("connect", (client) => {
    const query = client.query.bind(client);
    client.query = (...args: unknown[]) => {
      const q = args[0];
      traceSql(origin, typeof q === "string" ? q : String((q as { text?: unknown })?.text ?? ""));
      return query(...args);
    };
  });
}

/** The pg adapter factory, reporting each statement of each pooled client when `trace` is on. */
function tracedPg(factory: PgFactory, trace: boolean): PgFactory {
  if (!trace) return factory;
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    tracePgPool(adapter.underlyingDriver() as unknown as PgPoolLike, "prisma");
    return adapter;
  };
  return factory;
}

/**
 * How long one SQLite statement waits synchronously for a lock another process holds (ms).
 * better-sqlite3 waits inside the call, which blocks the event loop, so this stays short; the
 * audit writer and `withSqliteBusyRetry` retry with an asynchronous back-off instead.
 */
export const SQLITE_BUSY_WAIT_MS = 25;

/** How long statements outside a transaction retry a locked SQLite database before failing (ms). */
const SQLITE_BUSY_BUDGET_MS = 10_000;

type SqliteFactory = InstanceType<typeof PrismaBetterSqlite3>;
type SqliteAdapter = Awaited<ReturnType<SqliteFactory["connect"]>>;

/**
 * The better-sqlite3 adapter factory with this gateway's connection settings:
 * - `synchronous = NORMAL` (with WAL): a commit is durable against a crash of the process (the
 *   WAL is in the OS's page cache) and fsyncs only at checkpoints; a power cut may lose the last
 *   commits before the most recent checkpoint (docs/RELIABILITY.md);
 * - WAL checkpoints off the event loop (lib/db/checkpointer.ts), the automatic one only as a backstop;
 * - statements outside a transaction that find the database locked by another process are
 *   retried asynchronously (a short synchronous wait each, then a timer) for up to 10 s, so a
 *   lock holder delays those calls without freezing the server; past the budget the driver's
 *   busy error surfaces and the doors answer 503 `unavailable`.
 */
class TunedSqliteFactory {
  readonly provider = "sqlite" as const;
  readonly adapterName: string;
  constructor(private readonly inner: SqliteFactory) {
    this.adapterName = inner.adapterName;
  }
  async connect(): Promise<SqliteAdapter> {
    const adapter = await this.inner.connect();
    const conn = (adapter as unknown as { client: { pragma(sql: string): unknown } }).client;
    conn.pragma("synchronous = NORMAL");
    // Checkpoints run on the writer's worker thread (lib/db/checkpointer.ts); this is the backstop.
    conn.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    const queryRaw = adapter.queryRaw.bind(adapter);
    const executeRaw = adapter.executeRaw.bind(adapter);
    adapter.queryRaw = (query) => withSqliteBusyRetry(() => queryRaw(query));
    adapter.executeRaw = (query) => withSqliteBusyRetry(() => executeRaw(query));
    return adapter;
  }
  connectToShadowDb(): Promise<SqliteAdapter> {
    return this.inner.connectToShadowDb();
  }
}

/** Retries `fn` while SQLite reports the database locked, sleeping (not spinning) between tries. */
async function withSqliteBusyRetry<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + SQLITE_BUSY_BUDGET_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isDatabaseBusy(err) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, Math.min(200, 5 * 2 ** attempt)));
    }
  }
}

