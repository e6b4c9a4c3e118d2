"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { restoreBackupAsReviewer } from "@/lib/backups/restore";
import { requireReviewerPage } from "@/lib/dashboard/auth";

/** What the restore button shows afterwards. */
export type RestoreState =
  | { ok: true; callId: string | null; path: string; newBackupId: string | null }
  | { ok: false; callId: string | null; message: string }
  | null;

/**
 * Restores a backup as the signed-in reviewer: an audited restore_backup call that backs up the
 * current bytes first (lib/backups/restore.ts). Form field: `backupId`.
 */
export async function restoreAction(_prev: RestoreState, form: FormData): Promise<RestoreState> {
  const backupId = z.string().min(1).max(100).parse(form.get("backupId"));
  const reviewer = await requireReviewerPage(`/backups/${backupId}`);
  const { callId, envelope } = await restoreBackupAsReviewer(backupId, reviewer.login);
  revalidatePath("/backups", "layout");
  if (!envelope.ok) return { ok: false, callId, message: `${envelope.error.name} (${envelope.error.code}): ${envelope.error.message}` };
  const data = envelope.data as { path?: string; backup_id?: string | null };
  return { ok: true, callId, path: data.path ?? "", newBackupId: data.backup_id ?? null };
}
