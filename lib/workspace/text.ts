import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import { ToolError } from "@/lib/errors";

/**
 * Text encoding, byte order marks and line endings of file contents, and the exact way back from
 * text to bytes (field cases C06, C07, C08, C10).
 *
 * The rule every writer follows: bytes that the agent did not ask to change come out exactly as
 * they went in. Decoding never replaces bytes silently on a path that writes; text that cannot be
 * decoded exactly is either edited as bytes (invalid UTF-8, C06) or refused with
 * `encoding_unsupported`.
 */

/** Line-ending style: only "\n", only "\r\n", both, or no line break at all. A lone "\r" is not a line break. */
export type Eol = "lf" | "crlf" | "mixed" | "none";

/** Encodings we read and write back. A file without a BOM is treated as UTF-8. */
export type TextEncoding = "utf-8" | "utf-16le" | "utf-16be";

/** What a file's bytes are, as far as writing them back is concerned. */
export interface TextProfile {
  /** From the BOM; "utf-8" when there is none. */
  encoding: TextEncoding;
  /** The bytes start with a byte order mark of `encoding`. */
  bom: boolean;
  /** Size of that BOM in bytes (0, 2 or 3). */
  bomLength: number;
  /** A NUL byte in a file that is not UTF-16 with a BOM (C10: "nul_byte"; CJK text is never binary). */
  binary: boolean;
  /**
   * The body (after the BOM) decodes exactly: valid UTF-8 (WHATWG), or UTF-16 of even length.
   * False for binary files.
   */
  valid: boolean;
  /** Line-ending style of the body (on the decoded text for UTF-16). */
  eol: Eol;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16BE_BOM = Buffer.from([0xfe, 0xff]);
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** sha256 of `bytes` as 64 lower-case hex digits (the hash every tool reports and compares, C15). */
export function sha256Hex(bytes: Buffer): string {
  return crypto.createHash("sha256").update(bytes).digest("hex");
}

/**
 * The byte order mark at the start of `bytes`, if any. `FF FE 00 00` (UTF-32LE) is not taken for
 * UTF-16LE: it returns null and the NUL bytes then mark the file as binary.
 *
 * @returns the encoding the BOM announces and its length in bytes, or null
 */
export function detectBom(bytes: Buffer): { encoding: TextEncoding; length: number } | null {
  if (bytes.subarray(0, 3).equals(UTF8_BOM)) return { encoding: "utf-8", length: 3 };
  if (bytes.subarray(0, 2).equals(UTF16LE_BOM)) {
    const utf32 = bytes.length >= 4 && bytes[2] === 0 && bytes[3] === 0;
    return utf32 ? null : { encoding: "utf-16le", length: 2 };
  }
  if (bytes.subarray(0, 2).equals(UTF16BE_BOM)) return { encoding: "utf-16be", length: 2 };
  return null;
}

/**
 * Line-ending style of `text`: "crlf" when every "\n" follows a "\r", "lf" when none does,
 * "mixed" when both occur, "none" without any "\n".
 */
export function detectEol(text: string): Eol {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
    if (crlf > 0 && lf > 0) return "mixed";
  }
  if (crlf > 0) return "crlf";
  return lf > 0 ? "lf" : "none";
}

/**
 * Profiles a file's bytes: BOM, encoding, binary (NUL byte), exact decodability and line endings.
 * Scans the whole buffer (no sample that could end inside a multi-byte character, C10).
 */
export function profileText(bytes: Buffer): TextProfile {
  const bom = detectBom(bytes);
  const encoding = bom?.encoding ?? "utf-8";
  const bomLength = bom?.length ?? 0;
  const body = bytes.subarray(bomLength);
  if (encoding === "utf-8") {
    const binary = body.includes(0);
    return {
      encoding,
      bom: bom !== null,
      bomLength,
      binary,
      valid: !binary && isUtf8(body),
      eol: detectEol(body.toString("latin1")),
    };
  }
  const valid = body.length % 2 === 0;
  return { encoding, bom: true, bomLength, binary: false, valid, eol: valid ? detectEol(decodeUtf16(body, encoding)) : "none" };
}

function decodeUtf16(body: Buffer, encoding: "utf-16le" | "utf-16be"): string {
  if (encoding === "utf-16le") return body.toString("utf16le");
  return Buffer.from(body).swap16().toString("utf16le");
}

/**
 * Decodes a text file exactly (without its BOM). Lone surrogates in UTF-16 survive, so
 * `encodeText(decodeText(b), profile)` gives back `b` for every file this accepts.
 *
 * @throws ToolError `binary_file` (reason "nul_byte", detail.size_bytes) for binary content;
 *   `encoding_unsupported` (reason "invalid_utf8" or "utf16_odd_length") when the bytes do not
 *   decode exactly
 */
export function decodeText(bytes: Buffer, profile: TextProfile = profileText(bytes)): string {
  assertTextual(bytes, profile);
  const body = bytes.subarray(profile.bomLength);
  if (!profile.valid) {
    const reason = profile.encoding === "utf-8" ? "invalid_utf8" : "utf16_odd_length";
    throw new ToolError("encoding_unsupported", `The file is not valid ${profile.encoding} text.`, {
      reason,
      encoding: profile.encoding,
    });
  }
  return profile.encoding === "utf-8" ? body.toString("utf8") : decodeUtf16(body, profile.encoding);
}

/**
 * Decodes for display only (diffs, messages): invalid UTF-8 sequences become U+FFFD (WHATWG
 * rules), the BOM is dropped. Never use the result to write a file.
 */
export function decodeForDisplay(bytes: Buffer, profile: TextProfile = profileText(bytes)): string {
  const body = bytes.subarray(profile.bomLength);
  if (profile.encoding === "utf-8") return body.toString("utf8");
  return decodeUtf16(body.subarray(0, body.length - (body.length % 2)), profile.encoding);
}

/**
 * Encodes `text` in `encoding`, with that encoding's BOM in front when `bom` is true (UTF-16 is
 * always written with its BOM: without one it could not be recognised again). `text` is encoded
 * as is; callers that take text from an agent drop a leading U+FEFF first (`stripLeadingBom`),
 * so a BOM is never doubled (C07).
 *
 * @throws ToolError `invalid_arguments` (reason "lone_surrogate") when `text` holds an unpaired
 *   surrogate and `encoding` is UTF-8 (it would be written as EF BF BD, C06)
 */
export function encodeText(text: string, target: { encoding: TextEncoding; bom: boolean }): Buffer {
  if (target.encoding === "utf-8") {
    assertWellFormed(text, "text");
    const bytes = Buffer.from(text, "utf8");
    return target.bom ? Buffer.concat([UTF8_BOM, bytes]) : bytes;
  }
  const le = Buffer.from(text, "utf16le");
  if (target.encoding === "utf-16le") return Buffer.concat([UTF16LE_BOM, le]);
  return Buffer.concat([UTF16BE_BOM, le.swap16()]);
}

/** `text` without one leading U+FEFF. */
export function stripLeadingBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Rewrites every line break of `text` ("\r\n" or a lone "\n") as `eol`. A lone "\r" is left
 * alone, so no "\r\r\n" can appear (C08).
 */
export function applyEol(text: string, eol: "lf" | "crlf"): string {
  return text.replace(/\r?\n/g, eol === "crlf" ? "\r\n" : "\n");
}

/**
 * Refuses strings holding an unpaired UTF-16 surrogate (possible in JSON: "\ud800"); UTF-8 cannot
 * hold one and Node would write EF BF BD instead (C06).
 *
 * @param what the argument's name, for the message
 * @throws ToolError `invalid_arguments` with detail {reason: "lone_surrogate", argument}
 */
export function assertWellFormed(s: string, what: string): void {
  if (LONE_SURROGATE.test(s)) {
    throw new ToolError("invalid_arguments", `${what} contains an unpaired UTF-16 surrogate, which cannot be written as UTF-8.`, {
      reason: "lone_surrogate",
      argument: what,
    });
  }
}

/**
 * @throws ToolError `binary_file` with detail {reason: "nul_byte", size_bytes} when `profile.binary`
 */
export function assertTextual(bytes: Buffer, profile: TextProfile): void {
  if (profile.binary) {
    throw new ToolError("binary_file", `The file is binary (it contains NUL bytes; ${bytes.length} bytes).`, {
      reason: "nul_byte",
      size_bytes: bytes.length,
    });
  }
}

/**
 * A file's body as a string that string operations can edit and that turns back into bytes
 * exactly: decoded text for valid UTF-8 and UTF-16, and for UTF-8 with invalid bytes a "byte
 * string" (one char per byte, latin1) so an edit is a byte-exact splice (C06). Line breaks are
 * "\r"/"\n" in both forms, so line numbers and EOL handling work the same way.
 */
export interface EditableText {
  /** The body without its BOM. */
  text: string;
  profile: TextProfile;
  /** True when `text` is a byte string (the file has invalid UTF-8). */
  byteMode: boolean;
  /** Converts an agent's string into the domain of `text` (its UTF-8 bytes in byte mode). */
  fromAgent(s: string): string;
  /** Converts a piece of `text` into readable text for messages (invalid bytes as U+FFFD). */
  toDisplay(s: string): string;
  /** Encodes an edited `text` back into file bytes, with the original BOM and encoding. */
  toBytes(text: string): Buffer;
}

/**
 * Opens `bytes` for editing (see `EditableText`).
 *
 * @throws ToolError `binary_file` (reason "nul_byte"); `encoding_unsupported` (reason
 *   "utf16_odd_length") for UTF-16 that does not decode exactly
 */
export function editableText(bytes: Buffer): EditableText {
  const profile = profileText(bytes);
  assertTextual(bytes, profile);
  const target = { encoding: profile.encoding, bom: profile.bom };
  if (profile.encoding === "utf-8" && !profile.valid) {
    const bom = bytes.subarray(0, profile.bomLength);
    return {
      text: bytes.subarray(profile.bomLength).toString("latin1"),
      profile,
      byteMode: true,
      fromAgent: (s) => Buffer.from(s, "utf8").toString("latin1"),
      toDisplay: (s) => Buffer.from(s, "latin1").toString("utf8"),
      toBytes: (text) => Buffer.concat([bom, Buffer.from(text, "latin1")]),
    };
  }
  return {
    text: decodeText(bytes, profile),
    profile,
    byteMode: false,
    fromAgent: (s) => s,
    toDisplay: (s) => s,
    toBytes: (text) => encodeText(text, target),
  };
}
