import { approveCall } from "@/lib/approvals/queue";
import { callTool, pendingEnvelope } from "@/lib/gateway/call-tool";
import { failure, type Envelope } from "@/lib/result";

/**
 * A restore started by a reviewer from the dashboard. It is not a side door: it goes through the
 * same pipeline as an agent's `restore_backup` call (lib/gateway/call-tool.ts), so it is recorded
 * before anything runs, fenced, checked by the policy and backs up the current bytes first (a
 * restore can itself be undone). The reviewer's click is the approval: when the policy asks (the
 * default for restore_backup), the call is queued and approved at once by that reviewer, so the
 * log shows who restored what, when. A policy deny is honoured like for any caller.
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
 *   bytes it replaced, diff …), or its error (`not_found`, `policy_denied`, `conflict` when the file
 *   changed between queueing and approval, …), or `approval_pending` when the instance that
 *   serves the workspace has not run the approved call yet (it will). Never throws for a failed
 *   restore.
 */
export async function restoreBackupAsReviewer(backupId: string, login: string): Promise<RestoreOutcome> {
  const queued = await callTool({ door: "http", agent: null, sessionKey: `dashboard:${login}` }, "restore_backup", { backup_id: backupId }, { waitMs: 0 });
  if (queued.ok || queued.error.name !== "approval_pending" || queued.call_id === null) return { callId: queued.call_id, envelope: queued };
  const decided = await approveCall(queued.call_id, login);
  return { callId: queued.call_id, envelope: decided.ok ? (decided.envelope ?? pendingEnvelope(queued.call_id)) : failure(queued.call_id, decided.error) };
}
