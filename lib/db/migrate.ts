import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/**
 * Applies the committed migration SQL (prisma/migrations/<name>/migration.sql) to a SQLite
 * database, in name order, each once, and records it in `_prisma_migrations` with Prisma's own
 * columns and checksum (sha256 of the file), so Prisma's CLI stays compatible where it can run.
 *
 * The whole run holds SQLite's write lock (`BEGIN IMMEDIATE`), so two instances starting at once
 * do not race: the second waits (busy timeout) and then finds everything applied.
 *
 * @param url `file:<path>` of the database; the file and its directory are created if missing.
 * @param migrationsDir folder of migration folders (default `<cwd>/prisma/migrations`).
 * @returns names of the migrations applied by this call (empty when up to date).
 * @throws Error when a migration fails (its transaction is rolled back; nothing is recorded).
 */
export function migrateSqlite(url: string, migrationsDir = path.resolve("prisma/migrations")): string[] {
  const file = url.replace(/^file:/, "");
  if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const conn = new Database(file, { timeout: 30_000 });
  try {
    conn.pragma("journal_mode = WAL");
    conn.pragma("synchronous = NORMAL");
    conn.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" TEXT PRIMARY KEY NOT NULL,
      "checksum" TEXT NOT NULL,
      "finished_at" DATETIME,
      "migration_name" TEXT NOT NULL,
      "logs" TEXT,
      "rolled_back_at" DATETIME,
      "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
      "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0
    )`);
    const applied: string[] = [];
    conn.exec("BEGIN IMMEDIATE");
    try {
      const done = new Set(
        conn
          .prepare(`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`)
          .all()
          .map((r) => (r as { migration_name: string }).migration_name),
      );
      for (const name of listMigrations(migrationsDir)) {
        if (done.has(name)) continue;
        const sql = fs.readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");
        conn.exec(sql);
        conn
          .prepare(
            `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
             VALUES (?, ?, ?, ?, ?, 1)`,
          )
          .run(crypto.randomUUID(), sha256(sql), new Date().toISOString(), name, new Date().toISOString());
        applied.push(name);
      }
      conn.exec("COMMIT");
    } catch (err) {
      conn.exec("ROLLBACK");
      throw err;
    }
    return applied;
  } finally {
    conn.close();
  }
}

/** Migration folder names in apply order. */
function listMigrations(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort();
}

function sha256(text: string): string {
  return crypto.createHash("sha256").update(text).digest("hex");
}

/** Advisory lock key serialising migrations across instances on one PostgreSQL database. */
const PG_MIGRATION_LOCK = 74_201_131;

/**
 * Applies prisma/postgres/migrations to a PostgreSQL database, each migration in its own
 * transaction, recorded in `_prisma_migrations` like Prisma does. Instances starting together
 * serialise on a session advisory lock, so each migration is applied once.
 * @returns names of the migrations applied by this call.
 * @throws Error when a migration fails (its transaction is rolled back).
 */
export async function migratePostgres(url: string, migrationsDir = path.resolve("prisma/postgres/migrations")): Promise<string[]> {
  const { Client } = await import("pg");
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PG_MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const { rows } = await client.query(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const done = new Set(rows.map((r: { migration_name: string }) => r.migration_name));
    const applied: string[] = [];
    for (const name of listMigrations(migrationsDir)) {
      if (done.has(name)) continue;
      const sql = fs.readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, now(), 1)`,
          [crypto.randomUUID(), sha256(sql), name],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw err;
      }
      applied.push(name);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PG_MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
}

/** Applies the migrations of whichever provider `url` names. @returns names applied now. */
export async function migrate(url: string): Promise<string[]> {
  return url.startsWith("file:") ? migrateSqlite(url) : migratePostgres(url);
}
