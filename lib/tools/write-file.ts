import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool, type ToolContext } from "@/lib/tools/define-tool";
import { previewUpdate, updateFile, type CurrentFile, type PlannedContent, type UpdateRequest } from "@/lib/workspace/update-file";
import { requireEncoding } from "@/lib/workspace/encoding";
import { applyEol, assertSureEnough, assertWellFormed, decodeForDisplay, detectEol, encodeText, isBinaryBytes, profileText, stripLeadingBom } from "@/lib/workspace/text";
import { UpdateResultOutput } from "@/lib/tools/outputs";
import { expectedSha256Field } from "@/lib/tools/inputs";

/**
 * write_file: create a file or replace its whole content (docs/field-cases.md C06, C07,
 * C08, C10, C13, C14, C15). The write is atomic, backed up and diffed by lib/workspace/update-file.
 *
 * Content rules over an existing file (documented in the description, C08-4):
 * - UTF-16 files stay UTF-16 with their BOM; a UTF-8 file with a BOM keeps exactly one BOM, whether
 *   or not `content` starts with U+FEFF (C07); a U+FEFF at the start of `content` adds a BOM;
 * - a CRLF file stays CRLF when `content` has only LF line breaks; content with CRLF is written
 *   as given;
 * - over a file with invalid UTF-8 bytes, content holding U+FFFD is refused (it is most likely the
 *   lossy text read_file showed, C06);
 * - a file in a legacy encoding (GBK, Shift_JIS, windows-1252, …; lib/workspace/encoding.ts) stays
 *   in it; content it cannot represent is refused, and so is non-ASCII content over a file whose
 *   encoding is only an unsure guess (pass `encoding` to confirm it);
 * - a new file, and a file that was binary, get `content` as UTF-8, byte for byte, unless
 *   `encoding` names another encoding;
 * - `encoding` on the call wins over detection and the workspace's legacy setting, not over a BOM.
 */

export const WriteFileInput = z
  .object({
    path: z.string().describe("File to create or overwrite: relative to the workspace root (e.g. \"src/app.ts\") or absolute inside it."),
    content: z
      .string()
      .describe(
        "The complete new content of the file, as text. Written as UTF-8, except that an existing file keeps its encoding (UTF-16, GBK, Shift_JIS, windows-1252, …) and an existing CRLF file stays CRLF.",
      ),
    create_dirs: z.boolean().default(true).describe("Create missing parent directories inside the workspace (default true)."),
    expected_sha256: expectedSha256Field(
      "The sha256 that read_file reported for this file. When given, the write happens only if the file still has exactly that content; otherwise it fails with stale_content and the current sha256.",
    ),
    encoding: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Encoding to write in (e.g. "gbk", "gb18030", "big5", "shift_jis", "euc-kr", "windows-1252"). Default: the existing file\'s encoding, UTF-8 for a new file. Pass the encoding read_file reported to confirm an uncertain guess.',
      ),
  })
  .strict();

type WriteFileArgs = z.infer<typeof WriteFileInput>;

/**
 * The bytes `content` becomes when it replaces `current` (see the module comment).
 *
 * @param requested canonical encoding named on the call, or null
 * @param legacy the workspace's legacy encoding, or null
 * @throws ToolError `invalid_arguments` (reason "lone_surrogate"); `encoding_unsupported` (reason
 *   "lossy_rewrite") when `current` has invalid UTF-8 and `content` holds U+FFFD, (reason
 *   "unrepresentable") when the encoding cannot hold a character of `content`, (reason
 *   "uncertain_encoding") for non-ASCII content over an unsure guess, (reason "bom_mismatch")
 *   when `requested` contradicts the file's BOM
 */
function planWrite(content: string, current: CurrentFile | null, requested: string | null, legacy: string | null): PlannedContent {
  assertWellFormed(content, "content");
  if (current === null || isBinaryBytes(current.bytes)) {
    const warnings = current === null ? [] : [`replaces a binary file (${current.bytes.length} bytes); its bytes are kept in the backup`];
    if (requested === null || requested === "utf-8") return { bytes: Buffer.from(content, "utf8"), warnings, encoding: "utf-8" };
    const text = stripLeadingBom(content);
    return { bytes: encodeText(text, { encoding: requested, bom: requested.startsWith("utf-16") }, "content"), warnings, encoding: requested };
  }
  const profile = profileText(current.bytes, { requested, legacy });
  if (profile.encoding === "utf-8" && !profile.valid && content.includes("\ufffd")) {
    throw new ToolError(
      "encoding_unsupported",
      "The file holds bytes that are not valid UTF-8 (read_file shows them as U+FFFD), and content contains U+FFFD: writing it would destroy those bytes. Use edit_file to change only the lines you mean to change.",
      { reason: "lossy_rewrite", encoding: "utf-8" },
    );
  }
  assertSureEnough({ profile }, content, "content");
  const warnings: string[] = [];
  const unicode = profile.encoding === "utf-8" || profile.encoding.startsWith("utf-16");
  const bom = profile.bom || (unicode && content.startsWith("\ufeff"));
  let text = bom || !unicode ? stripLeadingBom(content) : content;
  if (profile.eol === "crlf" && detectEol(text) === "lf") {
    text = applyEol(text, "crlf");
    warnings.push("line endings written as CRLF, like the existing file (content had LF only)");
  }
  return { bytes: encodeText(text, { encoding: profile.encoding, bom }, "content"), warnings, encoding: profile.encoding };
}

function request(args: WriteFileArgs, legacy: string | null): UpdateRequest<PlannedContent> {
  const requested = args.encoding === undefined ? null : requireEncoding(args.encoding, "encoding");
  return {
    rawPath: args.path,
    expectedSha256: args.expected_sha256,
    createDirs: args.create_dirs,
    plan: (current) => planWrite(args.content, current, requested, legacy),
  };
}

export const writeFileTool = defineTool({
  name: "write_file",
  title: "Write file",
  description: [
    "Create a file or replace its whole content. Use this instead of shell redirection (echo >, cat <<EOF, tee): the content is written exactly, atomically (readers never see a half-written file), a backup of the old content is kept, and the result shows a unified diff.",
    "To change part of an existing file, prefer edit_file. Pass expected_sha256 (from read_file) to make sure you do not overwrite changes made since you read the file.",
    "An existing file keeps its encoding (UTF-8, UTF-16, GBK, GB18030, Big5, Shift_JIS, EUC-KR, windows-1252, …), byte order mark (BOM) and file mode; a new file is UTF-8 unless encoding is given. Content the encoding cannot represent is refused with encoding_unsupported (detail.characters lists them), and so is non-ASCII content over a file whose encoding was only guessed with low confidence: pass encoding to confirm it. Line endings: if the file uses CRLF and content has only LF, the file is written with CRLF; content with CRLF is written as given (to convert a file's line endings, use run_command, e.g. dos2unix).",
    "Supervision depends on the workspace's preset: under strict every write waits for a reviewer; under balanced (the default) it applies at once (backed up, revertible) unless it changes a file that runs later (CI workflows, .husky, Makefile, package.json, .envrc, editor tasks, shell rc files), a secret, git internals, or removes most of a large file, which wait for a reviewer; under autonomous only secrets, git internals and files that run later wait. A call that waits answers approval_pending (601) with a call_id: do not resend it, poll get_call.",
    "The result has path, created, size_bytes, sha256_before, sha256, backup_id (for restore_backup), diff, additions, deletions, eol, bom, encoding, mode and warnings.",
  ].join(" "),
  input: WriteFileInput,
  editable: { field: "content", label: "Content to write" },
  changes: "file",
  grant: "path",
  proposedText: (args, current) => ({ before: current === null ? "" : decodeForDisplay(current), after: args.content }),
  risk: "write",
  output: UpdateResultOutput,
  annotations: { idempotentHint: true },
  subject: (args) => ({ paths: [args.path] }),
  preview: (args, ctx: ToolContext) => previewUpdate(ctx, request(args, ctx.config.legacyEncoding)),
  async run(args, ctx) {
    ctx.note({ bytesIn: Buffer.byteLength(args.content) });
    const { result } = await updateFile(ctx, request(args, ctx.config.legacyEncoding));
    return result;
  },
});
