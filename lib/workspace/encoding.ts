import { isUtf8 } from "node:buffer";
import iconv from "iconv-lite";
import { chardet } from "jschardet";
import { ToolError } from "@/lib/errors";

/**
 * Which character encoding a file's bytes are in, and the exact way between those bytes and text.
 *
 * The order of evidence, strongest first:
 * 1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE): always right, nothing overrides it;
 * 2. an `encoding` named on the tool call (the caller knows the file);
 * 3. strict UTF-8: bytes that are valid UTF-8 are UTF-8 (pure ASCII included, so an ASCII file is
 *    never taken for HZ-GB-2312, UTF-7 or ISO-2022, which look like ASCII);
 * 4. the operator's legacy encoding for the workspace (`AGENT_REACH_LEGACY_ENCODING`), when the
 *    bytes decode exactly in it;
 * 5. a statistical guess by jschardet (a port of Python's chardet 7) over a bounded sample, kept only
 *    when the bytes decode exactly in the guessed encoding; below `SURE_CONFIDENCE` the guess is
 *    "unsure" and writers refuse text whose bytes would depend on it.
 * When nothing decodes exactly, or the bytes are mostly well-formed UTF-8 multi-byte sequences with a
 * few stray bytes, the file is UTF-8 with invalid bytes (shown as U+FFFD, edited as bytes).
 *
 * Decoding and encoding use iconv-lite (Node's TextDecoder has no encoder). Only stateless,
 * ASCII-compatible encodings are offered, where the bytes 0x0A and 0x0D only ever mean a line
 * break and an edit can be spliced into the bytes without touching anything around it.
 */

/** Canonical name of a supported encoding (lower case, as reported to agents). */
export type EncodingName = string;

/** Where an encoding decision came from. */
export type EncodingSource = "bom" | "argument" | "utf8" | "workspace_setting" | "detected" | "fallback";

/** An encoding decision for one file. */
export interface EncodingChoice {
  encoding: EncodingName;
  /** Length of the byte order mark (0, 2 or 3). */
  bomLength: number;
  /** 0..1: 1 for a BOM, an argument, valid UTF-8 and the workspace setting; the detector's score for a guess. */
  confidence: number;
  source: EncodingSource;
  /** False for an unsure guess: writing new non-ASCII text in it could produce a file in two encodings. */
  sure: boolean;
}

/** A guess at or above this detector confidence is trusted for writes (measured on short GBK, Big5, Shift_JIS, EUC-KR and Latin samples). */
export const SURE_CONFIDENCE = 0.3;
/** Most bytes handed to the detector (it reads at most 200 kB itself). */
export const DETECTION_SAMPLE_BYTES = 64 * 1024;
/** Bytes looked at to tell UTF-8 with stray bytes from legacy text (a bounded scan: the answer is statistical). */
const MOSTLY_UTF8_SCAN_BYTES = 1 << 20;
/** Detector candidates checked for an exact decoding, best first (each check decodes the file). */
const MAX_CANDIDATES = 8;
/** Code points named in an `encoding_unsupported` detail. */
const MAX_LISTED_CHARS = 8;

/**
 * Supported legacy encodings: canonical name → iconv-lite codec name. Multi-byte CJK codecs of
 * iconv-lite are the Windows supersets (shift_jis = cp932, euc-kr = cp949, big5 = Big5-HKSCS,
 * gbk = cp936), as the files written on Windows are.
 */
const LEGACY: Record<string, string> = {
  gbk: "gbk",
  gb18030: "gb18030",
  big5: "big5hkscs",
  shift_jis: "shiftjis",
  "euc-jp": "eucjp",
  "euc-kr": "cp949",
  "windows-874": "windows874",
  "koi8-r": "koi8r",
  "koi8-u": "koi8u",
  ...Object.fromEntries([1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258].map((n) => [`windows-${n}`, `windows${n}`])),
  ...Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16].map((n) => [`iso-8859-${n}`, `iso8859${n}`])),
};

/** The one-byte-per-character encodings among LEGACY. */
export const SINGLE_BYTE: ReadonlySet<EncodingName> = new Set(Object.keys(LEGACY).filter((e) => e.startsWith("windows-") || e.startsWith("iso-8859-") || e.startsWith("koi8-")));

/** Spellings accepted for each canonical name (compared without case, "-", "_", " " or "."). */
const ALIASES: Record<string, string> = {
  utf8: "utf-8",
  utf16le: "utf-16le",
  utf16be: "utf-16be",
  cp936: "gbk",
  gb2312: "gbk",
  euccn: "gbk",
  xgbk: "gbk",
  windows936: "gbk",
  ms936: "gbk",
  big5hkscs: "big5",
  cp950: "big5",
  sjis: "shift_jis",
  cp932: "shift_jis",
  windows31j: "shift_jis",
  mskanji: "shift_jis",
  xsjis: "shift_jis",
  ms932: "shift_jis",
  eucjp: "euc-jp",
  euckr: "euc-kr",
  cp949: "euc-kr",
  uhc: "euc-kr",
  ksc5601: "euc-kr",
  latin1: "iso-8859-1",
  l1: "iso-8859-1",
  tis620: "windows-874",
  cp874: "windows-874",
};

function squash(name: string): string {
  return name.toLowerCase().replace(/[-_ .]/g, "");
}

const BY_SQUASHED = new Map<string, EncodingName>();
for (const name of ["utf-8", "utf-16le", "utf-16be", ...Object.keys(LEGACY)]) BY_SQUASHED.set(squash(name), name);
for (const [alias, name] of Object.entries(ALIASES)) BY_SQUASHED.set(alias, name);
for (const n of [1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258]) BY_SQUASHED.set(`cp${n}`, `windows-${n}`);
for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16]) BY_SQUASHED.set(`iso8859${n}`, `iso-8859-${n}`);

/** Every canonical name this module reads and writes, for messages and documentation. */
export const SUPPORTED_ENCODINGS: readonly EncodingName[] = ["utf-8", "utf-16le", "utf-16be", ...Object.keys(LEGACY)];

/** The canonical name of `name` (any common spelling: "GBK", "cp936", "Shift_JIS", "latin1", "CP1252"), or null. */
export function canonicalEncoding(name: string): EncodingName | null {
  return BY_SQUASHED.get(squash(name)) ?? null;
}

/**
 * The canonical name of an encoding named by a caller.
 *
 * @param argument the argument's name, for the error
 * @throws ToolError `encoding_unsupported` (reason "unknown_encoding", detail.supported) when the
 *   name is not a supported encoding
 */
export function requireEncoding(name: string, argument: string): EncodingName {
  const canonical = canonicalEncoding(name);
  if (canonical) return canonical;
  throw new ToolError("encoding_unsupported", `${argument} ${JSON.stringify(name)} is not a supported encoding. Supported: ${SUPPORTED_ENCODINGS.join(", ")}.`, {
    reason: "unknown_encoding",
    argument,
    encoding: name,
    supported: SUPPORTED_ENCODINGS,
  });
}

/** True for UTF-8 and UTF-16, which Node decodes natively. */
export function isUnicode(encoding: EncodingName): boolean {
  return encoding === "utf-8" || encoding === "utf-16le" || encoding === "utf-16be";
}

function codecOf(encoding: EncodingName): string {
  if (encoding === "utf-8") return "utf8";
  if (encoding === "utf-16le") return "utf-16le";
  if (encoding === "utf-16be") return "utf-16be";
  const codec = LEGACY[encoding];
  if (!codec) throw new Error(`unsupported encoding ${encoding}`);
  return codec;
}

/** Decodes `bytes` (no BOM) in `encoding`; bytes that do not decode become U+FFFD. Never throws. */
export function decodeBytes(bytes: Buffer, encoding: EncodingName): string {
  if (encoding === "utf-8") return bytes.toString("utf8");
  if (encoding === "utf-16le") return bytes.toString("utf16le");
  if (encoding === "utf-16be") return Buffer.from(bytes).swap16().toString("utf16le");
  return iconv.decode(bytes, codecOf(encoding));
}

/**
 * A decoder for a stream of chunks in `encoding`: `write` returns the text of the complete
 * characters so far and keeps a character cut at the chunk's end for the next call.
 */
export function streamDecoder(encoding: EncodingName): { write(chunk: Buffer): string } {
  if (encoding === "utf-8" || encoding === "utf-16le" || encoding === "utf-16be") {
    const d = new TextDecoder(encoding);
    return { write: (chunk) => d.decode(chunk, { stream: true }) };
  }
  const d = iconv.getDecoder(codecOf(encoding));
  return { write: (chunk) => d.write(chunk) };
}

/**
 * True when `bytes` decode in `encoding` without U+FFFD and encode back to exactly the same bytes.
 * A legacy encoding maps some characters to one byte sequence only (Shift_JIS has duplicate
 * codes, windows-1252 has undefined bytes), so decoding alone proves nothing.
 */
export function roundTrips(bytes: Buffer, encoding: EncodingName): boolean {
  if (encoding === "utf-8") return isUtf8(bytes);
  if (isUnicode(encoding)) return bytes.length % 2 === 0;
  const text = iconv.decode(bytes, codecOf(encoding));
  return !text.includes("\ufffd") && iconv.encode(text, codecOf(encoding)).equals(bytes);
}

/** The first `max` code points of `text` that `encoding` cannot hold, as "U+XXXX" strings. */
export function unrepresentable(text: string, encoding: EncodingName, max = MAX_LISTED_CHARS): string[] {
  if (isUnicode(encoding)) return [];
  const codec = codecOf(encoding);
  const found: string[] = [];
  const checked = new Set<number>();
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80 || checked.has(cp)) continue;
    checked.add(cp);
    if (iconv.decode(iconv.encode(ch, codec), codec) !== ch) {
      found.push(`U+${cp.toString(16).toUpperCase().padStart(4, "0")}`);
      if (found.length >= max) break;
    }
  }
  return found;
}

/**
 * Encodes `text` (no BOM) in `encoding` as the codec does, with no check: a character the
 * encoding lacks becomes its substitute byte. Only for text that came from decoding the same
 * bytes, whose result the caller compares with the original.
 */
export function encodeUnchecked(text: string, encoding: EncodingName): Buffer {
  if (encoding === "utf-8") return Buffer.from(text, "utf8");
  if (encoding === "utf-16le") return Buffer.from(text, "utf16le");
  if (encoding === "utf-16be") return Buffer.from(text, "utf16le").swap16();
  return iconv.encode(text, codecOf(encoding));
}

/**
 * Encodes `text` (no BOM) in `encoding`, refusing anything that would not decode back to `text`.
 *
 * @throws ToolError `encoding_unsupported` (reason "unrepresentable", detail {encoding, characters:
 *   ["U+20AC", …] (the first few), argument}) when `encoding` cannot hold a character of `text`
 */
export function encodeString(text: string, encoding: EncodingName, argument = "text"): Buffer {
  if (encoding === "utf-8") return Buffer.from(text, "utf8");
  if (encoding === "utf-16le") return Buffer.from(text, "utf16le");
  if (encoding === "utf-16be") return Buffer.from(text, "utf16le").swap16();
  const codec = codecOf(encoding);
  const bytes = iconv.encode(text, codec);
  if (iconv.decode(bytes, codec) === text) return bytes;
  const characters = unrepresentable(text, encoding);
  const shown = characters.length > 0 ? characters.join(", ") : "some characters";
  throw new ToolError(
    "encoding_unsupported",
    `${argument} holds characters that ${encoding} cannot represent (${shown}); the file is ${encoding}, so nothing was written. ` +
      `Leave those characters out, or write them as an escape the file's language understands.`,
    { reason: "unrepresentable", encoding, characters, argument },
  );
}

/** Options of `chooseEncoding`. */
export interface ChooseOptions {
  /** Canonical encoding named on the call (already checked with `requireEncoding`). */
  requested?: EncodingName | null;
  /** The workspace's legacy encoding (canonical), from the configuration. */
  legacy?: EncodingName | null;
  /**
   * True when `bytes` is the whole file; false for a sample of its start, which may end inside a
   * character (checks then stop at the sample's last line break).
   */
  complete: boolean;
}

/**
 * Decides the encoding of a file from its bytes (see the module comment for the order). The
 * BOM is found by the caller's `bom` (kept separate so UTF-32 stays binary).
 *
 * @param bytes the whole file, or a sample of its start (`opts.complete` false)
 * @param bom the BOM at the start of `bytes`, if any
 * @throws ToolError `encoding_unsupported` with reason "bom_mismatch" when `opts.requested`
 *   contradicts the BOM, reason "utf16_without_bom" when UTF-16 is requested for a file without BOM
 */
export function chooseEncoding(bytes: Buffer, bom: { encoding: EncodingName; length: number } | null, opts: ChooseOptions): EncodingChoice {
  const requested = opts.requested ?? null;
  if (bom) {
    if (requested && requested !== bom.encoding) {
      throw new ToolError("encoding_unsupported", `The file starts with a ${bom.encoding} byte order mark, so it cannot be read or written as ${requested}. Leave out encoding.`, {
        reason: "bom_mismatch",
        encoding: bom.encoding,
        requested,
      });
    }
    return { encoding: bom.encoding, bomLength: bom.length, confidence: 1, source: "bom", sure: true };
  }
  if (requested) {
    if (requested === "utf-16le" || requested === "utf-16be") {
      throw new ToolError("encoding_unsupported", "UTF-16 files are recognised by their byte order mark; this file has none. Leave out encoding or name another one.", {
        reason: "utf16_without_bom",
        requested,
      });
    }
    return { encoding: requested, bomLength: 0, confidence: 1, source: "argument", sure: true };
  }
  const body = opts.complete ? bytes : toLastLineBreak(bytes);
  if (isUtf8(body) && (opts.complete || isUtf8(completeUtf8Prefix(bytes)))) {
    return { encoding: "utf-8", bomLength: 0, confidence: 1, source: "utf8", sure: true };
  }
  if (mostlyUtf8(body.subarray(0, MOSTLY_UTF8_SCAN_BYTES))) {
    // UTF-8 text with a few stray bytes: a legacy decoding would turn every UTF-8 character into mojibake.
    return { encoding: "utf-8", bomLength: 0, confidence: 0, source: "fallback", sure: true };
  }
  if (opts.legacy && opts.legacy !== "utf-8" && !isUnicode(opts.legacy) && roundTrips(body, opts.legacy)) {
    return { encoding: opts.legacy, bomLength: 0, confidence: 1, source: "workspace_setting", sure: true };
  }
  const guess = detect(body);
  if (guess) return { ...guess, bomLength: 0, source: "detected", sure: guess.confidence >= SURE_CONFIDENCE };
  return { encoding: "utf-8", bomLength: 0, confidence: 0, source: "fallback", sure: true };
}

/**
 * True when at least half of the non-ASCII runs in `bytes` are well-formed UTF-8 multi-byte
 * sequences: UTF-8 text with stray bytes. Legacy text forms such sequences only by accident
 * (about one GBK pair in twelve), and single-byte Latin text almost never.
 */
export function mostlyUtf8(bytes: Buffer): boolean {
  let valid = 0;
  let invalid = 0;
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    const len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len > 0 && wellFormedAt(bytes, i, len)) {
      valid++;
      i += len;
    } else {
      invalid++;
      i++;
    }
  }
  return valid > 0 && valid >= invalid;
}

/** Offset of the first byte of `bytes` that does not start a well-formed UTF-8 sequence, or -1 (a sequence cut at the end counts as invalid). */
export function firstInvalidUtf8(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    const len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0 || !wellFormedAt(bytes, i, len)) return i;
    i += len;
  }
  return -1;
}

/** True when the `len`-byte UTF-8 sequence starting with the lead byte at `i` is well-formed (RFC 3629 table). */
function wellFormedAt(bytes: Buffer, i: number, len: number): boolean {
  if (i + len > bytes.length) return false;
  const lead = bytes[i];
  const second = bytes[i + 1];
  const lo = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  const hi = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  if (second < lo || second > hi) return false;
  for (let k = 2; k < len; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return false;
  return true;
}

/** `bytes` up to and including its last "\n" (all of it when there is none): a character boundary in every supported encoding. */
function toLastLineBreak(bytes: Buffer): Buffer {
  const nl = bytes.lastIndexOf(0x0a);
  return nl === -1 ? bytes : bytes.subarray(0, nl + 1);
}

/** `bytes` without a UTF-8 sequence cut at its end. */
function completeUtf8Prefix(bytes: Buffer): Buffer {
  for (let k = 1; k <= Math.min(3, bytes.length); k++) {
    const b = bytes[bytes.length - k];
    if ((b & 0xc0) === 0x80) continue;
    const len = b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    return len > k ? bytes.subarray(0, bytes.length - k) : bytes;
  }
  return bytes;
}

/**
 * The detector's best guess among supported encodings in which `bytes` decode exactly, with its
 * confidence (0..1); null when none does. The sample starts at the first non-ASCII byte's line, so
 * a long ASCII head does not dilute it.
 */
function detect(bytes: Buffer): { encoding: EncodingName; confidence: number } | null {
  const sample = detectionSample(bytes);
  const results = chardet.detectAll(sample, {
    encodingEra: chardet.EncodingEra.MODERN_WEB | chardet.EncodingEra.LEGACY_ISO,
    ignoreThreshold: true,
  });
  // Prior for short Latin text: below the threshold the single-byte scores are close to noise
  // (one "é" scores Greek, Czech and French alike); windows-1252 is by far the most common of them.
  const top = results[0];
  const topName = top?.encoding ? canonicalEncoding(top.encoding) : null;
  if (top && topName && SINGLE_BYTE.has(topName) && top.confidence < SURE_CONFIDENCE) {
    const w = results.find((r) => r.encoding && canonicalEncoding(r.encoding) === "windows-1252");
    if (w && w.confidence >= top.confidence / 2 && roundTrips(sample, "windows-1252") && roundTrips(bytes, "windows-1252")) {
      return { encoding: "windows-1252", confidence: w.confidence };
    }
  }
  const tried = new Set<string>();
  const exact = (name: EncodingName) => roundTrips(sample, name) && (sample.length === bytes.length || roundTrips(bytes, name));
  for (const r of results) {
    const name = r.encoding ? canonicalEncoding(r.encoding) : null;
    if (!name || isUnicode(name) || tried.has(name)) continue;
    tried.add(name);
    // GBK bytes are GB18030 bytes too; report the narrower encoding, so a character GBK lacks is
    // refused rather than written as a four-byte GB18030 sequence a GBK reader cannot read.
    if (name === "gb18030" && exact("gbk")) return { encoding: "gbk", confidence: r.confidence };
    if (exact(name)) return { encoding: name, confidence: r.confidence };
    if (tried.size >= MAX_CANDIDATES) break;
  }
  return null;
}

/** Up to DETECTION_SAMPLE_BYTES bytes from the start of the line of the first non-ASCII byte, ending at a line break. */
function detectionSample(bytes: Buffer): Buffer {
  let first = 0;
  while (first < bytes.length && bytes[first] < 0x80) first++;
  if (first === bytes.length) first = 0;
  const start = bytes.lastIndexOf(0x0a, first) + 1;
  const window = bytes.subarray(start, start + DETECTION_SAMPLE_BYTES);
  return window.length < bytes.length - start ? toLastLineBreak(window) : window;
}
