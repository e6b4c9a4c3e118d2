import { getConfig } from "@/lib/config";
import { migrate } from "@/lib/db/migrate";
import { ensureAgentToken, ensureReviewer } from "@/lib/auth/tokens";
import { seedDefaultRules } from "@/lib/gateway/rules";
import { currentWorkspace } from "@/lib/gateway/workspace";
import { ensureHead } from "@/lib/audit/writer";

export interface BootstrapResult {
  /** Migrations applied now. */
  migrations: string[];
  workspaceRoot: string;
  /** A newly created agent token (print once), or null. */
  agentToken: string | null;
  /** A newly generated reviewer password for login "admin" (print once), or null. */
  reviewerPassword: string | null;
  rulesSeeded: number;
}

/**
 * Prepares the store and the workspace before serving: applies migrations, registers the
 * workspace (refusing "/" or the home directory unless forced), creates the first agent token
 * and reviewer when none exist (or registers the preset ones from AGENT_REACH_AGENT_TOKEN,
 * AGENT_REACH_REVIEWER_PASSWORD, AGENT_REACH_REVIEWER_TOKEN) and seeds the default policy.
 * Idempotent: running it again changes nothing.
 * @throws Error with an operator-facing message (bad workspace root, database unreachable).
 */
export async function bootstrap(env: NodeJS.ProcessEnv = process.env): Promise<BootstrapResult> {
  const config = getConfig();
  const migrations = await migrate(config.databaseUrl);
  const workspace = await currentWorkspace();
  const agentToken = await ensureAgentToken(env.AGENT_REACH_AGENT_TOKEN || undefined);
  const reviewerPassword = await ensureReviewer(env.AGENT_REACH_REVIEWER_PASSWORD || undefined, env.AGENT_REACH_REVIEWER_TOKEN || undefined);
  const rulesSeeded = await seedDefaultRules();
  // A log written before the chain had a signed head gets one now (its current end).
  if (await ensureHead()) console.log("[agent-reach] audit log: signed head initialised at the current end of the chain");
  return { migrations, workspaceRoot: workspace.root, agentToken, reviewerPassword, rulesSeeded };
}
