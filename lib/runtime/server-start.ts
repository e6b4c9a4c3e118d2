import { getConfig } from "@/lib/config";
import { markInterrupted, expireDue } from "@/lib/approvals/queue";
import { registerSecret } from "@/lib/redact";
import { bootstrap } from "@/lib/runtime/bootstrap";
import { killAllRunningCommands } from "@/lib/exec/run-command";

const globalForStart = globalThis as unknown as { agentReachStarted?: boolean };

/** How often pending calls are checked for expiry (ms). */
const SWEEP_MS = 5000;

/**
 * In-process start-up of the Next.js server (called from instrumentation.ts `register`):
 * bootstrap (idempotent), mark calls this host left running as interrupted, expire overdue
 * approvals periodically, and kill running commands' process groups on shutdown signals.
 */
export async function startServer(): Promise<void> {
  if (globalForStart.agentReachStarted) return;
  globalForStart.agentReachStarted = true;
  const config = getConfig();
  for (const key of ["AGENT_REACH_AGENT_TOKEN", "AGENT_REACH_REVIEWER_TOKEN", "AGENT_REACH_REVIEWER_PASSWORD"]) {
    const value = process.env[key];
    if (value) registerSecret(value);
  }
  await bootstrap();
  const interrupted = await markInterrupted(config.hostId);
  if (interrupted > 0) console.log(`[agent-reach] ${interrupted} call(s) were running when the server stopped; marked interrupted.`);
  setInterval(() => {
    expireDue().catch((err) => console.error("[agent-reach] expiry sweep failed:", (err as Error).message));
  }, SWEEP_MS).unref();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => killAllRunningCommands());
  }
}
