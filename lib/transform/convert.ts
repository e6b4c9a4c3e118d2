import { parse as parseCsv } from "csv-parse/sync";
import { stringify as stringifyCsv } from "csv-stringify/sync";
import YAML from "yaml";
import { ToolError } from "@/lib/errors";

/**
 * Converting data between JSON, YAML, CSV and JSON Lines (the transform tool,
 * lib/tools/transform.ts). Parsing and writing use well-kept libraries (yaml, csv-parse,
 * csv-stringify); malformed input fails with `transform_failed` and the line and column of the
 * first error.
 */

/** Formats transform reads and writes. jsonl = one JSON value per line (JSON Lines). */
export const FORMATS = ["json", "yaml", "csv", "jsonl"] as const;
export type Format = (typeof FORMATS)[number];

/** Aliases between the YAML parser's anchors and the values they expand to (billion-laughs guard). */
const MAX_YAML_ALIASES = 100;

/** How to read and write: the formats, and the CSV and indentation settings. */
export interface ConvertOptions {
  from: Format;
  to: Format;
  /** CSV has a header row: rows are objects keyed by it (else arrays, and no header is written). */
  csv_header: boolean;
  /** CSV field delimiter, one character. */
  delimiter: string;
  /** Indentation of JSON and YAML output; 0 writes compact JSON. */
  indent: number;
}

// ---------------------------------------------------------------------------------------------
// Parsing

/**
 * Parses `text` in `args.from` (a leading BOM is ignored).
 * @throws ToolError `transform_failed` with the format and where the input is malformed.
 */
export function parseData(text: string, args: ConvertOptions): unknown {
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

function parseCsvText(text: string, args: ConvertOptions): unknown[] {
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

/**
 * Writes `value` in `args.to`.
 * @throws ToolError `transform_failed` when the value cannot be written in that format.
 */
export function writeData(value: unknown, args: ConvertOptions): string {
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

function writeCsv(value: unknown, args: ConvertOptions): string {
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
