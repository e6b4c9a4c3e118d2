/**
 * Secrets written in an encoding: hex with separators (`de ad be ef`, `de:ad:be:ef`, `xxd -p`
 * wrapped at 60 columns, `od -An -t x1`, `0x61, 0x72` C arrays, `\x61\x72` escapes), hex dump tables (`xxd`, `hexdump -C`, `od -A x -t x1z`:
 * an offset, then the bytes, then the text column), and base64 broken over lines (`base64` wraps
 * at 76 columns; PEM-like bodies).
 *
 * The rule: an encoded run is decoded, and masked only where its decoded bytes hold a secret
 * (found by `find`, the same detectors as plain text: the server's own secrets and the credential
 * formats). The marker replaces exactly the characters that encode the secret's bytes, widened to
 * whole rows in a hex dump table (whose text column shows the same bytes again). Hex and base64
 * that decode to no secret (hashes, commit ids, binary dumps, images, keys of no known format)
 * are left as they are, however long.
 *
 * Not recognised: `od -x` (16-bit words, byte-swapped), hex or base64 of a secret's bytes that was
 * itself transformed (compressed, encrypted, XORed), and decimal or octal dumps.
 */

/** A secret found in decoded bytes: `[start, end)` byte offsets, and its kind. */
export type Found = { start: number; end: number; kind: string };

/** Finds secrets in decoded bytes, given as a latin1 string (one character per byte). */
export type SecretFinder = (decoded: string) => Found[];

/** Shortest run worth decoding (bytes): shorter ones cannot hold a credential. */
const MIN_BYTES = 12;

/** A span of the text to replace with a marker. */
interface Span {
  from: number;
  to: number;
  kind: string;
}

/**
 * Masks the secrets `find` finds in the hex and base64 runs of `text` (see the module comment).
 * @returns the text with `[REDACTED:<kind>:<length>]` over each encoded secret; unchanged when none
 */
export function redactEncoded(text: string, find: SecretFinder): string {
  if (text.length < 2 * MIN_BYTES) return text;
  const spans = encodedSpans(text, find);
  if (spans.length === 0) return text;
  // Overlapping spans merge (a table row is also a hex run); the widest kind wins.
  spans.sort((a, b) => a.from - b.from || b.to - a.to);
  const merged: Span[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.from <= last.to) last.to = Math.max(last.to, s.to);
    else merged.push({ ...s });
  }
  let out = "";
  let at = 0;
  for (const s of merged) {
    out += text.slice(at, s.from) + `[REDACTED:${s.kind}:${s.to - s.from}]`;
    at = s.to;
  }
  return out + text.slice(at);
}

/**
 * Longest stretch of text scanned at once (characters), and how much consecutive stretches
 * overlap. The regular-expression engine keeps backtracking state per character of a run, and one
 * run of a few million characters (a large file of one repeated letter) overflows its stack;
 * stretches of 1 Mi characters stay far below that. An encoded secret is a few hundred
 * characters, so one that straddles a boundary lies whole in the overlap of the next stretch.
 */
const WINDOW = 1 << 20;
const OVERLAP = 1 << 16;

/** The spans to mask in `text`: hex dump tables, hex runs and base64 runs, stretch by stretch. */
function encodedSpans(text: string, find: SecretFinder): Span[] {
  const spans: Span[] = [];
  for (let start = 0; ; start += WINDOW - OVERLAP) {
    const part = start === 0 && text.length <= WINDOW ? text : text.slice(start, start + WINDOW);
    for (const s of [...dumpTableSpans(part, find), ...hexRunSpans(part, find), ...base64Spans(part, find)]) {
      spans.push({ ...s, from: s.from + start, to: s.to + start });
    }
    if (start + WINDOW >= text.length) return spans;
  }
}

/** Spans of `text` covering the bytes of each secret, given each byte's character range. */
function spansFor(found: Found[], byteChars: Array<[number, number]>, kind?: string): Span[] {
  return found
    .filter((f) => f.end > f.start && f.start < byteChars.length)
    .map((f) => ({ from: byteChars[f.start][0], to: byteChars[Math.min(f.end, byteChars.length) - 1][1], kind: kind ?? f.kind }));
}

/**
 * Hex byte pairs, each optionally written `0x61` or `\x61` (C arrays from `xxd -i`, escaped
 * strings), with up to two separators (space, tab, comma, colon, dash) between pairs, and line
 * breaks (with the next line's indentation) anywhere between pairs. Starts and ends at a word
 * boundary, so hex inside an identifier is not taken.
 */
const HEX_RUN = /(?<![0-9A-Za-z_])(?:(?:0[xX]|\\x)?[0-9A-Fa-f]{2}(?:[ \t,:-]{1,2}(?:\r?\n[ \t]*)?|\r?\n[ \t]*)?){12,}(?![0-9A-Za-z_])/g;

function hexRunSpans(text: string, find: SecretFinder): Span[] {
  const spans: Span[] = [];
  for (const m of text.matchAll(HEX_RUN)) {
    const run = m[0];
    const base = m.index ?? 0;
    const byteChars: Array<[number, number]> = [];
    let bytes = "";
    for (let i = 0; i < run.length; ) {
      const hi = hexValue(run.charCodeAt(i));
      const lo = i + 1 < run.length ? hexValue(run.charCodeAt(i + 1)) : -1;
      if (hi >= 0 && lo >= 0) {
        bytes += String.fromCharCode(hi * 16 + lo);
        byteChars.push([base + i, base + i + 2]);
        i += 2;
      } else i++;
    }
    if (byteChars.length >= MIN_BYTES) spans.push(...spansFor(find(bytes), byteChars));
  }
  return spans;
}

/** The value of a hex digit's character code, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** True for a character code of the base64 alphabets (standard and URL-safe). */
function isBase64Char(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 45 || c === 95;
}

/**
 * One row of a hex dump table: an offset (6–16 hex digits, `:` after it in xxd), then groups of
 * 2 or 4 hex digits each after one or two spaces; the rest of the row (the text column) follows.
 */
const DUMP_ROW = /^([ \t]*[0-9A-Fa-f]{6,16}:?)((?:[ ]{1,2}(?:[0-9A-Fa-f]{4}|[0-9A-Fa-f]{2})(?![0-9A-Za-z]))+)(.*)$/gm;
/** Bytes a dump row shows at most (xxd, hexdump -C and od all show 16 by default; xxd -c up to 256). */
const ROW_MAX_BYTES = 64;

function dumpTableSpans(text: string, find: SecretFinder): Span[] {
  const spans: Span[] = [];
  let table: Array<{ from: number; to: number; firstByte: number }> = [];
  let bytes = "";
  let lastEnd = -2;
  const flush = () => {
    if (table.length >= 1 && bytes.length >= MIN_BYTES) {
      for (const f of find(bytes)) {
        const rows = table.filter((r, i) => {
          const next = i + 1 < table.length ? table[i + 1].firstByte : bytes.length;
          return r.firstByte < f.end && next > f.start;
        });
        // One marker per row: the table keeps its rows and offsets.
        for (const r of rows) spans.push({ from: r.from, to: r.to, kind: f.kind });
      }
    }
    table = [];
    bytes = "";
  };
  for (const m of text.matchAll(DUMP_ROW)) {
    const start = m.index ?? 0;
    // Rows of one table follow each other line by line.
    if (start !== lastEnd + 1) flush();
    const hexPart = m[2];
    const firstByte = bytes.length;
    let n = 0;
    for (const token of hexPart.trim().split(/ {1,2}/)) {
      for (let i = 0; i + 1 < token.length && n < ROW_MAX_BYTES; i += 2, n++) bytes += String.fromCharCode(parseInt(token.slice(i, i + 2), 16));
    }
    // The row after its offset: its bytes and its text column, which shows the same bytes.
    table.push({ from: start + m[1].length, to: start + m[0].length, firstByte });
    lastEnd = start + m[0].length;
  }
  flush();
  return spans;
}

/**
 * base64 (standard or URL-safe alphabet) of at least 16 characters, continued over line breaks
 * by lines that hold nothing but base64 (as `base64` and PEM bodies wrap).
 */
const BASE64_RUN = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/_-]{4,}={0,2}(?=[ \t]*(?:\r?\n|$)))*/g;

function base64Spans(text: string, find: SecretFinder): Span[] {
  const spans: Span[] = [];
  for (const m of text.matchAll(BASE64_RUN)) {
    const run = m[0];
    const base = m.index ?? 0;
    // Only runs that could be base64: both cases (plain words, hex and constants are not). A run
    // of letters alone is an identifier far more often than an encoding; base64 of 12 or more
    // bytes holds a digit or a symbol with a probability above 0.98, and a wrapped block always.
    if (!/[A-Z]/.test(run) || !/[a-z]/.test(run) || (!/[0-9+/_=-]/.test(run) && !run.includes("\n"))) continue;
    const chars: number[] = []; // text offset of each base64 character
    let clean = "";
    for (let i = 0; i < run.length; i++) {
      const c = run.charCodeAt(i);
      if (isBase64Char(c)) {
        clean += c === 45 ? "+" : c === 95 ? "/" : run[i];
        chars.push(base + i);
      }
    }
    if (clean.length < 16) continue;
    // The run may start anywhere in an encoding: try each of the four alignments.
    for (let skip = 0; skip < 4; skip++) {
      const body = clean.slice(skip, skip + Math.floor((clean.length - skip) / 4) * 4);
      if (body.length < 16) break;
      const bytes = Buffer.from(body, "base64").toString("latin1");
      const found = find(bytes);
      if (found.length === 0) continue;
      // Byte k is encoded in characters floor(8k/6) … floor((8k+7)/6) of the body.
      const byteChars: Array<[number, number]> = [];
      for (let k = 0; k < bytes.length; k++) {
        const a = skip + Math.floor((8 * k) / 6);
        const b = skip + Math.floor((8 * k + 7) / 6);
        byteChars.push([chars[a], chars[Math.min(b, chars.length - 1)] + 1]);
      }
      spans.push(...spansFor(found, byteChars));
      break;
    }
  }
  return spans;
}
