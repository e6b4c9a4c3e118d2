import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrate } from "@/lib/db/migrate";
import { createPgDatabase, testPgUrl } from "@/tests/helpers/pg";

/**
 * Points this test process at a fresh, migrated database (a real one, not a mock): a new SQLite
 * file, or a new database on the test PostgreSQL server when the test runs in the "postgres"
 * project; and a fresh workspace. Call before the first use of `db()` or `getConfig()`.
 */
export async function useFreshDatabase(): Promise<{ url: string; workspace: string; dataDir: string }> {
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-db-")));
  const workspace = path.join(dataDir, "workspace");
  fs.mkdirSync(workspace);
  const pg = testPgUrl();
  const url = pg ? await createPgDatabase(pg) : `file:${path.join(dataDir, "agent-reach.db")}`;
  process.env.DATABASE_URL = url;
  process.env.AGENT_REACH_WORKSPACE = workspace;
  process.env.AGENT_REACH_DATA_DIR = dataDir;
  await migrate(url);
  return { url, workspace, dataDir };
}
