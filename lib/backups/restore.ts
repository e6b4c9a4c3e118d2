import { callTool } from "@/lib/gateway/call-tool";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Envelope } from "@/lib/result";
import { resolveInWorkspace } from "@/lib/workspace/fence";

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

/** The sha256 that stands for "no file" when the reviewer saw none: no file's content has it. */
const NO_FILE_SHA256 = "0".repeat(64);

/** Outcome of a dashboard restore: the call's id and the envelope the call ended with. */
export interface RestoreOutcome {
  callId: string | null;
  envelope: Envelope;
}

/**
 * Restores a backup as reviewer `login`.
 * @param backupId the backup to put back
 * @param seen the file as the reviewer saw it when deciding (the page's "what restoring would
 *   change" diff): its sha256, or null when there was no file. The restore happens only if the
 *   file is still exactly that (`expected_sha256`); otherwise it is refused with `stale_content`
 *   (detail `current_sha256`) and nothing is written. When the reviewer saw no file and one exists
 *   now, the call carries the all-zero sha256, which no content has, so it is refused and
 *   recorded like any stale restore. Omitted: no check (the API's own restore_backup rules).
 * @returns the restore call's envelope: success data of restore_backup (path, backup_id of the
 *   bytes it replaced, diff …), or its error (`not_found`, `policy_denied`, `stale_content`, …).
 *   Never throws for a failed restore.
 */
export async function restoreBackupAsReviewer(backupId: string, login: string, seen?: { sha256: string | null }): Promise<RestoreOutcome> {
  let expected: string | undefined;
  if (seen?.sha256) expected = seen.sha256;
  else if (seen && seen.sha256 === null) expected = (await fileExistsNow(backupId)) ? NO_FILE_SHA256 : undefined;
  const envelope = await callTool(
    { door: "dashboard", agent: null, reviewer: login, sessionKey: `dashboard:${login}` },
    "restore_backup",
    { backup_id: backupId, ...(expected !== undefined && { expected_sha256: expected }) },
    { waitMs: 0 },
  );
  return { callId: envelope.call_id, envelope };
}

/** Whether the backup's path exists now (false when unknown or outside the workspace: the call refuses those itself). */
async function fileExistsNow(backupId: string): Promise<boolean> {
  const backup = await db().backup.findUnique({ where: { id: backupId }, select: { path: true } });
  if (!backup) return false;
  try {
    return (await resolveInWorkspace(await currentWorkspace(), backup.path)).exists;
  } catch {
    return false;
  }
}
