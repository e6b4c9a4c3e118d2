import BetterSqlite3 from "better-sqlite3";
import { getConfig } from "@/lib/config";
import { SQLITE_BUSY_WAIT_MS, sqlTracing, traceSql } from "@/lib/db";
import { BACKSTOP_PAGES, startCheckpointer, stopCheckpointer } from "@/lib/db/checkpointer";

/**
 * The process's own better-sqlite3 connection to the SQLite database, beside Prisma's: the audit
 * writer commits on it (lib/audit/writer.ts) and the hot path's lookups read through it
 * (an agent token per request), with prepared statements kept per SQL text, so a statement costs
 * microseconds instead of a Prisma query's compilation. Checkpoints run on a worker thread
 * (lib/db/checkpointer.ts), not inside its commits.
 */

/** A connection and its statement cache. */
export interface SqliteConnection {
  url: string;
  handle: BetterSqlite3.Database;
  statement(sql: string): BetterSqlite3.Statement;
}

const globalForSqlite = globalThis as unknown as { agentReachAuditSqlite?: SqliteConnection };

/** The connection to the configured SQLite database (reopened when DATABASE_URL changes). Only for `file:` URLs. */
export function sqliteConnection(): SqliteConnection {
  const url = getConfig().databaseUrl;
  const cached = globalForSqlite.agentReachAuditSqlite;
  if (cached && cached.url === url && cached.handle.open) return cached;
  if (cached?.handle.open) {
    cached.handle.close();
    stopCheckpointer(cached.url.replace(/^file:/, ""));
  }
  const file = url.replace(/^file:/, "");
  const handle = new BetterSqlite3(file, { timeout: SQLITE_BUSY_WAIT_MS, ...(sqlTracing() && { verbose: (sql: unknown) => traceSql("own", String(sql)) }) });
  handle.pragma("journal_mode = WAL");
  handle.pragma("synchronous = NORMAL");
  handle.pragma("foreign_keys = ON");
  // Pages of the tables and indexes every commit touches stay in memory (64 MiB cache) and are
  // read through a memory map rather than a read() per page.
  handle.pragma("cache_size = -65536");
  handle.pragma("mmap_size = 268435456");
  // Checkpoints run on a worker thread, not inside this connection's commits (lib/db/checkpointer.ts).
  handle.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  startCheckpointer(file);
  const statements = new Map<string, BetterSqlite3.Statement>();
  const conn: SqliteConnection = {
    url,
    handle,
    statement(sql) {
      let stmt = statements.get(sql);
      if (!stmt) {
        stmt = handle.prepare(sql);
        if (statements.size > 500) statements.clear();
        statements.set(sql, stmt);
      }
      return stmt;
    },
  };
  globalForSqlite.agentReachAuditSqlite = conn;
  return conn;
}
