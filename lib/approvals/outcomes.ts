import type { Envelope } from "@/lib/result";

/**
 * The envelopes calls finished with in this process, exactly as the tool produced them (not the
 * stored copy, which is redacted and capped), kept for a short while so that whoever waits for a
 * call here receives the same bytes the agent would have received had it not waited: unmasked
 * where a rule says `redact: false`, whole when it is larger than the stored copy's cap.
 * Waiters on another instance fall back to the stored copy (lib/approvals/wait.ts).
 */

/** How long a finished call's envelope stays here (ms). */
const KEEP_MS = 120_000;
/** Most envelopes kept; the oldest go first. */
const MAX_KEPT = 2_000;

interface Kept {
  envelope: Envelope;
  at: number;
}

const globalForOutcomes = globalThis as unknown as { agentReachOutcomes?: Map<string, Kept> };

function kept(): Map<string, Kept> {
  globalForOutcomes.agentReachOutcomes ??= new Map();
  return globalForOutcomes.agentReachOutcomes;
}

/** Remembers the envelope `callId` finished with (the audit writer calls it once the final status is committed). */
export function rememberOutcome(callId: string, envelope: Envelope): void {
  const map = kept();
  const now = Date.now();
  for (const [id, k] of map) {
    if (map.size < MAX_KEPT && now - k.at < KEEP_MS) break;
    map.delete(id);
  }
  map.set(callId, { envelope, at: now });
}

/** The envelope `callId` finished with in this process, or null. */
export function recalledOutcome(callId: string): Envelope | null {
  const k = kept().get(callId);
  return k && Date.now() - k.at < KEEP_MS ? k.envelope : null;
}
