import { warmSandbox } from "@/lib/exec/sandbox";
import { getConfig } from "@/lib/config";
import { expireDue, markInterrupted, runApprovedBacklog } from "@/lib/approvals/queue";
import { startExecutor } from "@/lib/approvals/executor";
import { expireGrants } from "@/lib/approvals/grants";
import { startFanout } from "@/lib/events/fanout";
import { registerSecret } from "@/lib/redact";
import { bootstrap } from "@/lib/runtime/bootstrap";
import { applyRetention } from "@/lib/audit/retention";
import { killAllRunningCommands } from "@/lib/exec/run-command";
import { sweepTempsAtStart } from "@/lib/workspace/temp-sweep";
import { recoverChangeSets } from "@/lib/effects/recover";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { acquireDatabaseLock, acquireInstanceLock } from "@/lib/runtime/instance-lock";

const globalForStart = globalThis as unknown as { agentReachStarted?: boolean };

/** How often pending calls are checked for expiry and approved ones for a missed run (ms). */
const SWEEP_MS = 2000;

/**
 * In-process start-up of the Next.js server (called from instrumentation.ts `register`): the
 * data directory's server lock (lib/runtime/instance-lock.ts; @throws InstanceLockError when
 * another server holds it), bootstrap (idempotent), mark calls this host left running as interrupted, remove the temp files
 * of writes a crash interrupted (lib/workspace/temp-sweep.ts), listen for other
 * instances' events (PostgreSQL), run approved calls of this instance's workspace, expire
 * overdue approvals periodically, and kill running commands' process groups on shutdown signals.
 */
export async function startServer(): Promise<void> {
  if (globalForStart.agentReachStarted) return;
  globalForStart.agentReachStarted = true;
  const config = getConfig();
  // Before anything touches calls or temp files: a second server on this data directory refuses here.
  const address = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`;
  acquireInstanceLock(config.dataDir, config.hostId, address);
  acquireDatabaseLock(config.databaseUrl, config.hostId, address);
  for (const key of ["AGENT_REACH_AGENT_TOKEN", "AGENT_REACH_REVIEWER_TOKEN", "AGENT_REACH_REVIEWER_PASSWORD"]) {
    const value = process.env[key];
    if (value) registerSecret(value);
  }
  await bootstrap();
  // Before interrupted calls are marked: an apply a crash cut off is finished (or rolled back).
  const recovered = await recoverChangeSets(await currentWorkspace());
  if (recovered.rolledForward.length + recovered.rolledBack.length > 0) {
    console.log(`[agent-reach] interrupted change sets: ${recovered.rolledForward.length} applied in full, ${recovered.rolledBack.length} rolled back`);
  }
  // Probe the command sandbox now (its status shows in health at once) and scan the system for
  // files to mask in the background, so the first command does not wait for the scan.
  warmSandbox();
  const interrupted = await markInterrupted(config.hostId);
  if (interrupted > 0) console.log(`[agent-reach] ${interrupted} call(s) were running or undecided when the server stopped; marked interrupted.`);
  const swept = await sweepTempsAtStart(config.hostId);
  if (swept.removed.length > 0) console.log(`[agent-reach] removed ${swept.removed.length} temp file(s) of interrupted writes: ${swept.removed.slice(0, 10).join(", ")}${swept.removed.length > 10 ? ", …" : ""}`);
  await startFanout();
  // Approved calls (decided here or on another instance) run on this instance's one executor when
  // announced; the sweep catches any whose announcement was missed.
  startExecutor();
  const sweep = async () => {
    await expireDue();
    await expireGrants();
    await runApprovedBacklog();
  };
  await sweep();
  // Retention (AGENT_REACH_RETENTION_DAYS): once at start, then hourly.
  const retain = () =>
    applyRetention()
      .then((r) => r && r.prunedCalls + r.prunedEvents > 0 && console.log(`[agent-reach] retention pruned ${r.prunedCalls} call(s), ${r.prunedEvents} event(s) before ${r.cutoff}`))
      .catch((err) => console.error("[agent-reach] retention failed:", (err as Error).message));
  void retain();
  setInterval(retain, 3600_000).unref();
  setInterval(() => {
    sweep().catch((err) => console.error("[agent-reach] background sweep failed:", (err as Error).message));
  }, SWEEP_MS).unref();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => killAllRunningCommands());
  }
}
