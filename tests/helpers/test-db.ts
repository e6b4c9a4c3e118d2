import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrateSqlite } from "@/lib/db/migrate";

/**
 * Points this test process at a fresh, migrated SQLite file (a real database, not a mock) and a
 * fresh workspace. Call before the first use of `db()` or `getConfig()` in the file.
 * @returns the database file and workspace paths.
 */
export function useFreshDatabase(): { file: string; workspace: string; dataDir: string } {
  const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-db-")));
  const file = path.join(dataDir, "agent-reach.db");
  const workspace = path.join(dataDir, "workspace");
  fs.mkdirSync(workspace);
  process.env.DATABASE_URL = `file:${file}`;
  process.env.AGENT_REACH_WORKSPACE = workspace;
  process.env.AGENT_REACH_DATA_DIR = dataDir;
  migrateSqlite(process.env.DATABASE_URL);
  return { file, workspace, dataDir };
}
