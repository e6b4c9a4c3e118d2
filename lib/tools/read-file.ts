import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool } from "@/lib/tools/define-tool";
import { openForRead, resolveInWorkspace, type FencedPath } from "@/lib/workspace/fence";
import { readPage } from "@/lib/workspace/read-page";
import { requireEncoding, type EncodingSource } from "@/lib/workspace/encoding";
import type { Eol, TextEncoding } from "@/lib/workspace/text";
import { MASKED_OUTPUT_NOTE } from "@/lib/redact";

/** Most lines one read_file call returns. */
const MAX_LIMIT = 2000;
/** Smallest character cap an agent may ask for (room for a line prefix and some text). */
const MIN_MAX_CHARS = 100;

/** Arguments of read_file; defaults are filled by the schema. */
export const ReadFileInput = z
  .object({
    path: z
      .string()
      .describe('File to read: relative to the workspace root (e.g. "src/app.ts"), or an absolute path inside it.'),
    offset: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Number of lines to skip before the first returned line (0 = start of file). Use next_offset from the previous result to continue."),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .default(80)
      .describe(`Maximum number of lines to return (1-${MAX_LIMIT}, default 80).`),
    include_line_numbers: z
      .boolean()
      .default(true)
      .describe('Prefix each line with its 1-based line number as "%6d| " (default true). The prefix is not part of the file.'),
    max_chars: z
      .number()
      .int()
      .min(MIN_MAX_CHARS)
      .optional()
      .describe("Cap on the characters of content, prefixes included (default and maximum: the server's configured cap, usually 12000)."),
    encoding: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Decode the file in this encoding instead of the detected one (e.g. "gbk", "gb18030", "big5", "shift_jis", "euc-kr", "windows-1252"). Usually leave it out: the result says which encoding was used and how sure the detection is.',
      ),
  })
  .strict();

/** The `data` of a successful read_file call. */
export interface ReadFileOutput {
  /** Canonical workspace-relative path that was read. */
  path: string;
  total_lines: number;
  offset: number;
  limit: number;
  returned_lines: number;
  truncated: boolean;
  next_offset: number | null;
  content: string;
  clipped_lines: number[];
  encoding: TextEncoding;
  /** 0..1: 1 for a BOM, valid UTF-8, the encoding argument or the workspace setting; the detector's score for a guess. */
  encoding_confidence: number;
  encoding_source: EncodingSource;
  encoding_warning?: "invalid_utf8" | "invalid_bytes" | "uncertain";
  bom: boolean;
  eol: Eol;
  sha256: string;
  size_bytes: number;
}

function requireFile(fenced: FencedPath): void {
  if (fenced.kind === "missing") throw new ToolError("not_found", `No such file: ${fenced.relative}`, { path: fenced.relative });
  if (fenced.kind === "directory") {
    throw new ToolError("is_directory", `${fenced.relative || "."} is a directory; use list_directory to see its entries.`, {
      path: fenced.relative,
    });
  }
}

/** JSON Schema source of read_file's `data`. */
export const ReadFileOutputSchema = z.looseObject({
  path: z.string(),
  total_lines: z.number().int(),
  offset: z.number().int(),
  limit: z.number().int(),
  returned_lines: z.number().int(),
  truncated: z.boolean(),
  next_offset: z.number().int().nullable(),
  content: z.string().describe("The page, each line prefixed with its number unless include_line_numbers is false."),
  clipped_lines: z.array(z.number().int()).describe("1-based numbers of lines cut at the character cap."),
  encoding: z.string(),
  encoding_warning: z.string().optional(),
  bom: z.boolean(),
  eol: z.enum(["lf", "crlf", "mixed", "none"]),
  sha256: z.string().describe("sha256 of the whole file (pass as expected_sha256 to write_file / edit_file)."),
  size_bytes: z.number().int(),
});

/**
 * read_file: one page of a text file with line numbers (docs/field-cases.md C01-C03,
 * C05, C10-C12). Fenced to the workspace, streamed with constant memory, capped in characters.
 */
export const readFileTool = defineTool({
  name: "read_file",
  title: "Read file",
  description: [
    "Read a text file in the workspace, one page of lines at a time, with line numbers. Use this instead of cat, head, tail or sed -n.",
    'Each line is prefixed with its 1-based number as "%6d| " (e.g. "    12| const x = 1;"); the prefix is not part of the file, so leave it out of edit_file old_string. Lines are shown without their "\\r".',
    "Paging: offset = lines to skip (0-based), limit = lines to return (default 80, max 2000). The result has total_lines; when truncated is true the page does not hold everything up to the end of the file: call again with offset = next_offset.",
    "Content is capped in characters (max_chars). A single line longer than the cap is cut and listed in clipped_lines; its rest cannot be paged, and next_offset then points to the line after it (null when nothing follows).",
    "Also returned: sha256 of the whole file (pass it as expected_sha256 to write_file/edit_file), bom, eol (lf/crlf/mixed/none), size_bytes.",
    "Encodings: content is always decoded text. encoding names the file's encoding (utf-8, utf-16le/be by BOM, or a legacy one such as gbk, gb18030, big5, shift_jis, euc-kr, windows-1252), encoding_source says how it was decided (bom, utf8, argument, workspace_setting, detected) and encoding_confidence how sure that is. encoding_warning \"uncertain\" means the encoding is a low-confidence guess: if the text looks wrong, read again with encoding set; edits adding non-ASCII text then need encoding passed. \"invalid_utf8\"/\"invalid_bytes\": some bytes do not decode and show as U+FFFD (edits keep them).",
    "Binary files are refused (binary_file); use list_directory for directories and search_files to find text.",
    MASKED_OUTPUT_NOTE,
  ].join("\n"),
  input: ReadFileInput,
  risk: "read",
  reproducible: true,
  output: ReadFileOutputSchema,
  subject: (args) => ({ paths: [args.path] }),
  async run(args, ctx): Promise<ReadFileOutput> {
    ctx.note({ pathRaw: args.path, target: args.path });
    const fenced = await resolveInWorkspace(ctx.workspace, args.path);
    ctx.note({ pathResolved: fenced.absolute, target: fenced.relative });
    requireFile(fenced);
    const requested = args.encoding === undefined ? null : requireEncoding(args.encoding, "encoding");
    const maxChars = Math.min(args.max_chars ?? ctx.config.readMaxChars, ctx.config.readMaxChars);
    const handle = await openForRead(ctx.workspace, fenced);
    try {
      const page = await readPage(handle, {
        offset: args.offset,
        limit: args.limit,
        maxChars,
        lineNumbers: args.include_line_numbers,
        encoding: requested,
        legacy: ctx.config.legacyEncoding,
        signal: ctx.signal,
      });
      ctx.note({
        shaBefore: page.sha256,
        bytesOut: Buffer.byteLength(page.content),
        truncated: page.truncated,
        summary:
          page.returnedLines === 0
            ? `${fenced.relative}: empty file`
            : `${fenced.relative} lines ${args.offset + 1}-${args.offset + page.returnedLines} of ${page.totalLines}`,
      });
      return {
        path: fenced.relative,
        total_lines: page.totalLines,
        offset: args.offset,
        limit: args.limit,
        returned_lines: page.returnedLines,
        truncated: page.truncated,
        next_offset: page.nextOffset,
        content: page.content,
        clipped_lines: page.clippedLines,
        encoding: page.encoding,
        encoding_confidence: Number(page.encodingConfidence.toFixed(3)),
        encoding_source: page.encodingSource,
        ...(page.encodingWarning ? { encoding_warning: page.encodingWarning } : {}),
        bom: page.bom,
        eol: page.eol,
        sha256: page.sha256,
        size_bytes: page.sizeBytes,
      };
    } finally {
      await handle.close();
    }
  },
});
