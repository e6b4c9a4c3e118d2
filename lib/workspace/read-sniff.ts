import { isBinaryFile } from "isbinaryfile";
import { ToolError } from "@/lib/errors";
import { detectBom, type TextEncoding } from "@/lib/workspace/text";

/**
 * Content sniffing for reads (field case C10): which text encoding a file is in, how long its
 * byte-order mark is, and whether it is binary. Decided from the first `SNIFF_BYTES` bytes only.
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
 * A UTF-16 BOM (FF FE / FE FF) selects UTF-16 and the sample must then decode without U+0000; a
 * UTF-8 BOM or none selects UTF-8 and the sample after the BOM must hold no NUL byte and, when it
 * is at least `VERDICT_MIN_BYTES` long, pass isbinaryfile's verdict (which allows a multi-byte
 * character cut at the sample's end, so CJK text stays text). A UTF-32 BOM is no BOM for `detectBom` (lib/workspace/text.ts), so UTF-32
 * text is binary by its NUL bytes, as for the write tools.
 *
 * @param sample up to `SNIFF_BYTES` bytes from offset 0
 * @param sizeBytes the file's size in bytes (for the error detail)
 * @throws ToolError `binary_file` with detail `{size_bytes, reason: "nul_byte" | "non_text_bytes"}`
 */
export async function sniffText(sample: Buffer, sizeBytes: number): Promise<Sniffed> {
  const bom = detectBom(sample);
  if (bom && bom.encoding !== "utf-8") {
    const units = sample.subarray(bom.length, bom.length + ((sample.length - bom.length) & ~1));
    if (new TextDecoder(bom.encoding).decode(units).includes("\u0000")) throw binary(sizeBytes, "nul_byte");
    return { encoding: bom.encoding, bomLength: bom.length };
  }
  const bomLength = bom?.length ?? 0;
  const body = sample.subarray(bomLength);
  if (body.includes(0)) throw binary(sizeBytes, "nul_byte");
  if (body.length >= VERDICT_MIN_BYTES && (await isBinaryFile(body, body.length))) throw binary(sizeBytes, "non_text_bytes");
  return { encoding: "utf-8", bomLength };
}
