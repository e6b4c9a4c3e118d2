import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { getConfig } from "@/lib/config";

/**
 * The one Prisma client of this process, on `globalThis` so that Next.js bundles and hot
 * reloads share it. Only lib/ touches the database, always through `db()`.
 *
 * SQLite (`file:…`, the default) goes through the better-sqlite3 driver adapter with a 10 s busy
 * timeout; WAL mode is set by lib/db/migrate.ts when the file is created.
 */
const globalForDb = globalThis as unknown as { agentReachDb?: PrismaClient };

export type Db = PrismaClient;

/** Returns the process-wide Prisma client, creating it on first use. */
export function db(): PrismaClient {
  if (!globalForDb.agentReachDb) globalForDb.agentReachDb = createClient(getConfig().databaseUrl);
  return globalForDb.agentReachDb;
}

/** Creates a client for `url` (used by db() and by scripts that open a specific database). */
export function createClient(url: string): PrismaClient {
  if (url.startsWith("file:")) {
    return new PrismaClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) });
  }
  throw new Error(`Unsupported DATABASE_URL scheme: ${url.split(":")[0]}: (SQLite file: URLs are supported)`);
}
