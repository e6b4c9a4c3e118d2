import { getConfig, loadConfig, useConfig, type Config } from "@/lib/config";
import { createClient, db, useDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { Envelope } from "@/lib/result";
import { approveCall, rejectCall, type DecisionResult } from "@/lib/approvals/queue";
import { waitForOutcome, withdrawCall } from "@/lib/approvals/wait";
import { startExecutor } from "@/lib/approvals/executor";
import { verifyChain, type ChainVerification } from "@/lib/audit/events";
import { writerStats } from "@/lib/audit/writer";
import { callTool, type Caller, type CallOptions } from "@/lib/gateway/call-tool";
import { forgetWorkspace } from "@/lib/workspace/register-workspace";
import { bootstrap, type BootstrapResult } from "@/lib/runtime/bootstrap";
import { closePgReaderPool, closePgWriterPool } from "@/lib/db/pg-connection";

/**
 * The gateway in process, without a server: for tests of the pipeline, benchmarks and embedding.
 *
 *   const gw = await createGateway({ env: { AGENT_REACH_WORKSPACE: dir, DATABASE_URL: "file:/tmp/x.db" } });
 *   const env = await gw.call("read_file", { path: "a.txt" });
 *   await gw.close();
 *
 * It installs the configuration and the database client as this process's own (the pipeline
 * reads them through getConfig() and db(), as it does under Next.js), applies migrations, registers
 * the workspace (this instance owns it), seeds the default policy and the agent token, and starts
 * the executor of approved calls. One gateway per process at a time: creating another replaces it.
 */

export interface GatewayOptions {
  /** Environment to configure from (as the server reads process.env); merged over process.env. */
  env?: Record<string, string | undefined>;
  /** A complete configuration instead of `env`. */
  config?: Config;
  /** A Prisma client to use instead of one opened from the configuration's DATABASE_URL. */
  db?: PrismaClient;
}

export interface Gateway {
  config: Config;
  db: PrismaClient;
  /** What start-up did (migrations, the agent token it created, …). */
  boot: BootstrapResult;
  /** The agent every `call` acts as (the first agent token of the database). */
  agent: { id: string; name: string };
  /** One tool call through the whole pipeline as `agent` on the HTTP door (or as `caller`). */
  call(tool: string, args: unknown, options?: Partial<CallOptions> & { caller?: Partial<Caller> }): Promise<Envelope>;
  /** A reviewer approves a pending call; resolves once it ran (or the wait bound passed). */
  approve(callId: string, reviewer?: string, edit?: { content?: string }): Promise<DecisionResult>;
  /** A reviewer rejects a pending call. */
  reject(callId: string, reviewer: string, reason: string): Promise<DecisionResult>;
  /** Waits for a call's outcome (null when not finished within `waitMs`). */
  wait(callId: string, waitMs: number, signal?: AbortSignal): Promise<Envelope | null>;
  /** Withdraws a pending call (never runs; 602 with reason "withdrawn"). */
  withdraw(callId: string, reason: string): Promise<boolean>;
  /** Verifies the audit chain and its signed head. */
  verify(): Promise<ChainVerification>;
  /** Audit writer counters (transactions, operations) of this process. */
  stats(): { transactions: number; operations: number };
  /** Disconnects the database and forgets the installed configuration. */
  close(): Promise<void>;
}

/** Creates an in-process gateway. @throws Error for an invalid configuration or an unusable workspace. */
export async function createGateway(options: GatewayOptions = {}): Promise<Gateway> {
  const config = options.config ?? loadConfig({ ...process.env, ...options.env } as NodeJS.ProcessEnv);
  useConfig(config);
  useDb(options.db ?? createClient(config.databaseUrl));
  forgetWorkspace();
  const boot = await bootstrap({ ...process.env, ...options.env } as NodeJS.ProcessEnv);
  startExecutor();
  const client = db();
  const agent = await client.agent.findFirstOrThrow({ where: { revokedAt: null }, orderBy: { createdAt: "asc" }, select: { id: true, name: true } });
  return {
    config: getConfig(),
    db: client,
    boot,
    agent,
    call(tool, args, opts = {}) {
      const { caller, ...rest } = opts;
      return callTool({ door: "http", agent, sessionKey: null, ...caller }, tool, args, { waitMs: 0, ...rest });
    },
    approve: (callId, reviewer = "admin", edit) => approveCall(callId, reviewer, edit),
    reject: rejectCall,
    wait: waitForOutcome,
    withdraw: (callId, reason) => withdrawCall(callId, reason),
    verify: verifyChain,
    stats: writerStats,
    async close() {
      await client.$disconnect();
      await closePgWriterPool();
      await closePgReaderPool();
      useDb(null);
      useConfig(null);
      forgetWorkspace();
    },
  };
}
