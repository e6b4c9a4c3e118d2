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
