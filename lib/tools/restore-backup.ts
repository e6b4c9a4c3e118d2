import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool, type BackupRecord, type ToolContext } from "@/lib/tools/define-tool";
import { sha256Hex } from "@/lib/workspace/text";
import { previewUpdate, updateFile, type PlannedContent, type UpdateRequest } from "@/lib/workspace/update-file";
import { UpdateResultOutput } from "@/lib/tools/outputs";
import { expectedSha256Field } from "@/lib/tools/inputs";

/**
 * restore_backup: writes a backup's bytes and mode back to its path (docs/field-cases.md
 * C06-3, C10-4, C15-5). The restore is itself an audited write through the same pipeline as
 * write_file: fenced again (the path may have become a symlink since), locked, checked against
 * `expected_sha256` and the queued sha256, and it backs up the current bytes first, so a restore
 * can be undone by restoring that new backup. Backups are bytes, never decoded text.
 */

export const RestoreBackupInput = z
  .object({
    backup_id: z.string().min(1).describe("The backup to restore: a backup_id from write_file, edit_file, restore_backup or list_backups."),
    expected_sha256: expectedSha256Field(
      "The sha256 the file has now. When given, the restore happens only if the file still has exactly that content (else stale_content).",
    ),
  })
  .strict();

type RestoreBackupArgs = z.infer<typeof RestoreBackupInput>;

/**
 * Loads a backup and checks its bytes against its recorded sha256.
 *
 * @throws ToolError `not_found` (reason "backup_not_found"); `internal` when the stored bytes do
 *   not match the recorded sha256 (a damaged store; nothing is written)
 */
async function loadBackup(ctx: ToolContext, id: string): Promise<BackupRecord & { bytes: Buffer }> {
  const backup = await ctx.backups.get(id);
  if (backup === null) {
    throw new ToolError("not_found", `No backup with id ${JSON.stringify(id)} in this workspace; list_backups shows the available ones.`, {
      reason: "backup_not_found",
      backup_id: id,
    });
  }
  if (sha256Hex(backup.bytes) !== backup.sha256) {
    throw new ToolError("internal", "The stored backup does not match its recorded sha256; it was not restored.", { backup_id: id });
  }
  return backup;
}

function request(backup: BackupRecord & { bytes: Buffer }, args: RestoreBackupArgs): UpdateRequest<PlannedContent> {
  return {
    rawPath: backup.path,
    expectedSha256: args.expected_sha256,
    createDirs: true,
    plan: () => ({ bytes: backup.bytes, mode: backup.mode, warnings: [] }),
  };
}

/** JSON Schema source of restore_backup's `data`: the write result plus the backup restored. */
const RestoreBackupOutput = UpdateResultOutput.extend({ restored_from: z.string() });

export const restoreBackupTool = defineTool({
  name: "restore_backup",
  title: "Restore backup",
  description: [
    "Put a file back exactly as it was before a write_file, edit_file or restore_backup call replaced it: the backup's bytes and file mode are written back to its path atomically.",
    "The current content is backed up first, so a restore can itself be undone (its result has a new backup_id). Use list_backups to find backup ids.",
    "The result has path, restored_from, created, size_bytes, sha256_before, sha256, backup_id, diff, additions, deletions and warnings.",
  ].join(" "),
  input: RestoreBackupInput,
  risk: "write",
  changes: "file",
  output: RestoreBackupOutput,
  annotations: { idempotentHint: true },
  // The path lives in the backup record: policy and fence see it like any write's target.
  subject: async (args, ctx) => {
    const backup = await ctx.backups.get(args.backup_id);
    return { paths: backup ? [backup.path] : [] };
  },
  async preview(args, ctx) {
    const backup = await loadBackup(ctx, args.backup_id);
    return previewUpdate(ctx, request(backup, args));
  },
  async run(args, ctx) {
    const backup = await loadBackup(ctx, args.backup_id);
    const { result } = await updateFile(ctx, request(backup, args));
    return { ...result, restored_from: backup.id };
  },
});
