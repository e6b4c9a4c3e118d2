import fs from "node:fs";
import path from "node:path";
import { getConfig, type Config } from "@/lib/config";
import { migrate } from "@/lib/db/migrate";
import { checkPresetCredentials, ensureAgentToken, ensureReviewer } from "@/lib/auth/tokens";
import { seedDefaultRules } from "@/lib/policy/rule-store";
import { isInside } from "@/lib/workspace/fence";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { ensureHead } from "@/lib/audit/writer";

export interface BootstrapResult {
  /** Migrations applied now. */
  migrations: string[];
  workspaceRoot: string;
  /** True when this start created the workspace folder (and put the sample README.md in it). */
  workspaceCreated: boolean;
  /** A newly created agent token (print once), or null. */
  agentToken: string | null;
  /** A newly generated reviewer password for login "admin" (print once), or null. */
  reviewerPassword: string | null;
  rulesSeeded: number;
}

/**
 * Prepares the store and the workspace before serving: applies migrations, registers the
 * workspace (refusing "/" or the home directory unless forced; a folder it creates gets a sample
 * README.md), creates the first agent token
 * and reviewer when none exist (or registers the preset ones from AGENT_REACH_AGENT_TOKEN,
 * AGENT_REACH_REVIEWER_PASSWORD, AGENT_REACH_REVIEWER_TOKEN) and seeds the default policy.
 * Idempotent: running it again changes nothing.
 * @throws Error with an operator-facing message (a malformed preset credential, bad workspace
 *   root, database unreachable).
 */
export async function bootstrap(env: NodeJS.ProcessEnv = process.env): Promise<BootstrapResult> {
  checkPresetCredentials(env);
  const config = getConfig();
  checkStoreOutsideWorkspace(config);
  const migrations = await migrate(config.databaseUrl);
  const workspaceCreated = !fs.existsSync(config.workspaceRoot);
  const workspace = await currentWorkspace();
  if (workspaceCreated) await writeSampleFile(workspace.root);
  const agentToken = await ensureAgentToken(env.AGENT_REACH_AGENT_TOKEN || undefined);
  const reviewerPassword = await ensureReviewer(env.AGENT_REACH_REVIEWER_PASSWORD || undefined, env.AGENT_REACH_REVIEWER_TOKEN || undefined);
  const rulesSeeded = await seedDefaultRules();
  // A log written before the chain had a signed head gets one now (its current end).
  if (await ensureHead()) console.log("[agent-reach] audit log: signed head initialised at the current end of the chain");
  return { migrations, workspaceRoot: workspace.root, workspaceCreated, agentToken, reviewerPassword, rulesSeeded };
}

/**
 * Refuses a data directory or SQLite file inside the workspace: the agent's tools and commands
 * change the workspace, so they could change the audit log, the backups and the audit key under
 * the gateway. (A workspace inside the data directory is fine: the agent reaches only its own
 * subtree.) Compared by real paths of the nearest
 * existing ancestors, so a link or a folder not made yet cannot hide it.
 * @throws Error with an operator-facing message naming both paths and the setting to change
 */
export function checkStoreOutsideWorkspace(config: Pick<Config, "dataDir" | "workspaceRoot" | "databaseUrl">): void {
  const real = (p: string): string => {
    let cur = path.resolve(p);
    const tail: string[] = [];
    for (;;) {
      try {
        return path.join(fs.realpathSync(cur), ...tail);
      } catch {
        const parent = path.dirname(cur);
        if (parent === cur) return path.resolve(p);
        tail.unshift(path.basename(cur));
        cur = parent;
      }
    }
  };
  const workspace = real(config.workspaceRoot);
  const stores: Array<[string, string]> = [["data directory", real(config.dataDir)]];
  if (config.databaseUrl.startsWith("file:")) stores.push(["SQLite database", real(config.databaseUrl.slice(5))]);
  for (const [what, where] of stores) {
    if (isInside(workspace, where)) {
      throw new Error(
        `Refusing to start: the ${what} ${where} is inside the workspace ${workspace}. The agent changes files in the workspace, ` +
          `so it could change the audit log, the backups and the keys there. Put the data outside the workspace (AGENT_REACH_DATA_DIR, DATABASE_URL) ` +
          `or point AGENT_REACH_WORKSPACE elsewhere.`,
      );
    }
  }
}

/** The sample file a new workspace starts with, so the first calls a new user tries have something to read. */
export const SAMPLE_FILE = "README.md";

/**
 * Puts a short README.md into a workspace folder this start created (never into an existing
 * folder, empty or not), saying what the folder is and what to try. Written with `wx`, so it
 * never replaces anything.
 */
async function writeSampleFile(root: string): Promise<void> {
  const text = [
    "# Agent Reach workspace",
    "",
    "This folder is the workspace root: the agent's tools read, write and run commands here, and",
    "nowhere else. Agent Reach created it on its first start, with this file as a sample.",
    "",
    "Put a project here (or point AGENT_REACH_WORKSPACE at one and restart), then try:",
    "",
    "- list_directory {\"path\": \".\"}",
    "- read_file {\"path\": \"README.md\", \"limit\": 20}",
    "- write_file {\"path\": \"notes.md\", \"content\": \"# Notes\\n\"}: applies at once under the default",
    "  preset (balanced), backed up and shown in the dashboard's review stream; a write to a file that",
    "  runs later (a Makefile, package.json, CI files) waits for a reviewer's approval (default wait",
    "  30 s; then it answers 601 and keeps waiting in the queue). Under strict every write waits.",
    "",
  ].join("\n");
  await fs.promises.writeFile(path.join(root, SAMPLE_FILE), text, { flag: "wx" }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "EEXIST") throw err;
  });
}
