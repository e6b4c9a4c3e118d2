import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool } from "@/lib/tools/define-tool";
import { applyEdit, emptyOldString } from "@/lib/workspace/edit-text";
import { requireEncoding } from "@/lib/workspace/encoding";
import { assertSureEnough, assertWellFormed, editableText } from "@/lib/workspace/text";
import { previewUpdate, updateFile, type CurrentFile, type PlannedContent, type UpdateRequest } from "@/lib/workspace/update-file";
import { UpdateResultOutput } from "@/lib/tools/outputs";
import { expectedSha256Field } from "@/lib/tools/inputs";

/**
 * edit_file: exact string replacement in an existing file (docs/field-cases.md C06,
 * C07, C08, C10, C14, C15, C17). Matching and line-ending rules are in lib/workspace/edit-text.ts;
 * the write (lock, checks, backup, atomic rename, diff) in lib/workspace/update-file.ts.
 *
 * Encodings: the file is decoded in its own encoding (BOM, `encoding` argument, UTF-8, the
 * workspace's legacy encoding or a detector's guess; lib/workspace/encoding.ts), the match is made
 * on the decoded text, and the replacement is encoded and spliced into the original bytes, so
 * every byte outside the replaced span stays as it was. A file with invalid UTF-8 bytes that no
 * other encoding explains is edited as bytes (C06); binary files are refused (`binary_file`).
 * New text the encoding cannot hold, and non-ASCII new text in a file whose encoding is only an
 * unsure guess, are refused with `encoding_unsupported`.
 */

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
    expected_sha256: expectedSha256Field(
      "The sha256 that read_file reported for this file. When given, the edit happens only if the file still has exactly that content; otherwise it fails with stale_content and the current sha256.",
    ),
    encoding: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The file\'s encoding, when you know it better than detection (e.g. "gbk", "shift_jis", "windows-1252"): the file is decoded and the edit written in it. Usually leave it out; pass it when edit_file refused with encoding_unsupported reason "uncertain_encoding".',
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
  if (args.encoding !== undefined) requireEncoding(args.encoding, "encoding");
}

/**
 * Applies the edit to the current bytes.
 *
 * @throws ToolError `not_found`; `binary_file`; `encoding_unsupported` (reasons "utf16_odd_length",
 *   "replacement_character"); `edit_no_match`; `edit_ambiguous`; `edit_noop` (the result equals
 *   the current bytes, e.g. a change of line endings only)
 */
function planEdit(args: EditFileArgs, current: CurrentFile | null, path: string, legacy: string | null): PlannedEdit {
  if (current === null) {
    throw new ToolError("not_found", `No such file: ${path}. edit_file changes existing files; use write_file to create one.`, { path });
  }
  const requested = args.encoding === undefined ? null : requireEncoding(args.encoding, "encoding");
  const doc = editableText(current.bytes, { requested, legacy });
  assertSureEnough(doc, args.new_string, "new_string");
  if (doc.byteMode && countReplacementChars(args.new_string) > countReplacementChars(args.old_string)) {
    throw new ToolError(
      "encoding_unsupported",
      "The file holds bytes that are not valid UTF-8 (read_file shows them as U+FFFD), and new_string adds U+FFFD characters, which would replace those bytes with EF BF BD. Leave the U+FFFD characters out of old_string and new_string.",
      { reason: "replacement_character", encoding: "utf-8" },
    );
  }
  const edit = applyEdit(doc, { path, oldString: args.old_string, newString: args.new_string, replaceAll: args.replace_all });
  const bytes = doc.spliceBytes(edit.splices, "new_string");
  if (bytes.equals(current.bytes)) {
    throw new ToolError("edit_noop", "The edit would leave the file unchanged (old_string and new_string differ only in line endings, which follow the file).", {
      path,
    });
  }
  const warnings = doc.byteMode ? ["the file has bytes that are not valid UTF-8; they were kept byte for byte"] : [];
  return { bytes, warnings, replacements: edit.replacements, lines: edit.lines, encoding: doc.profile.encoding };
}

function countReplacementChars(s: string): number {
  return s.split("\ufffd").length - 1;
}

function request(args: EditFileArgs, legacy: string | null): UpdateRequest<PlannedEdit> {
  return {
    rawPath: args.path,
    expectedSha256: args.expected_sha256,
    createDirs: false,
    plan: (current, target) => planEdit(args, current, target.relative, legacy),
  };
}

/** JSON Schema source of edit_file's `data`: the write result plus where the edit landed. */
const EditFileOutput = UpdateResultOutput.extend({
  replacements: z.number().int().describe("Occurrences replaced."),
  lines: z.array(z.number().int()).describe("1-based start lines of the replaced occurrences (first 100)."),
});

export const editFileTool = defineTool({
  name: "edit_file",
  title: "Edit file",
  description: [
    "Replace an exact piece of text in an existing file. Use this instead of sed, awk or perl -i, and instead of rewriting a whole file to change a few lines.",
    "old_string must match the file exactly (copy it from read_file output without the line-number prefix) and occur exactly once; otherwise the call fails with edit_no_match (with the closest line) or edit_ambiguous (with the count and line numbers) and nothing changes. Add surrounding lines to make it unique, or set replace_all.",
    "The file keeps its encoding, byte order mark, line endings (an LF old_string matches in a CRLF file and new_string is written with CRLF) and mode; bytes that are not valid UTF-8 elsewhere in the file are kept exactly. Binary files are refused.",
    "Encodings: files in GBK, GB18030, Big5, Shift_JIS, EUC-KR, windows-1252 and other legacy encodings are matched on their decoded text (as read_file shows it) and written back in the same encoding, changing only the bytes of the replaced text. If new_string holds a character the encoding cannot represent, or the encoding was only guessed with low confidence and new_string is not plain ASCII, the call fails with encoding_unsupported and nothing is written; pass encoding to confirm it.",
    "Pass expected_sha256 (from read_file) to make sure the file has not changed since you read it.",
    "Supervision depends on the workspace's preset: under strict every write waits for a reviewer; under balanced (the default) it applies at once (backed up, revertible) unless it changes a file that runs later (CI workflows, .husky, Makefile, package.json, .envrc, editor tasks, shell rc files), a secret, git internals, or removes most of a large file, which wait for a reviewer; under autonomous only secrets, git internals and files that run later wait. A call that waits answers approval_pending (601) with a call_id: do not resend it, poll get_call.",
    "The result has path, replacements, lines, size_bytes, sha256_before, sha256, backup_id (for restore_backup), diff, additions, deletions, eol, bom, encoding and warnings.",
  ].join(" "),
  input: EditFileInput,
  editable: { field: "new_string", label: "Replacement text" },
  changes: "file",
  grant: "path",
  proposedText(args, current) {
    if (current === null) throw new ToolError("not_found", "The file does not exist.", { path: args.path });
    const doc = editableText(current);
    const edited = applyEdit(doc, { path: args.path, oldString: args.old_string, newString: args.new_string, replaceAll: args.replace_all });
    return { before: doc.toDisplay(doc.text), after: doc.toDisplay(edited.text) };
  },
  risk: "write",
  output: EditFileOutput,
  subject: (args) => ({ paths: [args.path] }),
  async preview(args, ctx) {
    assertEditArguments(args);
    return previewUpdate(ctx, request(args, ctx.config.legacyEncoding));
  },
  async run(args, ctx) {
    assertEditArguments(args);
    ctx.note({ bytesIn: Buffer.byteLength(args.old_string) + Buffer.byteLength(args.new_string) });
    const { result, plan } = await updateFile(ctx, request(args, ctx.config.legacyEncoding));
    return { ...result, replacements: plan.replacements, lines: plan.lines };
  },
});
