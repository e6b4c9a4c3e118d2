import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool, type ToolContext } from "@/lib/tools/define-tool";
import { openForRead, resolveInWorkspace } from "@/lib/workspace/fence";
import type { FencedFile } from "@/lib/workspace/fenced-file";
import { detectBom } from "@/lib/workspace/text";
import { sliceCodePoints } from "@/lib/unicode";
import { FORMATS, parseData, writeData, type Format } from "@/lib/transform/convert";

const MIN_MAX_CHARS = 100;

/** Arguments of transform (the CLI's `transform --input --from --to`). */
export const TransformInput = z
  .object({
    input: z
      .string()
      .refine((s) => s !== "-", {
        message: 'input "-" (standard input) is not meaningful over the API: send the text itself, or "@path" of a workspace file. The agent-reach CLI reads stdin for "-" before sending.',
      })
      .describe('The data: the text itself (e.g. \'{"a": 1}\'), or "@path" to read a workspace file (e.g. "@data/users.csv"). Text that really starts with "@" is written "@@…".'),
    from: z.enum(FORMATS).describe("Format of the input: json, yaml (all documents of a multi-document stream become an array), csv, or jsonl (one JSON value per line)."),
    to: z.enum(FORMATS).describe("Format of the output: json, yaml, csv (needs an array of objects or of arrays; nested values are written as JSON text in the cell), or jsonl (one line per array element)."),
    csv_header: z
      .boolean()
      .default(true)
      .describe("CSV has a header row with column names (default true): rows become objects. false: rows are arrays, and no header row is written."),
    delimiter: z.string().length(1).default(",").describe('CSV field delimiter, one character (default ","; "\\t" for TSV).'),
    indent: z.number().int().min(0).max(8).default(2).describe("Indentation of JSON and YAML output (default 2; 0 writes compact JSON)."),
    offset: z.number().int().min(0).default(0).describe("Characters of output to skip, for paging through a long result: pass next_offset of the previous call."),
    max_chars: z
      .number()
      .int()
      .min(MIN_MAX_CHARS)
      .optional()
      .describe("Most characters of output returned (default and maximum: the server's cap, usually 12000). Longer output is cut at a line end: truncated is true and next_offset continues."),
  })
  .strict();

/** The `data` of a successful transform call. */
export interface TransformOutput {
  /** The converted text (the page from `offset`, at most max_chars characters). */
  output: string;
  from: Format;
  to: Format;
  /** True when `output` does not reach the end of the converted text. */
  truncated: boolean;
  /** Characters of the whole converted text. */
  original_length: number;
  /** Where the next page starts, or null when this page reaches the end. */
  next_offset: number | null;
  /** Number of records (array elements, CSV rows, JSON lines) when the data is a list. */
  records?: number;
  /** Workspace-relative path of the file read, for "@path" input. */
  path?: string;
}

/** JSON Schema source of transform's `data`. */
const TransformOutputSchema = z.looseObject({
  output: z.string(),
  from: z.string(),
  to: z.string(),
  truncated: z.boolean(),
  original_length: z.number().int(),
  next_offset: z.number().int().nullable(),
  records: z.number().int().optional(),
  path: z.string().optional(),
});

/**
 * transform: converts data between JSON, YAML, CSV and JSON Lines (lib/transform/convert.ts).
 * The input is inline text or a fenced workspace file; the output is paged by characters.
 */
export const transformTool = defineTool({
  name: "transform",
  title: "Transform data",
  description: [
    "Convert data between json, yaml, csv and jsonl (JSON Lines): e.g. a CSV export to JSON, a JSON config to YAML, a YAML list to CSV. Use this instead of writing jq/python/yq one-liners in run_command.",
    'input is the text itself, or "@path" for a file in the workspace (e.g. "@config/app.yaml"). The result\'s output is the converted text; to save it, pass it to write_file.',
    "CSV: the first row names the columns by default (csv_header); values are read as strings. Writing CSV needs an array of objects (columns = every key, in first-seen order) or of arrays; nested values go into a cell as JSON text.",
    "Malformed input fails with transform_failed and detail.line / detail.column (CSV: detail.line / detail.field). Output is capped at max_chars: when truncated is true, call again with offset = next_offset.",
  ].join("\n"),
  input: TransformInput,
  risk: "read",
  reproducible: true,
  output: TransformOutputSchema,
  subject: (args) => {
    const path = filePathOf(args.input);
    return path === null ? {} : { paths: [path] };
  },
  async run(args, ctx): Promise<TransformOutput> {
    const source = await loadInput(args.input, ctx);
    const value = parseData(source.text, args);
    const full = writeData(value, args);
    const maxChars = Math.min(args.max_chars ?? ctx.config.readMaxChars, ctx.config.readMaxChars);
    const page = pageOf(full, args.offset, maxChars);
    const records = Array.isArray(value) ? value.length : undefined;
    ctx.note({
      bytesOut: Buffer.byteLength(page.text),
      truncated: page.nextOffset !== null,
      summary: `${args.from} → ${args.to}${records !== undefined ? ` (${records} records)` : ""}${source.path !== undefined ? ` from ${source.path}` : ""}`,
    });
    return {
      output: page.text,
      from: args.from,
      to: args.to,
      truncated: page.nextOffset !== null,
      original_length: full.length,
      next_offset: page.nextOffset,
      ...(records !== undefined && { records }),
      ...(source.path !== undefined && { path: source.path }),
    };
  },
});

/** The workspace path of an "@path" input, or null for inline text ("@@…" is inline "@…"). */
function filePathOf(input: string): string | null {
  return input.startsWith("@") && !input.startsWith("@@") ? input.slice(1) : null;
}

/** The input text: inline, or a fenced workspace file decoded as UTF-8 (or UTF-16 with a BOM). */
async function loadInput(input: string, ctx: ToolContext): Promise<{ text: string; path?: string }> {
  const raw = filePathOf(input);
  if (raw === null) return { text: input.startsWith("@@") ? input.slice(1) : input };
  ctx.note({ pathRaw: raw, target: raw });
  const fenced = await resolveInWorkspace(ctx.workspace, raw);
  ctx.note({ pathResolved: fenced.absolute, target: fenced.relative });
  const handle = await openForRead(ctx.workspace, fenced);
  try {
    const limit = ctx.config.maxBodyBytes;
    const bytes = await readAtMost(handle, limit + 1);
    if (bytes.length > limit) {
      throw new ToolError("payload_too_large", `${fenced.relative} is larger than ${limit} bytes, the most transform reads.`, {
        path: fenced.relative,
        max_bytes: limit,
      });
    }
    return { text: decodeFile(bytes, fenced.relative), path: fenced.relative };
  } finally {
    await handle.close();
  }
}

/** Reads the file to its end, or until more than `max` bytes came (it may grow while being read). */
async function readAtMost(handle: FencedFile, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const buffer = Buffer.alloc(Math.min(1 << 16, max - total));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}

function decodeFile(bytes: Buffer, path: string): string {
  const bom = detectBom(bytes)?.encoding;
  const utf16 = bom === "utf-16le" || bom === "utf-16be" ? bom : null;
  if (utf16 === null && bytes.includes(0)) {
    throw new ToolError("binary_file", `${path} is a binary file, not JSON, YAML or CSV text.`, { path });
  }
  try {
    return new TextDecoder(utf16 ?? "utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ToolError("encoding_unsupported", `${path} is not valid UTF-8 (or UTF-16 with a byte order mark).`, { path });
  }
}

// ---------------------------------------------------------------------------------------------
// Paging

/** The page of `text` from `offset`: at most `max` characters, cut after a line end when one is in it. */
function pageOf(text: string, offset: number, max: number): { text: string; nextOffset: number | null } {
  if (offset > text.length) {
    throw new ToolError("offset_out_of_range", `offset ${offset} is past the end of the output (${text.length} characters).`, {
      offset,
      original_length: text.length,
    });
  }
  if (text.length - offset <= max) return { text: text.slice(offset), nextOffset: null };
  const lastNewline = text.lastIndexOf("\n", offset + max - 1);
  const page = lastNewline >= offset ? text.slice(offset, lastNewline + 1) : sliceCodePoints(text, offset, offset + max);
  return { text: page, nextOffset: offset + page.length };
}
