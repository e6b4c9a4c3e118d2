import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { PrismaClient as PrismaClientPg } from "@/lib/generated/prisma-pg/client";
import { getConfig } from "@/lib/config";

/**
 * The one Prisma client of this process, on `globalThis` so that Next.js bundles and hot
 * reloads share it. Only lib/ touches the database, always through `db()`.
 *
 * The provider follows DATABASE_URL: `file:…` is SQLite through the better-sqlite3 driver
 * adapter (10 s busy timeout; WAL mode set by lib/db/migrate.ts); `postgres://` or
 * `postgresql://` is PostgreSQL through the pg adapter. Prisma 7 ties a generated client to one
 * provider, so there are two clients generated from one model (prisma/schema.prisma and its
 * derived prisma/postgres/schema.prisma); they have the same shape, and the rest of the code
 * sees one type.
 */
const globalForDb = globalThis as unknown as { agentReachDb?: PrismaClient };

export type Db = PrismaClient;

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

/** The provider of the process-wide database. */
export function dbProvider(): "sqlite" | "postgresql" {
  return providerOf(getConfig().databaseUrl);
}

/** Creates a client for `url` (used by db() and by scripts that open a specific database). */
export function createClient(url: string): PrismaClient {
  if (providerOf(url) === "sqlite") {
    return new PrismaClient({ adapter: new PrismaBetterSqlite3({ url, timeout: 10_000 }) });
  }
  const pg = new PrismaClientPg({ adapter: new PrismaPg({ connectionString: url, max: 20 }) });
  return pg as unknown as PrismaClient;
}
