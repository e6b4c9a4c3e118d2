import { MIMEType } from "node:util";
import { isBinaryFileSync } from "isbinaryfile";

/**
 * Turning a response body into text: media type, charset (WHATWG Encoding Standard labels,
 * decoded with the platform's TextDecoder) and whether the body is text at all.
 */

/** A parsed Content-Type header. */
export interface ContentType {
  /** "type/subtype" in lower case, or null when the header is missing or malformed. */
  essence: string | null;
  /** The charset parameter as sent, or null. */
  charset: string | null;
}

/** Media types that are text whatever their bytes look like (besides text/*, +json, +xml). */
const TEXT_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/x-ndjson",
  "application/jsonl",
  "application/csv",
  "application/x-www-form-urlencoded",
  "application/graphql",
  "application/sql",
  "application/x-sh",
]);

/** How many leading bytes are searched for a `<meta charset>` (HTML spec, prescan: 1024). */
const PRESCAN_BYTES = 1024;

/**
 * Parses a Content-Type header (RFC 9110 §8.3).
 *
 * @param header the header value, or null
 * @returns essence and charset; both null when the header is missing or does not parse
 */
export function parseContentType(header: string | null): ContentType {
  if (header === null) return { essence: null, charset: null };
  try {
    const mime = new MIMEType(header);
    return { essence: mime.essence, charset: mime.params.get("charset") };
  } catch {
    return { essence: null, charset: null };
  }
}

/** True for HTML media types (text/html, application/xhtml+xml). */
export function isHtml(type: ContentType): boolean {
  return type.essence === "text/html" || type.essence === "application/xhtml+xml";
}

/**
 * True when the body should be returned as text: a textual media type, or (for any other or a
 * missing type) bytes that do not look binary (isbinaryfile's heuristic).
 *
 * @param type the response's content type
 * @param body the body bytes read
 */
export function isTextBody(type: ContentType, body: Buffer): boolean {
  const essence = type.essence;
  if (essence !== null && (essence.startsWith("text/") || essence.endsWith("+json") || essence.endsWith("+xml") || TEXT_TYPES.has(essence))) {
    return true;
  }
  return body.length === 0 || !isBinaryFileSync(body, body.length);
}

/**
 * Decodes a body to text. The charset is chosen as a browser would (WHATWG Encoding Standard,
 * HTML "determining the character encoding"): a byte order mark first, then the Content-Type
 * charset, then for HTML a `<meta charset>` in the first 1024 bytes, for XML the declaration's
 * `encoding`, else UTF-8. An unknown label falls back to UTF-8. Invalid sequences become U+FFFD.
 *
 * @param body the bytes read
 * @param type the response's content type
 * @param complete false when the body was cut at a byte limit: a multi-byte character split by
 *   the cut is dropped instead of becoming U+FFFD
 * @returns the text and the canonical name of the encoding used (e.g. "utf-8", "windows-1252")
 */
export function decodeBody(body: Buffer, type: ContentType, complete: boolean): { text: string; charset: string } {
  const label = bomCharset(body) ?? type.charset ?? sniffDeclaredCharset(body, type);
  const decoder = decoderFor(label);
  // TextDecoder strips a BOM matching its encoding (ignoreBOM defaults to false).
  const text = decoder.decode(body, { stream: !complete });
  return { text, charset: decoder.encoding };
}

function bomCharset(body: Buffer): string | null {
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) return "utf-16be";
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) return "utf-16le";
  return null;
}

function sniffDeclaredCharset(body: Buffer, type: ContentType): string | null {
  const head = body.subarray(0, PRESCAN_BYTES).toString("latin1");
  if (type.essence === null || isHtml(type)) {
    const meta = /<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_:.+-]+)/i.exec(head);
    // A meta declaring UTF-16 in bytes that were readable as ASCII means UTF-8 (HTML spec).
    if (meta) return /^utf-16/i.test(meta[1]) ? "utf-8" : meta[1];
  }
  const xml = /^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head);
  return xml ? xml[1] : null;
}

function decoderFor(label: string | null): TextDecoder {
  if (label !== null) {
    try {
      return new TextDecoder(label.trim());
    } catch {
      // Unknown label (RangeError): fall through to UTF-8.
    }
  }
  return new TextDecoder("utf-8");
}
