import pg from "pg";
import { getConfig } from "@/lib/config";
import { sqlTracing, tracePgPool } from "@/lib/db";

/**
 * The audit writer's own PostgreSQL connection, beside Prisma's pool: the writer commits a batch
 * on it as plain parameterised SQL (lib/audit/writer.ts), where each Prisma query would cost a
 * query compilation and several promise hops. One connection: in one process the writer commits
 * one batch at a time anyway (the "event-chain" lock), and across processes the advisory lock
 * serialises them. The pool reconnects after a lost connection and lets the process exit when idle.
 */

const globalForPg = globalThis as unknown as { agentReachWriterPg?: { url: string; pool: pg.Pool } };

/** The writer's pool (one connection) for the configured `postgresql://` URL; reopened when the URL changes. */
export function pgWriterPool(): pg.Pool {
  const url = getConfig().databaseUrl;
  const cached = globalForPg.agentReachWriterPg;
  if (cached && cached.url === url) return cached.pool;
  if (cached) void cached.pool.end().catch(() => undefined);
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
  // An idle connection that breaks (the server restarted) is dropped by the pool; say so, do not crash.
  pool.on("error", (err) => console.warn(`[agent-reach] audit writer connection lost: ${err.message}`));
  if (sqlTracing()) tracePgPool(pool, "own");
  globalForPg.agentReachWriterPg = { url, pool };
  return pool;
}

/** Closes the writer's pool, if open (gateway shutdown, tests). */
export async function closePgWriterPool(): Promise<void> {
  const cached = globalForPg.agentReachWriterPg;
  globalForPg.agentReachWriterPg = undefined;
  await cached?.pool.end().catch(() => undefined);
}
