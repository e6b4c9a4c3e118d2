import { isUtf8 } from "node:buffer";
import crypto from "node:crypto";
import { ToolError } from "@/lib/errors";
import {
  chooseEncoding,
  decodeBytes,
  encodeString,
  encodeUnchecked,
  isUnicode,
  roundTrips,
  SURE_CONFIDENCE,
  type EncodingName,
  type EncodingSource,
} from "@/lib/workspace/encoding";
import { detectEol, type Eol } from "@/lib/workspace/line-endings";

/**
 * Text encoding, byte order marks and line endings of file contents, and the exact way back from
 * text to bytes (field cases C06, C07, C08, C10). Which encoding a file is in is decided by
 * lib/workspace/encoding.ts (BOM, call argument, strict UTF-8, workspace setting, detector).
 *
 * The rule every writer follows: bytes that the agent did not ask to change come out exactly as
 * they went in. Decoding never replaces bytes silently on a path that writes; text that cannot be
 * decoded exactly is either edited as bytes (invalid UTF-8 that no other encoding explains, C06)
 * or refused with `encoding_unsupported`. An edit is spliced into the original bytes, and the
 * bytes kept around it are checked to be identical to what was there.
 */

// Line endings have their own pure module (the dashboard's text box uses it too).
export { detectEol, type Eol } from "@/lib/workspace/line-endings";

/** Canonical name of an encoding we read and write back ("utf-8", "utf-16le", "gbk", "windows-1252", …). */
export type TextEncoding = EncodingName;

/** How a caller steers the encoding decision (both canonical names, see lib/workspace/encoding.ts). */
export interface EncodingOptions {
  /** Named on the tool call: wins over everything but a BOM. */
  requested?: EncodingName | null;
  /** The workspace's legacy encoding from the configuration: wins over a detector's guess. */
  legacy?: EncodingName | null;
}

/** What a file's bytes are, as far as writing them back is concerned. */
export interface TextProfile {
  /** The encoding the bytes are read and written in (see EncodingOptions for the order of evidence). */
  encoding: TextEncoding;
  /** 0..1: how sure the decision is (1 for a BOM, valid UTF-8, an argument or the workspace setting). */
  confidence: number;
  /** Where the decision came from. */
  source: EncodingSource;
  /** False for a detector's guess below its threshold: new non-ASCII text is not written in it. */
  sure: boolean;
  /** The bytes start with a byte order mark of `encoding`. */
  bom: boolean;
  /** Size of that BOM in bytes (0, 2 or 3). */
  bomLength: number;
  /** A NUL byte in a file that is not UTF-16 with a BOM (C10: "nul_byte"; CJK text is never binary). */
  binary: boolean;
  /**
   * The body (after the BOM) decodes exactly: valid UTF-8 (WHATWG), UTF-16 of even length, or a
   * legacy encoding in which it decodes and encodes back to the same bytes. False for binary files.
   */
  valid: boolean;
  /** Line-ending style of the body (on the decoded text for UTF-16). */
  eol: Eol;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16LE_BOM = Buffer.from([0xff, 0xfe]);
const UTF16BE_BOM = Buffer.from([0xfe, 0xff]);

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
 * Profiles a file's bytes: BOM, encoding, binary (NUL byte), exact decodability and line endings.
 * Scans the whole buffer for UTF-8 validity (no sample that could end inside a multi-byte
 * character, C10); a detector, when needed, looks at a bounded sample.
 *
 * @throws ToolError `encoding_unsupported` when `opts.requested` contradicts the BOM (reason
 *   "bom_mismatch") or asks for UTF-16 without a BOM (reason "utf16_without_bom")
 */
export function profileText(bytes: Buffer, opts: EncodingOptions = {}): TextProfile {
  // One write profiles the same buffers several times (plan, diff, result); legacy decisions decode the whole file.
  const key = `${opts.requested ?? ""}|${opts.legacy ?? ""}`;
  let cached = profiles.get(bytes);
  const hit = cached?.get(key);
  if (hit) return hit;
  const profile = computeProfile(bytes, opts);
  if (!cached) profiles.set(bytes, (cached = new Map()));
  cached.set(key, profile);
  return profile;
}

/** True when `bytes` are binary as `profileText` judges it (a NUL byte, unless the file is UTF-16 with a BOM), without choosing an encoding. */
export function isBinaryBytes(bytes: Buffer): boolean {
  const bom = detectBom(bytes);
  if (bom && bom.encoding !== "utf-8") return false;
  return bytes.subarray(bom?.length ?? 0).includes(0);
}

/** Profiles by buffer and options. Buffers are never changed after they are profiled (file contents read or planned). */
const profiles = new WeakMap<Buffer, Map<string, TextProfile>>();

function computeProfile(bytes: Buffer, opts: EncodingOptions): TextProfile {
  const bom = detectBom(bytes);
  const bomLength = bom?.length ?? 0;
  const body = bytes.subarray(bomLength);
  if (bom && bom.encoding !== "utf-8") {
    const choice = chooseEncoding(body, bom, { ...opts, complete: true });
    const valid = body.length % 2 === 0;
    return {
      encoding: choice.encoding,
      confidence: 1,
      source: "bom",
      sure: true,
      bom: true,
      bomLength,
      binary: false,
      valid,
      eol: valid ? detectEol(decodeUtf16(body, bom.encoding as "utf-16le" | "utf-16be")) : "none",
    };
  }
  if (body.includes(0)) {
    if (opts.requested && bom) chooseEncoding(body, bom, { ...opts, complete: true });
    return { encoding: "utf-8", confidence: 0, source: "fallback", sure: true, bom: bom !== null, bomLength, binary: true, valid: false, eol: "none" };
  }
  const choice = chooseEncoding(body, bom, { ...opts, complete: true });
  // "utf8", "detected" and "workspace_setting" were decided on an exact decoding of the whole body.
  const valid =
    choice.source === "bom" ? isUtf8(body) : choice.source === "argument" ? roundTrips(body, choice.encoding) : choice.source !== "fallback";
  return {
    encoding: choice.encoding,
    confidence: choice.confidence,
    source: choice.source,
    sure: choice.sure,
    bom: bom !== null,
    bomLength,
    binary: false,
    valid,
    // Every supported encoding is ASCII-compatible for "\r" and "\n" (never a trail byte).
    eol: detectEol(body.toString("latin1")),
  };
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
 *   `encoding_unsupported` (reason "invalid_utf8", "utf16_odd_length" or "undecodable") when the
 *   bytes do not decode exactly in the profile's encoding
 */
export function decodeText(bytes: Buffer, profile: TextProfile = profileText(bytes)): string {
  assertTextual(bytes, profile);
  const body = bytes.subarray(profile.bomLength);
  if (!profile.valid) {
    const reason = profile.encoding === "utf-8" ? "invalid_utf8" : isUnicode(profile.encoding) ? "utf16_odd_length" : "undecodable";
    throw new ToolError(
      "encoding_unsupported",
      `The file is not valid ${profile.encoding} text${reason === "undecodable" ? " (its bytes do not decode and encode back exactly)" : ""}.`,
      { reason, encoding: profile.encoding },
    );
  }
  return decodeBytes(body, profile.encoding);
}

/**
 * Decodes for display only (diffs, messages): bytes that do not decode become U+FFFD, the BOM is
 * dropped. Never use the result to write a file.
 */
export function decodeForDisplay(bytes: Buffer, profile: TextProfile = profileText(bytes)): string {
  const body = bytes.subarray(profile.bomLength);
  if (profile.encoding === "utf-16le" || profile.encoding === "utf-16be") return decodeUtf16(body.subarray(0, body.length - (body.length % 2)), profile.encoding);
  return decodeBytes(body, profile.encoding);
}

/**
 * Encodes `text` in `encoding`, with that encoding's BOM in front when `bom` is true (UTF-16 is
 * always written with its BOM: without one it could not be recognised again; legacy encodings
 * have none). `text` is encoded as is; callers that take text from an agent drop a leading U+FEFF
 * first (`stripLeadingBom`), so a BOM is never doubled (C07).
 *
 * @param argument the argument `text` came from, for the error
 * @throws ToolError `invalid_arguments` (reason "lone_surrogate") when `text` holds an unpaired
 *   surrogate and `encoding` is not UTF-16 (UTF-8 would get EF BF BD, C06); `encoding_unsupported`
 *   (reason "unrepresentable", detail.characters) when `encoding` cannot hold a character of `text`
 */
export function encodeText(text: string, target: { encoding: TextEncoding; bom: boolean }, argument = "text"): Buffer {
  if (target.encoding === "utf-8") {
    assertWellFormed(text, argument);
    const bytes = Buffer.from(text, "utf8");
    return target.bom ? Buffer.concat([UTF8_BOM, bytes]) : bytes;
  }
  const le = Buffer.from(text, "utf16le");
  if (target.encoding === "utf-16le") return Buffer.concat([UTF16LE_BOM, le]);
  if (target.encoding === "utf-16be") return Buffer.concat([UTF16BE_BOM, le.swap16()]);
  assertWellFormed(text, argument);
  return encodeString(text, target.encoding, argument);
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
  if (!s.isWellFormed()) {
    throw new ToolError("invalid_arguments", `${what} contains an unpaired UTF-16 surrogate, which cannot be written as UTF-8.`, {
      reason: "lone_surrogate",
      argument: what,
    });
  }
}

/**
 * Refuses non-ASCII `text` for a file whose encoding is a guess below the detector's threshold:
 * its bytes would depend on the guess, and a wrong guess leaves the file in two encodings. ASCII
 * text is the same bytes in every supported legacy encoding, so it is always allowed.
 *
 * @throws ToolError `encoding_unsupported` with detail {reason: "uncertain_encoding", encoding
 *   (the guess), confidence, threshold, argument}
 */
export function assertSureEnough(doc: { profile: TextProfile }, text: string, argument: string): void {
  const p = doc.profile;
  if (p.sure || !/[^\x00-\x7f]/.test(text)) return;
  throw new ToolError(
    "encoding_unsupported",
    `The file is not UTF-8, and its encoding could only be guessed (${p.encoding}, confidence ${p.confidence.toFixed(2)} < ${SURE_CONFIDENCE}); ` +
      `${argument} holds non-ASCII characters, whose bytes depend on that guess, so nothing was written. ` +
      `If ${p.encoding} is right (check the text read_file shows), repeat the call with encoding: "${p.encoding}"; otherwise pass the file's real encoding.`,
    { reason: "uncertain_encoding", encoding: p.encoding, confidence: Number(p.confidence.toFixed(3)), threshold: SURE_CONFIDENCE, argument },
  );
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

/** A replacement inside `EditableText.text`: [start, end) in UTF-16 units (bytes in byte mode) becomes `text`. */
export interface Splice {
  start: number;
  end: number;
  /** Replacement, in the domain of `EditableText.text`. */
  text: string;
}

/**
 * A file's body as a string that string operations can edit and that turns back into bytes
 * exactly: decoded text for files that decode exactly (UTF-8, UTF-16, legacy encodings), and for
 * UTF-8 with invalid bytes that no other encoding explains a "byte string" (one char per byte,
 * latin1) so an edit is a byte-exact splice (C06). Line breaks are "\r"/"\n" in both forms, so
 * line numbers and EOL handling work the same way.
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
  /**
   * The file's bytes with `splices` (sorted, not overlapping) applied: the original bytes between
   * them, checked to be exactly the encoding of the text they stand for, and each replacement
   * encoded in the file's encoding. Nothing outside the replaced spans can change.
   *
   * @param argument the argument the replacements came from, for errors
   * @throws ToolError `encoding_unsupported` (reason "unrepresentable") for a replacement the
   *   encoding cannot hold; (reason "not_round_trip") when kept bytes would not come out the same
   */
  spliceBytes(splices: Splice[], argument?: string): Buffer;
}

/**
 * Opens `bytes` for editing (see `EditableText`).
 *
 * @param opts the encoding named on the call and the workspace's legacy encoding
 * @throws ToolError `binary_file` (reason "nul_byte"); `encoding_unsupported` (reason
 *   "utf16_odd_length", "undecodable", "bom_mismatch", "utf16_without_bom") when the file does
 *   not decode exactly in the encoding chosen for it
 */
export function editableText(bytes: Buffer, opts: EncodingOptions = {}): EditableText {
  const profile = profileText(bytes, opts);
  assertTextual(bytes, profile);
  const target = { encoding: profile.encoding, bom: profile.bom };
  const bom = bytes.subarray(0, profile.bomLength);
  const body = bytes.subarray(profile.bomLength);
  if (profile.encoding === "utf-8" && !profile.valid) {
    const latin1 = (s: string) => Buffer.from(s, "latin1");
    return {
      text: body.toString("latin1"),
      profile,
      byteMode: true,
      fromAgent: (s) => Buffer.from(s, "utf8").toString("latin1"),
      toDisplay: (s) => Buffer.from(s, "latin1").toString("utf8"),
      toBytes: (text) => Buffer.concat([bom, Buffer.from(text, "latin1")]),
      spliceBytes: (splices) => spliceInto(bom, body, body.toString("latin1"), splices, latin1, latin1),
    };
  }
  const text = decodeText(bytes, profile);
  const utf16 = profile.encoding === "utf-16le" || profile.encoding === "utf-16be";
  return {
    text,
    profile,
    byteMode: false,
    fromAgent: (s) => s,
    toDisplay: (s) => s,
    toBytes: (edited) => encodeText(edited, target),
    spliceBytes: (splices, argument = "new_string") =>
      spliceInto(bom, body, text, splices, (s) => encodeUnchecked(s, profile.encoding), (s) => {
        if (utf16) return encodeUnchecked(s, profile.encoding);
        assertWellFormed(s, argument);
        return encodeString(s, profile.encoding, argument);
      }),
  };
}

/**
 * Builds bom + body with `splices` applied to `text` (the decoding of `body`): every kept piece
 * of text must encode to exactly the bytes at its place in `body`, which are then copied from
 * `body` itself.
 */
function spliceInto(
  bom: Buffer,
  body: Buffer,
  text: string,
  splices: Splice[],
  encodeKept: (s: string) => Buffer,
  encodeNew: (s: string) => Buffer,
): Buffer {
  const parts: Buffer[] = [bom];
  let at = 0;
  let from = 0;
  const skip = (end: number, keep: boolean) => {
    const segment = text.slice(from, end);
    const bytes = encodeKept(segment);
    if ((segment !== "" && bytes.length === 0) || !bytes.equals(body.subarray(at, at + bytes.length))) throw notRoundTrip(at);
    if (keep) parts.push(body.subarray(at, at + bytes.length));
    at += bytes.length;
    from = end;
  };
  for (const s of splices) {
    skip(s.start, true);
    skip(s.end, false);
    parts.push(encodeNew(s.text));
  }
  skip(text.length, true);
  if (at !== body.length) throw notRoundTrip(at);
  return Buffer.concat(parts);
}

function notRoundTrip(byteOffset: number): ToolError {
  return new ToolError(
    "encoding_unsupported",
    "The file's bytes do not encode back exactly from their decoded text near this edit, so it cannot be spliced without changing bytes you did not ask to change. Nothing was written. Use run_command with a tool that edits bytes, or write the whole file with write_file.",
    { reason: "not_round_trip", byte_offset: byteOffset },
  );
}
