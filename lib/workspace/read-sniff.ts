import { isBinaryFile } from "isbinaryfile";
import { ToolError } from "@/lib/errors";
import { chooseEncoding, SINGLE_BYTE, type EncodingSource } from "@/lib/workspace/encoding";
import { detectBom, type EncodingOptions, type TextEncoding } from "@/lib/workspace/text";

/**
 * Content sniffing for reads (field case C10): which text encoding a file is in, how long its
 * byte-order mark is, and whether it is binary. Decided from the first `SNIFF_BYTES` bytes only
 * (the full pass of read-page.ts looks again when later bytes are not valid UTF-8).
 */

/** Bytes read from the start of a file to decide its encoding and whether it is binary. */
export const SNIFF_BYTES = 8192;

/**
 * isbinaryfile judges by the share of suspicious bytes in its first 512; below that a single
 * Latin-1 byte in a short note would make a text file "binary", so shorter samples are judged
 * by NUL bytes only.
 */
const VERDICT_MIN_BYTES = 512;

/** Result of sniffing the start of a file. */
export interface Sniffed {
  encoding: TextEncoding;
  /** Length of the byte-order mark in bytes (0, 2 or 3); text starts after it. */
  bomLength: number;
  /** 0..1, how sure the encoding is. */
  confidence?: number;
  /** Where the encoding came from (BOM, argument, UTF-8, workspace setting, detector). */
  source?: EncodingSource;
  /** False for a detector's guess below its threshold. */
  sure?: boolean;
}

function binary(sizeBytes: number, reason: "nul_byte" | "non_text_bytes"): ToolError {
  const message =
    reason === "nul_byte"
      ? "The file is binary (it contains NUL bytes); read_file returns text only."
      : "The file looks binary (too many non-text bytes); read_file returns text only.";
  return new ToolError("binary_file", message, { size_bytes: sizeBytes, reason });
}

/**
 * Decides how to read a file from its first bytes.
 *
 * A UTF-16 BOM (FF FE / FE FF) selects UTF-16 and the sample must then decode without U+0000.
 * Otherwise the sample after a UTF-8 BOM must hold no NUL byte, and the encoding is chosen by
 * lib/workspace/encoding.ts (argument, strict UTF-8, workspace setting, detector). Text that is
 * UTF-8, or that no encoding decodes exactly, or that only a single-byte encoding was guessed
 * for, must also pass isbinaryfile's verdict when the sample is at least `VERDICT_MIN_BYTES`
 * long (which allows a multi-byte character cut at the sample's end, so CJK text stays text).
 * Multi-byte legacy text (GBK, Shift_JIS, …) that decodes exactly is text: isbinaryfile would
 * call it binary. A UTF-32 BOM is no BOM for `detectBom` (lib/workspace/text.ts), so UTF-32 text
 * is binary by its NUL bytes, as for the write tools.
 *
 * @param sample up to `SNIFF_BYTES` bytes from offset 0
 * @param sizeBytes the file's size in bytes (for the error detail; the sample is the whole file when equal)
 * @param opts the encoding named on the call and the workspace's legacy encoding
 * @throws ToolError `binary_file` with detail `{size_bytes, reason: "nul_byte" | "non_text_bytes"}`;
 *   `encoding_unsupported` when `opts.requested` contradicts the BOM
 */
export async function sniffText(sample: Buffer, sizeBytes: number, opts: EncodingOptions = {}): Promise<Sniffed> {
  const bom = detectBom(sample);
  const complete = sample.length >= sizeBytes;
  if (bom && bom.encoding !== "utf-8") {
    const choice = chooseEncoding(sample.subarray(bom.length), bom, { ...opts, complete });
    const units = sample.subarray(bom.length, bom.length + ((sample.length - bom.length) & ~1));
    if (new TextDecoder(bom.encoding).decode(units).includes("\u0000")) throw binary(sizeBytes, "nul_byte");
    return { encoding: choice.encoding, bomLength: bom.length, confidence: 1, source: "bom", sure: true };
  }
  const bomLength = bom?.length ?? 0;
  const body = sample.subarray(bomLength);
  if (body.includes(0)) throw binary(sizeBytes, "nul_byte");
  const choice = chooseEncoding(body, bom, { ...opts, complete });
  const judged = choice.source === "utf8" || choice.source === "fallback" || (choice.source === "detected" && SINGLE_BYTE.has(choice.encoding));
  if (judged && body.length >= VERDICT_MIN_BYTES && (await isBinaryFile(body, body.length))) throw binary(sizeBytes, "non_text_bytes");
  return { encoding: choice.encoding, bomLength, confidence: choice.confidence, source: choice.source, sure: choice.sure };
}

