import { getConfig } from "@/lib/config";
import { expireDue, markInterrupted, runApproved, runApprovedBacklog } from "@/lib/approvals/queue";
import { subscribe } from "@/lib/events/bus";
import { startFanout } from "@/lib/events/fanout";
import { registerSecret } from "@/lib/redact";
import { bootstrap } from "@/lib/runtime/bootstrap";
import { killAllRunningCommands } from "@/lib/exec/run-command";

const globalForStart = globalThis as unknown as { agentReachStarted?: boolean };

/** How often pending calls are checked for expiry and approved ones for a missed run (ms). */
const SWEEP_MS = 2000;

/**
 * In-process start-up of the Next.js server (called from instrumentation.ts `register`):
 * bootstrap (idempotent), mark calls this host left running as interrupted, listen for other
 * instances' events (PostgreSQL), run approved calls of this instance's workspace, expire
 * overdue approvals periodically, and kill running commands' process groups on shutdown signals.
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
  await startFanout();
  // Approvals decided on another instance: run them when they are announced, and sweep for any
  // whose announcement was missed.
  subscribe((event) => {
    if (event.type === "call.approved" && event.callId) {
      runApproved(event.callId).catch((err) => console.error("[agent-reach] running an approved call failed:", (err as Error).message));
    }
  });
  const sweep = async () => {
    await expireDue();
    await runApprovedBacklog();
  };
  await sweep();
  setInterval(() => {
    sweep().catch((err) => console.error("[agent-reach] background sweep failed:", (err as Error).message));
  }, SWEEP_MS).unref();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => killAllRunningCommands());
  }
}
