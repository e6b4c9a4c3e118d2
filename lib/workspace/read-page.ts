import { isUtf8 } from "node:buffer";
import { createHash, type Hash } from "node:crypto";
import type { Stats } from "node:fs";
import { ToolError } from "@/lib/errors";
import { getLineIndex, LINE_INDEX_STEP, putLineIndex, type LineIndex } from "@/lib/workspace/line-index";
import {
  chooseEncoding,
  decodeBytes,
  DETECTION_SAMPLE_BYTES,
  firstInvalidUtf8,
  isUnicode,
  streamDecoder,
  type EncodingSource,
} from "@/lib/workspace/encoding";
import { SNIFF_BYTES, sniffText, type Sniffed } from "@/lib/workspace/read-sniff";
import type { Eol, TextEncoding } from "@/lib/workspace/text";
import { sliceCodePoints } from "@/lib/unicode";

/**
 * What reading a page needs of an open file: its stat and positional reads. `FencedFile`
 * (lib/workspace/fenced-file.ts, what `openForRead` returns) and `fs/promises`' FileHandle both fit.
 */
export interface ReadableFile {
  stat(): Promise<Stats>;
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

/**
 * Paged, streaming text reads (read_file; docs/field-cases.md C10, C11, C12).
 *
 * Memory stays constant whatever the file size: the file is read in `CHUNK_BYTES` chunks, only
 * the requested lines are kept, and they are kept only up to a byte budget derived from the
 * character cap. The first read of a file version makes one full pass (exact line count,
 * sha256, line-ending style, UTF-8 validity, sparse line-offset index) and caches it
 * (lib/workspace/line-index.ts); later pages of the same version seek to the nearest indexed
 * line and read only what they return.
 *
 * Encodings: lines are split on the bytes of "\n" in the file's encoding (0x0A in UTF-8 and in
 * every supported legacy encoding, where it is never part of a multi-byte character; the aligned
 * unit 0A 00 / 00 0A in UTF-16), and each returned line is decoded on its own. A file whose
 * first bytes are valid UTF-8 but whose later bytes are not is looked at again around the first
 * invalid byte, so a legacy-encoded file with a long ASCII head is still decoded.
 */

/** Bytes read per I/O call. */
const CHUNK_BYTES = 1 << 20;

/** What to read. */
export interface PageRequest {
  /** Lines skipped (0-based): the first returned line is line `offset + 1`. */
  offset: number;
  /** Encoding named on the call (canonical name), winning over detection. */
  encoding?: TextEncoding | null;
  /** The workspace's legacy encoding (canonical name), winning over a detector's guess. */
  legacy?: TextEncoding | null;
  /** Most lines returned (>= 1). */
  limit: number;
  /** Cap on `content` length in characters (UTF-16 code units), line prefixes and "\n" included. */
  maxChars: number;
  /** Prefix each line with its 1-based number as `%6d| `. */
  lineNumbers: boolean;
  /** Stops the scan between chunks when aborted. */
  signal?: AbortSignal;
}

/** One page of a text file. */
export interface Page {
  /** Exact number of lines in the file (a final line without newline counts; empty file: 0). */
  totalLines: number;
  /** Number of lines in `content` (a clipped line counts). */
  returnedLines: number;
  /** True when `content` does not hold everything from `offset` to the end of the file. */
  truncated: boolean;
  /**
   * The `offset` that continues after this page, or null when nothing follows. After a clipped
   * line this is the line after it (the rest of a clipped line is never offered again, C11).
   */
  nextOffset: number | null;
  /** Lines joined by "\n" (no trailing newline), without their "\r" of a CRLF ending. */
  content: string;
  /** 1-based numbers of lines cut at the character cap (cut between code points, never inside one). */
  clippedLines: number[];
  encoding: TextEncoding;
  /** 0..1, how sure `encoding` is (1 for a BOM, valid UTF-8, an argument or the workspace setting). */
  encodingConfidence: number;
  /** Where `encoding` came from. */
  encodingSource: EncodingSource;
  /**
   * "invalid_utf8" / "invalid_bytes": the file (anywhere) holds bytes that do not decode in
   * `encoding`; they read as U+FFFD. "uncertain": `encoding` is a guess below the detector's
   * threshold (writes of non-ASCII text need `encoding` confirmed).
   */
  encodingWarning?: "invalid_utf8" | "invalid_bytes" | "uncertain";
  /** True when the file starts with a byte-order mark. */
  bom: boolean;
  eol: Eol;
  /** sha256 (hex) of the whole file's bytes. */
  sha256: string;
  /** File size in bytes. */
  sizeBytes: number;
}

/** Reads `length` bytes at `position` into `buf` unless the file ends first; returns bytes read. */
async function readFully(handle: ReadableFile, buf: Buffer, length: number, position: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const { bytesRead } = await handle.read(buf, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/** Newline and carriage-return code units in the file's encoding. */
interface Units {
  size: 1 | 2;
  newline: Buffer;
  cr: Buffer;
}

/** Line-break units: 2-byte aligned in UTF-16; one byte in UTF-8 and every legacy encoding (0x0A is never part of a multi-byte character there). */
function unitsOf(sniffed: Sniffed): Units {
  if (sniffed.encoding === "utf-16le") return { size: 2, newline: Buffer.from([0x0a, 0x00]), cr: Buffer.from([0x0d, 0x00]) };
  if (sniffed.encoding === "utf-16be") return { size: 2, newline: Buffer.from([0x00, 0x0a]), cr: Buffer.from([0x00, 0x0d]) };
  return { size: 1, newline: Buffer.from([0x0a]), cr: Buffer.from([0x0d]) };
}

/** Index of the next newline unit at or after `from` (unit-aligned relative to chunk start), or -1. */
function findNewline(chunk: Buffer, from: number, u: Units): number {
  if (u.size === 1) return chunk.indexOf(0x0a, from);
  let i = from;
  for (;;) {
    const p = chunk.indexOf(u.newline, i);
    if (p < 0 || p % 2 === 0) return p;
    i = p + 1;
  }
}

function isCrAt(chunk: Buffer, at: number, u: Units): boolean {
  return u.size === 1 ? chunk[at] === 0x0d : chunk[at] === u.cr[0] && chunk[at + 1] === u.cr[1];
}

/**
 * Keeps the bytes of the requested lines, up to `capBytes` in total. A line that does not fit
 * is kept in part and marked clipped; nothing after it is kept.
 */
class PageCollector {
  readonly lines: Array<{ parts: Buffer[]; clipped: boolean }> = [];
  private bytes = 0;
  private full = false;

  constructor(
    readonly first: number,
    readonly end: number,
    readonly capBytes: number,
  ) {}

  /** True while line `line` (0-based) is part of the page and the budget is not spent. */
  wants(line: number): boolean {
    return !this.full && line >= this.first && line < this.end;
  }

  /** True when nothing more will be kept once line `line` starts. */
  done(line: number): boolean {
    return this.full || line >= this.end;
  }

  private lineAt(line: number) {
    const k = line - this.first;
    this.lines[k] ??= { parts: [], clipped: false };
    return this.lines[k];
  }

  /** Appends `chunk[start, end)` to line `line`; copies, since the chunk buffer is reused. */
  piece(line: number, chunk: Buffer, start: number, end: number): void {
    const entry = this.lineAt(line);
    const take = Math.min(end - start, this.capBytes - this.bytes);
    if (take > 0) entry.parts.push(Buffer.from(chunk.subarray(start, start + take)));
    this.bytes += Math.max(take, 0);
    if (end - start > take) {
      entry.clipped = true;
      this.full = true;
    }
  }

  /** Removes the last `n` bytes of line `line` (a CR that ended the previous chunk). */
  dropTail(line: number, n: number): void {
    const entry = this.lineAt(line);
    if (entry.clipped) return;
    let left = n;
    while (left > 0 && entry.parts.length > 0) {
      const last = entry.parts[entry.parts.length - 1];
      const cut = Math.min(left, last.length);
      entry.parts[entry.parts.length - 1] = last.subarray(0, last.length - cut);
      if (last.length === cut) entry.parts.pop();
      left -= cut;
      this.bytes -= cut;
    }
  }
}

/** Whole-file facts gathered during a full pass. */
class IndexBuilder {
  private readonly hash: Hash = createHash("sha256");
  private lf = 0;
  private crlf = 0;
  private invalidUtf8 = false;
  /** Byte offset near the first invalid byte (-1: none yet). */
  private invalidAt = -1;
  private carry: Buffer | null = null;
  private readonly legacy: { write(chunk: Buffer): string } | null;
  private readonly starts: number[];

  constructor(
    private readonly sniffed: Sniffed,
    bom: Buffer,
  ) {
    this.hash.update(bom);
    this.starts = [sniffed.bomLength];
    this.legacy = isUnicode(sniffed.encoding) ? null : streamDecoder(sniffed.encoding);
  }

  /** Feeds the next chunk of bytes after the BOM, found at byte `position`. */
  update(chunk: Buffer, position: number): void {
    this.hash.update(chunk);
    if (this.invalidUtf8) return;
    if (this.sniffed.encoding === "utf-8") this.validateUtf8(chunk);
    else if (this.legacy && this.legacy.write(chunk).includes("\ufffd")) this.invalidUtf8 = true;
    if (this.invalidUtf8) this.invalidAt = position + Math.max(0, firstInvalidUtf8(chunk));
  }

  /** Validates UTF-8 across chunk boundaries without copying chunks (a cut sequence is carried). */
  private validateUtf8(chunk: Buffer): void {
    let start = 0;
    if (this.carry) {
      const need = sequenceLength(this.carry[0]) - this.carry.length;
      if (need > chunk.length) {
        this.carry = Buffer.concat([this.carry, chunk]);
        return;
      }
      if (!isUtf8(Buffer.concat([this.carry, chunk.subarray(0, need)]))) this.invalidUtf8 = true;
      start = need;
      this.carry = null;
    }
    const cut = Math.max(start, completeUtf8Length(chunk));
    if (!isUtf8(chunk.subarray(start, cut))) this.invalidUtf8 = true;
    this.carry = cut < chunk.length ? Buffer.from(chunk.subarray(cut)) : null;
  }

  lineEnded(crlf: boolean): void {
    if (crlf) this.crlf++;
    else this.lf++;
  }

  /** Records where line number `LINE_INDEX_STEP * k` starts. */
  mark(offset: number): void {
    this.starts.push(offset);
  }

  /** Byte offset near the first byte that did not decode, or -1. */
  firstInvalidChunk(): number {
    return this.invalidAt;
  }

  finish(totalLines: number): LineIndex {
    const eol: Eol = this.crlf && this.lf ? "mixed" : this.crlf ? "crlf" : this.lf ? "lf" : "none";
    return {
      sniffed: this.sniffed,
      totalLines,
      sha256: this.hash.digest("hex"),
      eol,
      invalidUtf8: this.invalidUtf8 || this.carry !== null,
      lineStarts: Float64Array.from(this.starts),
    };
  }
}

/** Length of the UTF-8 sequence a lead byte starts (1 for ASCII, 4 for anything invalid). */
function sequenceLength(lead: number): number {
  if (lead < 0xc0) return 1;
  if (lead < 0xe0) return 2;
  if (lead < 0xf0) return 3;
  return 4;
}

/** Length of the prefix of `buf` that does not end inside a multi-byte UTF-8 sequence. */
function completeUtf8Length(buf: Buffer): number {
  for (let k = 1; k <= Math.min(3, buf.length); k++) {
    const b = buf[buf.length - k];
    if ((b & 0xc0) === 0x80) continue;
    return b >= 0xc0 && sequenceLength(b) > k ? buf.length - k : buf.length;
  }
  return buf.length;
}

/**
 * Streams lines from byte `from` (the start of line `firstLine`) to `size`, feeding the page
 * collector and, on a full pass, the index builder. Without a builder it stops as soon as the
 * page is complete. Returns the number of the line after the last one seen (on a full pass:
 * the exact line count).
 */
async function scanLines(
  handle: ReadableFile,
  size: number,
  units: Units,
  from: number,
  firstLine: number,
  page: PageCollector,
  index: IndexBuilder | null,
  signal: AbortSignal | undefined,
): Promise<number> {
  const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(size - from, 1)));
  const u = units.size;
  let pos = from;
  let line = firstLine;
  let lineStart = from;
  let prevEndsWithCr = false;
  while (pos < size) {
    signal?.throwIfAborted();
    const n = await readFully(handle, buf, Math.min(buf.length, size - pos), pos);
    if (n === 0) break;
    const chunk = buf.subarray(0, n);
    index?.update(chunk, pos);
    let i = 0;
    for (let p = findNewline(chunk, 0, units); p >= 0; p = findNewline(chunk, i, units)) {
      const crlf = p >= u ? isCrAt(chunk, p - u, units) : prevEndsWithCr;
      if (page.wants(line)) {
        page.piece(line, chunk, i, crlf && p >= u ? p - u : p);
        if (crlf && p < u) page.dropTail(line, u);
      }
      index?.lineEnded(crlf);
      line++;
      i = p + u;
      lineStart = pos + i;
      if (index && line % LINE_INDEX_STEP === 0) index.mark(lineStart);
      if (!index && page.done(line)) return line;
    }
    if (i < n && page.wants(line)) page.piece(line, chunk, i, n);
    prevEndsWithCr = n >= u && isCrAt(chunk, n - u, units);
    pos += n;
  }
  // A final line without a newline counts; its bytes were collected with the chunk that held them.
  return lineStart < pos ? line + 1 : line;
}

/** Page fields computed from the collected lines. */
type Assembled = Pick<Page, "content" | "returnedLines" | "clippedLines" | "truncated" | "nextOffset">;

/**
 * Builds `content` from the collected lines under the character cap. A line that does not fit
 * ends the page before it, unless it is the page's first line: then it is clipped between code
 * points and marked, and the next page starts after it.
 */
function assemble(page: PageCollector, encoding: TextEncoding, req: PageRequest, totalLines: number, sizeBytes: number): Assembled {
  let content = "";
  let returned = 0;
  const clippedLines: number[] = [];
  for (const [k, entry] of page.lines.entries()) {
    const lineNo = page.first + k;
    const bytes = Buffer.concat(entry.parts);
    // A clipped line ends mid-way: decode in stream mode so a cut character is dropped, not U+FFFD.
    const text = entry.clipped ? streamDecoder(encoding).write(bytes) : decodeBytes(bytes, encoding);
    if (text.includes("\u0000")) {
      throw new ToolError("binary_file", "The file is binary (it contains NUL bytes); read_file returns text only.", {
        size_bytes: sizeBytes,
        reason: "nul_byte",
        line: lineNo + 1,
      });
    }
    const prefix = req.lineNumbers ? `${String(lineNo + 1).padStart(6)}| ` : "";
    const piece = (returned > 0 ? "\n" : "") + prefix + text;
    if (!entry.clipped && content.length + piece.length <= req.maxChars) {
      content += piece;
      returned++;
      continue;
    }
    if (returned === 0) {
      content = prefix + sliceCodePoints(text, 0, req.maxChars - prefix.length);
      returned = 1;
      clippedLines.push(lineNo + 1);
    }
    break;
  }
  const next = page.first + returned;
  return {
    content,
    returnedLines: returned,
    clippedLines,
    truncated: clippedLines.length > 0 || next < totalLines,
    nextOffset: next < totalLines ? next : null,
  };
}

/** Bytes worth collecting for a `maxChars` page: enough to fill it in any encoding. */
function byteBudget(maxChars: number): number {
  return 4 * maxChars + 16;
}

/**
 * One full pass from the start: sniff, hash, count, index, and collect the page. Caches the
 * index when the file did not change during the pass. When the start looked like UTF-8 but a
 * later byte is not, the encoding is chosen again from the bytes around that byte, and a second
 * pass is made if another encoding decodes them.
 */
async function fullPass(handle: ReadableFile, req: PageRequest, page: PageCollector): Promise<{ index: LineIndex; page: PageCollector }> {
  const st = await handle.stat();
  const sample = Buffer.alloc(Math.min(SNIFF_BYTES, st.size));
  const got = await readFully(handle, sample, sample.length, 0);
  const opts = { requested: req.encoding ?? null, legacy: req.legacy ?? null };
  const sniffed = await sniffText(sample.subarray(0, got), st.size, opts);
  let { index, invalidAt } = await passWith(handle, st.size, sniffed, sample.subarray(0, sniffed.bomLength), req, page);
  if (index.invalidUtf8 && sniffed.source === "utf8" && invalidAt >= 0) {
    const again = await reconsider(handle, st.size, invalidAt, opts);
    if (again) {
      const retry = new PageCollector(page.first, page.end, page.capBytes);
      const second = await passWith(handle, st.size, again, Buffer.alloc(0), req, retry);
      if (!second.index.invalidUtf8) {
        index = second.index;
        page = retry;
      }
    }
  }
  index.options = optionsKey(req);
  const after = await handle.stat();
  if (after.size === st.size && after.mtimeMs === st.mtimeMs && after.ctimeMs === st.ctimeMs) putLineIndex(st, index);
  return { index, page };
}

async function passWith(handle: ReadableFile, size: number, sniffed: Sniffed, bom: Buffer, req: PageRequest, page: PageCollector) {
  const builder = new IndexBuilder(sniffed, bom);
  const total = await scanLines(handle, size, unitsOf(sniffed), sniffed.bomLength, 0, page, builder, req.signal);
  return { index: builder.finish(total), invalidAt: builder.firstInvalidChunk() };
}

/**
 * The encoding of a file whose start is valid UTF-8 but whose bytes near `invalidAt` are not:
 * chosen from a window around that chunk (whole lines), or null when nothing but UTF-8 fits.
 */
async function reconsider(handle: ReadableFile, size: number, invalidAt: number, opts: { requested: string | null; legacy: string | null }): Promise<Sniffed | null> {
  const start = Math.max(0, invalidAt - DETECTION_SAMPLE_BYTES / 2);
  const window = Buffer.alloc(Math.min(DETECTION_SAMPLE_BYTES * 2, size - start));
  const got = await readFully(handle, window, window.length, start);
  let bytes = window.subarray(0, got);
  if (start > 0) bytes = bytes.subarray(bytes.indexOf(0x0a) + 1);
  const choice = chooseEncoding(bytes, null, { ...opts, complete: start + got >= size && start === 0 });
  if (choice.source === "utf8" || choice.source === "fallback") return null;
  return { encoding: choice.encoding, bomLength: 0, confidence: choice.confidence, source: choice.source, sure: choice.sure };
}

/** The request's encoding options, as stored with a cached index (another choice needs another pass). */
function optionsKey(req: PageRequest): string {
  return `${req.encoding ?? ""}|${req.legacy ?? ""}`;
}

function checkOffset(offset: number, totalLines: number): void {
  if (offset > 0 && offset >= totalLines) {
    throw new ToolError("offset_out_of_range", `offset ${offset} is past the end of the file (${totalLines} lines).`, {
      offset,
      total_lines: totalLines,
    });
  }
}

/**
 * Reads one page of a text file from an open handle (opened with `openForRead`).
 *
 * @param handle a regular file opened for reading; not closed here
 * @param req offset (lines skipped, 0-based), limit (lines), maxChars (UTF-16 code units), line numbers
 * @returns the page and whole-file facts (see `Page`)
 * @throws ToolError `offset_out_of_range` (detail `{offset, total_lines}`) when `offset` >= the
 *   line count and `offset` > 0 (an empty file read at offset 0 is an empty page, C12);
 *   `binary_file` / `encoding_unsupported` from sniffing (C10) or a NUL in the returned lines
 */
export async function readPage(handle: ReadableFile, req: PageRequest): Promise<Page> {
  const st = await handle.stat();
  const page = new PageCollector(req.offset, req.offset + req.limit, byteBudget(req.maxChars));
  let index = getLineIndex(st);
  let collected = page;
  if (index && index.options === optionsKey(req)) {
    checkOffset(req.offset, index.totalLines);
    const step = Math.floor(req.offset / LINE_INDEX_STEP);
    const from = index.lineStarts[Math.min(step, index.lineStarts.length - 1)];
    const firstLine = Math.min(step, index.lineStarts.length - 1) * LINE_INDEX_STEP;
    await scanLines(handle, st.size, unitsOf(index.sniffed), from, firstLine, page, null, req.signal);
  } else {
    ({ index, page: collected } = await fullPass(handle, req, page));
    checkOffset(req.offset, index.totalLines);
  }
  const sniffed = index.sniffed;
  const warning = index.invalidUtf8 ? (sniffed.encoding === "utf-8" ? "invalid_utf8" : "invalid_bytes") : sniffed.sure === false ? "uncertain" : undefined;
  return {
    ...assemble(collected, sniffed.encoding, req, index.totalLines, st.size),
    totalLines: index.totalLines,
    encoding: sniffed.encoding,
    encodingConfidence: sniffed.confidence ?? 1,
    encodingSource: sniffed.source ?? (sniffed.bomLength > 0 ? "bom" : "utf8"),
    ...(warning ? { encodingWarning: warning } : {}),
    bom: index.sniffed.bomLength > 0,
    eol: index.eol,
    sha256: index.sha256,
    sizeBytes: st.size,
  };
}
