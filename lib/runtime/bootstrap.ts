import { getConfig } from "@/lib/config";
import { migrate } from "@/lib/db/migrate";
import { checkPresetCredentials, ensureAgentToken, ensureReviewer } from "@/lib/auth/tokens";
import { seedDefaultRules } from "@/lib/gateway/rules";
import { currentWorkspace } from "@/lib/gateway/workspace";

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
 * @throws Error with an operator-facing message (a malformed preset credential, bad workspace
 *   root, database unreachable).
 */
export async function bootstrap(env: NodeJS.ProcessEnv = process.env): Promise<BootstrapResult> {
  checkPresetCredentials(env);
  const config = getConfig();
  const migrations = await migrate(config.databaseUrl);
  const workspace = await currentWorkspace();
  const agentToken = await ensureAgentToken(env.AGENT_REACH_AGENT_TOKEN || undefined);
  const reviewerPassword = await ensureReviewer(env.AGENT_REACH_REVIEWER_PASSWORD || undefined, env.AGENT_REACH_REVIEWER_TOKEN || undefined);
  const rulesSeeded = await seedDefaultRules();
  return { migrations, workspaceRoot: workspace.root, agentToken, reviewerPassword, rulesSeeded };
}
