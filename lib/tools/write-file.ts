import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool, type ToolContext } from "@/lib/tools/define-tool";
import { previewUpdate, updateFile, type CurrentFile, type PlannedContent, type UpdateRequest } from "@/lib/workspace/update-file";
import { applyEol, assertWellFormed, detectEol, encodeText, profileText, stripLeadingBom } from "@/lib/workspace/text";

/**
 * write_file: create a file or replace its whole content (DESIGN.md "Tools"; field cases C06, C07,
 * C08, C10, C13, C14, C15). The write is atomic, backed up and diffed by lib/workspace/update-file.
 *
 * Content rules over an existing file (documented in the description, C08-4):
 * - UTF-16 files stay UTF-16 with their BOM; a UTF-8 file with a BOM keeps exactly one BOM, whether
 *   or not `content` starts with U+FEFF (C07); a U+FEFF at the start of `content` adds a BOM;
 * - a CRLF file stays CRLF when `content` has only LF line breaks; content with CRLF is written
 *   as given;
 * - over a file with invalid UTF-8 bytes, content holding U+FFFD is refused (it is most likely the
 *   lossy text read_file showed, C06);
 * - a new file, and a file that was binary, get `content` as UTF-8, byte for byte.
 */

const SHA256 = /^[0-9a-fA-F]{64}$/;

export const WriteFileInput = z
  .object({
    path: z.string().describe("File to create or overwrite: relative to the workspace root (e.g. \"src/app.ts\") or absolute inside it."),
    content: z
      .string()
      .describe(
        "The complete new content of the file, as text. Written as UTF-8, except that an existing UTF-16 file stays UTF-16 and an existing CRLF file stays CRLF.",
      ),
    create_dirs: z.boolean().default(true).describe("Create missing parent directories inside the workspace (default true)."),
    expected_sha256: z
      .string()
      .regex(SHA256, "expected_sha256 must be 64 hexadecimal digits")
      .optional()
      .describe(
        "The sha256 that read_file reported for this file. When given, the write happens only if the file still has exactly that content; otherwise it fails with stale_content and the current sha256.",
      ),
  })
  .strict();

type WriteFileArgs = z.infer<typeof WriteFileInput>;

/**
 * The bytes `content` becomes when it replaces `current` (see the module comment).
 *
 * @throws ToolError `invalid_arguments` (reason "lone_surrogate"); `encoding_unsupported` (reason
 *   "lossy_rewrite") when `current` has invalid UTF-8 and `content` holds U+FFFD
 */
function planWrite(content: string, current: CurrentFile | null): PlannedContent {
  assertWellFormed(content, "content");
  if (current === null) return { bytes: Buffer.from(content, "utf8"), warnings: [] };
  const profile = profileText(current.bytes);
  if (profile.binary) {
    return { bytes: Buffer.from(content, "utf8"), warnings: [`replaces a binary file (${current.bytes.length} bytes); its bytes are kept in the backup`] };
  }
  if (profile.encoding === "utf-8" && !profile.valid && content.includes("\ufffd")) {
    throw new ToolError(
      "encoding_unsupported",
      "The file holds bytes that are not valid UTF-8 (read_file shows them as U+FFFD), and content contains U+FFFD: writing it would destroy those bytes. Use edit_file to change only the lines you mean to change.",
      { reason: "lossy_rewrite", encoding: "utf-8" },
    );
  }
  const warnings: string[] = [];
  const bom = profile.bom || content.startsWith("\ufeff");
  let text = bom ? stripLeadingBom(content) : content;
  if (profile.eol === "crlf" && detectEol(text) === "lf") {
    text = applyEol(text, "crlf");
    warnings.push("line endings written as CRLF, like the existing file (content had LF only)");
  }
  return { bytes: encodeText(text, { encoding: profile.encoding, bom }), warnings };
}

function request(args: WriteFileArgs): UpdateRequest<PlannedContent> {
  return {
    rawPath: args.path,
    expectedSha256: args.expected_sha256,
    createDirs: args.create_dirs,
    plan: (current) => planWrite(args.content, current),
  };
}

export const writeFileTool = defineTool({
  name: "write_file",
  title: "Write file",
  description: [
    "Create a file or replace its whole content. Use this instead of shell redirection (echo >, cat <<EOF, tee): the content is written exactly, atomically (readers never see a half-written file), a backup of the old content is kept, and the result shows a unified diff.",
    "To change part of an existing file, prefer edit_file. Pass expected_sha256 (from read_file) to make sure you do not overwrite changes made since you read the file.",
    "An existing file keeps its encoding, byte order mark (BOM) and file mode. Line endings: if the file uses CRLF and content has only LF, the file is written with CRLF; content with CRLF is written as given (to convert a file's line endings, use run_command, e.g. dos2unix).",
    "The result has path, created, size_bytes, sha256_before, sha256, backup_id (for restore_backup), diff, additions, deletions, eol, bom, encoding, mode and warnings.",
  ].join(" "),
  input: WriteFileInput,
  editable: { field: "content", label: "Content to write" },
  risk: "write",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  subject: (args) => ({ paths: [args.path] }),
  preview: (args, ctx: ToolContext) => previewUpdate(ctx, request(args)),
  async run(args, ctx) {
    ctx.note({ bytesIn: Buffer.byteLength(args.content) });
    const { result } = await updateFile(ctx, request(args));
    return result;
  },
});
