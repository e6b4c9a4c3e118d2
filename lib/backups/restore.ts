import { callTool } from "@/lib/gateway/call-tool";
import type { Envelope } from "@/lib/result";

/**
 * A restore started by a reviewer from the dashboard. It is not a side door: it goes through the
 * same pipeline as an agent's `restore_backup` call (lib/gateway/call-tool.ts), so it is recorded
 * before anything runs, fenced, checked by the policy and backs up the current bytes first (a
 * restore can itself be undone). The caller is the reviewer (door "dashboard"): when the policy
 * asks (the default for restore_backup), the reviewer's click is the approval, recorded as theirs;
 * nothing waits in the inbox. A policy deny is honoured like for any caller.
 *
 * The call belongs to a session keyed `dashboard:<login>`, so a reviewer's restores group together.
 */

/** Outcome of a dashboard restore: the call's id and the envelope the call ended with. */
export interface RestoreOutcome {
  callId: string | null;
  envelope: Envelope;
}

/**
 * Restores a backup as reviewer `login`.
 * @param backupId the backup to put back
 * @returns the restore call's envelope: success data of restore_backup (path, backup_id of the
 *   bytes it replaced, diff …), or its error (`not_found`, `policy_denied`, `stale_content`, …).
 *   Never throws for a failed restore.
 */
export async function restoreBackupAsReviewer(backupId: string, login: string): Promise<RestoreOutcome> {
  const envelope = await callTool(
    { door: "dashboard", agent: null, reviewer: login, sessionKey: `dashboard:${login}` },
    "restore_backup",
    { backup_id: backupId },
    { waitMs: 0 },
  );
  return { callId: envelope.call_id, envelope };
}
