import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool } from "@/lib/tools/define-tool";
import { applyEdit, emptyOldString } from "@/lib/workspace/edit-text";
import { assertWellFormed, editableText } from "@/lib/workspace/text";
import { previewUpdate, updateFile, type CurrentFile, type PlannedContent, type UpdateRequest } from "@/lib/workspace/update-file";

/**
 * edit_file: exact string replacement in an existing file (DESIGN.md "Tools"; field cases C06,
 * C07, C08, C10, C14, C15, C17). Matching and line-ending rules are in lib/workspace/edit-text.ts;
 * the write (lock, checks, backup, atomic rename, diff) in lib/workspace/update-file.ts.
 *
 * Encodings: UTF-8 (with or without BOM) and UTF-16 with BOM are edited and written back in the
 * same encoding; a file with invalid UTF-8 bytes is edited as bytes, so every byte outside the
 * replaced span stays as it was (C06); binary files are refused (`binary_file`).
 */

const SHA256 = /^[0-9a-fA-F]{64}$/;

export const EditFileInput = z
  .object({
    path: z.string().describe("File to edit: relative to the workspace root (e.g. \"src/app.ts\") or absolute inside it. The file must exist."),
    old_string: z
      .string()
      .describe(
        "Exact text to replace, copied from read_file output without the line-number prefix (\"     12| \"). Include enough surrounding lines that it occurs exactly once. LF line breaks also match CRLF files.",
      ),
    new_string: z.string().describe("Replacement text. Must differ from old_string. Line breaks follow the file's style (CRLF files stay CRLF)."),
    replace_all: z.boolean().default(false).describe("Replace every non-overlapping occurrence instead of requiring exactly one (default false)."),
    expected_sha256: z
      .string()
      .regex(SHA256, "expected_sha256 must be 64 hexadecimal digits")
      .optional()
      .describe(
        "The sha256 that read_file reported for this file. When given, the edit happens only if the file still has exactly that content; otherwise it fails with stale_content and the current sha256.",
      ),
  })
  .strict();

type EditFileArgs = z.infer<typeof EditFileInput>;

interface PlannedEdit extends PlannedContent {
  replacements: number;
  /** 1-based start lines of the replaced occurrences. */
  lines: number[];
}

/** Argument checks that need no file (C17-3, C17-4). */
function assertEditArguments(args: EditFileArgs): void {
  if (args.old_string === "") throw emptyOldString();
  if (args.old_string === args.new_string) {
    throw new ToolError("edit_noop", "old_string and new_string are identical, so the edit would change nothing.");
  }
  assertWellFormed(args.old_string, "old_string");
  assertWellFormed(args.new_string, "new_string");
}

/**
 * Applies the edit to the current bytes.
 *
 * @throws ToolError `not_found`; `binary_file`; `encoding_unsupported` (reasons "utf16_odd_length",
 *   "replacement_character"); `edit_no_match`; `edit_ambiguous`; `edit_noop` (the result equals
 *   the current bytes, e.g. a change of line endings only)
 */
function planEdit(args: EditFileArgs, current: CurrentFile | null, path: string): PlannedEdit {
  if (current === null) {
    throw new ToolError("not_found", `No such file: ${path}. edit_file changes existing files; use write_file to create one.`, { path });
  }
  const doc = editableText(current.bytes);
  if (doc.byteMode && countReplacementChars(args.new_string) > countReplacementChars(args.old_string)) {
    throw new ToolError(
      "encoding_unsupported",
      "The file holds bytes that are not valid UTF-8 (read_file shows them as U+FFFD), and new_string adds U+FFFD characters, which would replace those bytes with EF BF BD. Leave the U+FFFD characters out of old_string and new_string.",
      { reason: "replacement_character", encoding: "utf-8" },
    );
  }
  const edit = applyEdit(doc, { path, oldString: args.old_string, newString: args.new_string, replaceAll: args.replace_all });
  const bytes = doc.toBytes(edit.text);
  if (bytes.equals(current.bytes)) {
    throw new ToolError("edit_noop", "The edit would leave the file unchanged (old_string and new_string differ only in line endings, which follow the file).", {
      path,
    });
  }
  const warnings = doc.byteMode ? ["the file has bytes that are not valid UTF-8; they were kept byte for byte"] : [];
  return { bytes, warnings, replacements: edit.replacements, lines: edit.lines };
}

function countReplacementChars(s: string): number {
  return s.split("\ufffd").length - 1;
}

function request(args: EditFileArgs): UpdateRequest<PlannedEdit> {
  return {
    rawPath: args.path,
    expectedSha256: args.expected_sha256,
    createDirs: false,
    plan: (current, target) => planEdit(args, current, target.relative),
  };
}

export const editFileTool = defineTool({
  name: "edit_file",
  title: "Edit file",
  description: [
    "Replace an exact piece of text in an existing file. Use this instead of sed, awk or perl -i, and instead of rewriting a whole file to change a few lines.",
    "old_string must match the file exactly (copy it from read_file output without the line-number prefix) and occur exactly once; otherwise the call fails with edit_no_match (with the closest line) or edit_ambiguous (with the count and line numbers) and nothing changes. Add surrounding lines to make it unique, or set replace_all.",
    "The file keeps its encoding, byte order mark, line endings (an LF old_string matches in a CRLF file and new_string is written with CRLF) and mode; bytes that are not valid UTF-8 elsewhere in the file are kept exactly. Binary files are refused.",
    "Pass expected_sha256 (from read_file) to make sure the file has not changed since you read it.",
    "The result has path, replacements, lines, size_bytes, sha256_before, sha256, backup_id (for restore_backup), diff, additions, deletions, eol, bom, encoding and warnings.",
  ].join(" "),
  input: EditFileInput,
  editable: { field: "new_string", label: "Replacement text" },
  risk: "write",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  subject: (args) => ({ paths: [args.path] }),
  async preview(args, ctx) {
    assertEditArguments(args);
    return previewUpdate(ctx, request(args));
  },
  async run(args, ctx) {
    assertEditArguments(args);
    ctx.note({ bytesIn: Buffer.byteLength(args.old_string) + Buffer.byteLength(args.new_string) });
    const { result, plan } = await updateFile(ctx, request(args));
    return { ...result, replacements: plan.replacements, lines: plan.lines };
  },
});
