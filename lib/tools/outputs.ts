import { z } from "zod";

/**
 * Output schemas shared by several tools (the `output` of a tool definition). Loose objects at
 * every level: a field added later must not make an older client's validation fail.
 */

/** The `data` of a successful write_file, edit_file or restore_backup (lib/workspace/update-file.ts UpdateResult). */
export const UpdateResultOutput = z.looseObject({
  path: z.string().describe("Canonical workspace-relative path that was written."),
  created: z.boolean().describe("True when the file did not exist before."),
  changed: z.boolean().describe("False when the new bytes and mode equal the old ones: nothing was written, no backup."),
  size_bytes: z.number().int().describe("Size of the file now, in bytes."),
  sha256_before: z.string().nullable().describe("sha256 of the old content, null for a new file."),
  sha256: z.string().describe("sha256 of the new content."),
  backup_id: z.string().nullable().describe("Backup of the old bytes (for restore_backup), null when nothing was replaced."),
  diff: z.string().describe("Unified diff of the change."),
  diff_truncated: z.boolean(),
  additions: z.number().int(),
  deletions: z.number().int(),
  encoding: z.string().describe("Encoding the file was written in: utf-8, utf-16le/be, or a legacy one such as gbk, shift_jis, windows-1252."),
  eol: z.enum(["lf", "crlf", "mixed", "none"]),
  bom: z.boolean(),
  mode: z.string().describe('Permission bits as 4 octal digits, e.g. "0644".'),
  warnings: z.array(z.string()),
});

/** A change set's summary (lib/effects/stage.ts ChangesSummary): what a call changed, or what a revert undid. */
export const ChangesOutput = z.looseObject({
  status: z.enum(["applied", "held", "discarded"]).describe("applied: in the workspace; held: waits for a reviewer (wait with get_call); discarded: never applied."),
  created: z.number().int(),
  modified: z.number().int(),
  deleted: z.number().int(),
  bytes: z.number().int().describe("Bytes of new file content the change set writes."),
  total_files: z.number().int().describe("Changed paths in total; files lists at most 200."),
  files: z.array(z.looseObject({ path: z.string(), kind: z.string() })),
  files_truncated: z.boolean(),
  destroyed: z.number().int().optional().describe("Existing files whose content the change set destroys (deleted, replaced by a link, emptied, or cut below half of their lines); many of them hold it for a reviewer, like many deletions."),
  hold_reasons: z.array(z.string()).optional(),
  call_id: z.string().optional(),
});

/** A change set waiting for a reviewer, as get_call shows it (lib/effects/call-hooks.ts HeldEffectsView). */
export const HeldEffectsOutput = z.looseObject({
  summary: z.string().describe("What the reviewer must decide, with the counts, the first paths and why it is held."),
  hold_reasons: z.array(z.string()).describe("Why the change set is held, each danger named (e.g. a git hook, many deletions, a sensitive path)."),
  created: z.number().int(),
  modified: z.number().int(),
  deleted: z.number().int(),
  total_files: z.number().int(),
  files: z.array(z.looseObject({ path: z.string(), kind: z.string() })).describe("Changed paths (at most 50)."),
  files_truncated: z.boolean(),
  review_url: z.string().describe("Where a reviewer approves or rejects the change set."),
});

/** The `data` of revert_call. */
export const RevertResultOutput = z.looseObject({
  reverted_call_id: z.string().describe("The call whose changes were undone."),
  changes: ChangesOutput,
  not_revertible: z.array(z.unknown()).optional().describe("Changes that could not be undone (e.g. bulky generated files applied without backups)."),
});
