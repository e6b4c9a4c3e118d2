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
  encoding: z.enum(["utf-8", "utf-16le", "utf-16be"]),
  eol: z.enum(["lf", "crlf", "mixed", "none"]),
  bom: z.boolean(),
  mode: z.string().describe('Permission bits as 4 octal digits, e.g. "0644".'),
  warnings: z.array(z.string()),
});
