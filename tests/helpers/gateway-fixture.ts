import { test } from "vitest";
import { createAgentToken } from "@/lib/auth/tokens";
import type { Caller } from "@/lib/gateway/call-tool";
import { seedDefaultRules } from "@/lib/policy/rule-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * The gateway in this test process, as most in-process tests of the pipeline, the approval queue
 * and the dashboard's reads set it up: a fresh migrated database (SQLite, or PostgreSQL in the
 * "postgres" project) and workspace (tests/helpers/test-db.ts), the default policy rules, the
 * registered workspace, and one agent token.
 */
export interface InProcessGateway {
  /** The registered workspace (its `root` is canonical). */
  workspace: Workspace;
  /** Connection URL of the fresh database. */
  databaseUrl: string;
  dataDir: string;
  /** The agent the fixture created (named "test agent"). */
  agent: NonNullable<Caller["agent"]>;
  /** A caller for that agent over HTTP in the session `sessionKey`. */
  as(sessionKey: string): Caller;
}

/**
 * `test` with a file-scoped `gateway` fixture (one per test file: the database and the process's
 * configuration are per process). Tests name it (`gatewayTest("…", async ({ gateway }) => …)`),
 * and so can the file's suite hooks: `gatewayTest.beforeAll(({ gateway }) => …)`.
 */
export const gatewayTest = test.extend("gateway", { scope: "file" }, async (): Promise<InProcessGateway> => {
  const { url, dataDir } = await useFreshDatabase();
  await seedDefaultRules();
  const workspace = await currentWorkspace();
  const { agent } = await createAgentToken("test agent");
  return { workspace, databaseUrl: url, dataDir, agent, as: (sessionKey) => ({ door: "http", agent, sessionKey }) };
});
