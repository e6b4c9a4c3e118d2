"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { restoreBackupAsReviewer } from "@/lib/backups/restore";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { errorBody, type ErrorBody } from "@/lib/errors";

/** What the restore button shows afterwards. */
export type RestoreState =
  | { ok: true; callId: string | null; path: string; newBackupId: string | null }
  | { ok: false; callId: string | null; error: ErrorBody; conflict?: { seen: string | null; current: string | null } }
  | null;

/** The current file's sha256 the reviewer saw ("absent": there was no file). */
const Seen = z.union([z.literal("absent"), z.string().regex(/^[0-9a-f]{64}$/)]);

/**
 * Restores a backup as the signed-in reviewer: an audited restore_backup call that backs up the
 * current bytes first (lib/backups/restore.ts), and happens only if the file is still what the
 * reviewer saw. Form fields: `backupId`, `expectedSha256` (the sha256 of the current file in the
 * diff the reviewer looked at, or "absent"). A file changed since is refused (`stale_content`)
 * with both hashes; the page then shows the current diff.
 */
export async function restoreAction(_prev: RestoreState, form: FormData): Promise<RestoreState> {
  const id = z.string().min(1).max(100).safeParse(form.get("backupId"));
  if (!id.success) return { ok: false, callId: null, error: errorBody("invalid_arguments", "No backup was named.", { issues: [{ path: "backupId", message: "a backup id is required" }] }) };
  const backupId = id.data;
  const reviewer = await requireReviewerPage(`/backups/${encodeURIComponent(backupId)}`);
  const seenField = Seen.safeParse(form.get("expectedSha256"));
  if (!seenField.success) {
    return { ok: false, callId: null, error: errorBody("invalid_arguments", "The form did not say which version of the file you saw (a sha256 or \"absent\").", { issues: [{ path: "expectedSha256", message: "a sha256 or \"absent\"" }] }) };
  }
  const seen = seenField.data === "absent" ? null : seenField.data;
  const { callId, envelope } = await restoreBackupAsReviewer(backupId, reviewer.login, { sha256: seen });
  revalidatePath("/backups", "layout");
  if (!envelope.ok && envelope.error.name === "stale_content") {
    const current = typeof envelope.error.detail.current_sha256 === "string" ? envelope.error.detail.current_sha256 : null;
    return {
      ok: false,
      callId,
      conflict: { seen, current },
      error: {
        ...envelope.error,
        message: `the file changed since you looked (you saw ${seen === null ? "no file" : `sha256 ${seen}`}; it now ${current === null ? "does not exist" : `has sha256 ${current}`}). Nothing was written. The diff on this page now shows the current file: check it, then restore again.`,
      },
    };
  }
  if (!envelope.ok) return { ok: false, callId, error: envelope.error };
  const data = envelope.data as { path?: string; backup_id?: string | null };
  return { ok: true, callId, path: data.path ?? "", newBackupId: data.backup_id ?? null };
}
