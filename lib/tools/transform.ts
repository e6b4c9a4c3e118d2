import type { FileHandle } from "node:fs/promises";
import { parse as parseCsv } from "csv-parse/sync";
import { stringify as stringifyCsv } from "csv-stringify/sync";
import YAML from "yaml";
import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { defineTool, type ToolContext } from "@/lib/tools/define-tool";
import { openForRead, resolveInWorkspace } from "@/lib/workspace/fence";
import { detectBom } from "@/lib/workspace/text";
import { sliceCodePoints } from "@/lib/unicode";

/** Formats transform reads and writes. jsonl = one JSON value per line (JSON Lines). */
const FORMATS = ["json", "yaml", "csv", "jsonl"] as const;
type Format = (typeof FORMATS)[number];

/** Aliases between the YAML parser's anchors and the values they expand to (billion-laughs guard). */
const MAX_YAML_ALIASES = 100;
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

type TransformArgs = z.infer<typeof TransformInput>;

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
 * transform: converts data between JSON, YAML, CSV and JSON Lines. Parsing and writing use well-kept libraries (yaml, csv-parse, csv-stringify); malformed
 * input fails with `transform_failed` and the line and column of the first error.
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
  output: TransformOutputSchema,
  subject: (args) => {
    const path = filePathOf(args.input);
    return path === null ? {} : { paths: [path] };
  },
  async run(args, ctx): Promise<TransformOutput> {
    const source = await loadInput(args.input, ctx);
    const value = parseInput(source.text, args);
    const full = writeOutput(value, args);
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
async function readAtMost(handle: FileHandle, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const { bytesRead, buffer } = await handle.read({ buffer: Buffer.alloc(Math.min(1 << 16, max - total)), position: total });
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
// Parsing

function parseInput(text: string, args: TransformArgs): unknown {
  const body = text.startsWith("\ufeff") ? text.slice(1) : text;
  switch (args.from) {
    case "json":
      return parseJson(body, 1);
    case "jsonl":
      return parseJsonLines(body);
    case "yaml":
      return parseYaml(body);
    case "csv":
      return parseCsvText(body, args);
  }
}

/** JSON.parse with the error's line and column (1-based; `firstLine` numbers the text's first line). */
function parseJson(text: string, firstLine: number): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const offset = locateJsonError(text) ?? positionInMessage(err);
    const where = offset === null ? null : lineColumn(text, offset, firstLine);
    const at = where ? ` at line ${where.line}, column ${where.column}` : "";
    throw failed("json", `Invalid JSON${at}: ${(err as Error).message}`, { ...where });
  }
}

function parseJsonLines(text: string): unknown[] {
  const values: unknown[] = [];
  text.split("\n").forEach((rawLine, i) => {
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() !== "") values.push(parseJson(line, i + 1));
  });
  return values;
}

function parseYaml(text: string): unknown {
  const docs = YAML.parseAllDocuments(text, { merge: true, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [];
  for (const doc of list) {
    const error = doc.errors[0];
    if (error) {
      const pos = error.linePos?.[0];
      const summary = error.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
      throw failed("yaml", `Invalid YAML${pos ? ` at line ${pos.line}, column ${pos.col}` : ""}: ${summary}`, {
        ...(pos && { line: pos.line, column: pos.col }),
        code: error.code,
      });
    }
  }
  try {
    const values = list.map((doc) => doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }));
    return values.length === 0 ? null : values.length === 1 ? values[0] : values;
  } catch (err) {
    throw failed("yaml", `YAML could not be expanded: ${(err as Error).message}`, { code: "alias_limit" });
  }
}

function parseCsvText(text: string, args: TransformArgs): unknown[] {
  let rows: string[][];
  let lastRecordLine = 0;
  try {
    rows = parseCsv(text, {
      delimiter: args.delimiter,
      skip_empty_lines: true,
      relax_column_count: false,
      on_record: (record: string[], context: { lines: number }) => {
        lastRecordLine = context.lines;
        return record;
      },
    });
  } catch (err) {
    throw csvError(err as CsvParseError, text, lastRecordLine);
  }
  if (!args.csv_header || rows.length === 0) return rows;
  const [names, ...data] = rows;
  const seen = new Set<string>();
  names.forEach((name, i) => {
    if (seen.has(name)) throw failed("csv", `Invalid CSV: the header names column "${name}" twice.`, { line: 1, field: i + 1, code: "duplicate_column" });
    seen.add(name);
  });
  return data.map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]])));
}

/** The fields of csv-parse's CsvError that locate the problem. */
type CsvParseError = Error & { code?: string; lines?: number; index?: number };

/**
 * transform_failed for a csv-parse error, with the 1-based line and field. csv-parse reports an
 * unclosed quote at the end of input, so that one is placed where its record starts: the first
 * non-blank line after the last complete record.
 */
function csvError(e: CsvParseError, text: string, lastRecordLine: number): ToolError {
  if (e.code === "CSV_QUOTE_NOT_CLOSED") {
    const lines = text.split("\n");
    let line = lastRecordLine + 1;
    while (line < lines.length && lines[line - 1].trim() === "") line++;
    return failed("csv", `Invalid CSV at line ${line}: a quoted field starting in this record is never closed.`, { line, code: e.code });
  }
  const line = typeof e.lines === "number" ? e.lines : null;
  const field = typeof e.index === "number" ? e.index + 1 : null;
  const at = line === null ? "" : ` at line ${line}${field === null ? "" : `, field ${field}`}`;
  return failed("csv", `Invalid CSV${at}: ${e.message}`, {
    ...(line !== null && { line }),
    ...(field !== null && { field }),
    ...(e.code && { code: e.code }),
  });
}

// ---------------------------------------------------------------------------------------------
// Writing

function writeOutput(value: unknown, args: TransformArgs): string {
  assertJsonValue(value, "$");
  switch (args.to) {
    case "json":
      return `${JSON.stringify(value, null, args.indent)}\n`;
    case "jsonl":
      return (Array.isArray(value) ? value : [value]).map((v) => `${JSON.stringify(v)}\n`).join("");
    case "yaml":
      return YAML.stringify(value, { indent: Math.max(1, args.indent), lineWidth: 0, aliasDuplicateObjects: false });
    case "csv":
      return writeCsv(value, args);
  }
}

function writeCsv(value: unknown, args: TransformArgs): string {
  const rows = Array.isArray(value) ? value : isPlainObject(value) ? [value] : null;
  if (rows === null) {
    throw failed("csv", "CSV output needs an array of objects (one per row) or an array of arrays.", { code: "not_tabular" });
  }
  if (rows.length === 0) return "";
  if (rows.every(Array.isArray)) {
    return stringifyCsv(rows.map((r: unknown[]) => r.map(cell)), { delimiter: args.delimiter, record_delimiter: "unix" });
  }
  const bad = rows.findIndex((r) => !isPlainObject(r));
  if (bad !== -1) {
    throw failed("csv", `CSV output needs every element to be an object (or every one an array); element ${bad} is not.`, {
      code: "not_tabular",
      index: bad,
    });
  }
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r as object)))];
  const records = rows.map((r) => columns.map((c) => cell((r as Record<string, unknown>)[c])));
  return stringifyCsv(records, { delimiter: args.delimiter, record_delimiter: "unix", header: args.csv_header, columns });
}

/** One CSV cell: strings as they are, null/missing empty, numbers and booleans as text, nested values as JSON. */
function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * Refuses values JSON cannot hold instead of writing them wrongly (JSON.stringify would turn
 * YAML's .inf/.nan into null and drop binary data).
 */
function assertJsonValue(value: unknown, path: string): void {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw failed("json", `The value at ${path} is ${value}, which JSON, CSV and JSON Lines cannot represent.`, { code: "not_representable", path });
  }
  if (value instanceof Uint8Array) {
    throw failed("json", `The value at ${path} is binary data (!!binary), which cannot be converted.`, { code: "not_representable", path });
  }
  if (Array.isArray(value)) value.forEach((v, i) => assertJsonValue(v, `${path}[${i}]`));
  else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) assertJsonValue(v, `${path}.${k}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

// ---------------------------------------------------------------------------------------------
// Paging and errors

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

function failed(format: Format, message: string, detail: Record<string, unknown>): ToolError {
  return new ToolError("transform_failed", message, { format, ...detail });
}

/** 1-based line and column (in UTF-16 code units) of `offset`. */
function lineColumn(text: string, offset: number, firstLine: number): { line: number; column: number } {
  let line = firstLine;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function positionInMessage(err: unknown): number | null {
  const m = /at position (\d+)/.exec((err as Error).message);
  return m ? Number(m[1]) : null;
}

const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Offset of the first syntax error in `text` under RFC 8259, or null when none is found. Only
 * run after JSON.parse failed, because V8's message does not always carry a position
 * ("Unexpected token '}', ... is not valid JSON").
 */
export function locateJsonError(text: string): number | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail();
      i++;
    }
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 0x22) return void i++;
      if (c < 0x20) fail();
      if (c === 0x5c) {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 5;
        } else if ('"\\/bfnrt'.includes(text[i] ?? "x")) i++;
        else fail();
      } else i++;
    }
  };
  const number = () => {
    JSON_NUMBER.lastIndex = i;
    const m = JSON_NUMBER.exec(text);
    if (!m) fail();
    i += m![0].length;
  };
  // Explicit stack instead of recursion: deep nesting cannot overflow the call stack.
  const stack: Array<"[" | "{"> = [];
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      stack.push(c);
      i++;
      ws();
      if (text[i] === (c === "{" ? "}" : "]")) {
        i++;
        stack.pop();
        afterValue();
      } else if (c === "{") {
        key();
      }
      return;
    }
    if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c === "-" || (c >= "0" && c <= "9")) number();
    else fail();
    afterValue();
  };
  const key = () => {
    ws();
    if (text[i] !== '"') fail();
    string();
    ws();
    if (text[i] !== ":") fail();
    i++;
  };
  // After a complete value: close containers or expect a separator; returns when more is needed.
  const afterValue = (): void => {
    for (;;) {
      ws();
      const top = stack[stack.length - 1];
      if (top === undefined) return;
      if (text[i] === ",") {
        i++;
        if (top === "{") key();
        return;
      }
      if (text[i] === (top === "{" ? "}" : "]")) {
        i++;
        stack.pop();
        continue;
      }
      fail();
    }
  };
  try {
    do value();
    while (stack.length > 0);
    ws();
    return i < text.length ? i : null;
  } catch (pos) {
    if (typeof pos === "number") return Math.min(pos, text.length);
    throw pos;
  }
}
