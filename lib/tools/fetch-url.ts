import { z } from "zod";
import { ToolError } from "@/lib/errors";
import { htmlToText } from "@/lib/net/html-to-text";
import { pinnedFetch, type RedirectHop } from "@/lib/net/pinned-fetch";
import { decodeBody, isHtml, isTextBody, parseContentType } from "@/lib/net/response-text";
import { canonicalUrl, parseFetchUrl } from "@/lib/net/url-target";
import { defineTool } from "@/lib/tools/define-tool";
import { MASKED_OUTPUT_NOTE } from "@/lib/redact";
import { sliceCodePoints } from "@/lib/unicode";

/** Defaults and bounds. Bytes, characters, milliseconds. */
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 120_000;
const MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_CHARS = 50_000;
const MAX_MAX_CHARS = 1_000_000;
const MAX_REDIRECTS = 5;
const MAX_HEADERS = 50;
/** Sent unless the agent sets its own (header names compared case-insensitively). */
const DEFAULT_HEADERS: Record<string, string> = {
  "user-agent": "agent-reach/0.1 (fetch_url)",
  accept: "text/html, application/json;q=0.9, */*;q=0.8",
};

/** Request headers an agent may not set: framing, hop-by-hop and ones the client manages (RFC 9110 §7.6.1, Fetch "forbidden request-header"). */
const FORBIDDEN_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "keep-alive",
  "expect",
  "accept-encoding",
  "proxy-authorization",
  "proxy-connection",
]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Response headers returned to the agent; the rest (Set-Cookie, internal ones) are left out. */
const SAFE_RESPONSE_HEADERS = [
  "content-type",
  "content-length",
  "content-language",
  "content-disposition",
  "content-encoding",
  "last-modified",
  "etag",
  "cache-control",
  "expires",
  "age",
  "date",
  "location",
  "retry-after",
  "link",
  "vary",
  "server",
  "www-authenticate",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "ratelimit",
  "ratelimit-policy",
];

/** Arguments of fetch_url. */
export const FetchUrlInput = z
  .object({
    url: z
      .string()
      .min(1)
      .max(8192)
      .describe("Absolute http:// or https:// URL to fetch (e.g. \"https://docs.python.org/3/library/json.html\"). No user:password@ in it: send credentials in headers."),
    method: z.enum(["GET", "HEAD"]).default("GET").describe("GET (default) for the body, HEAD for status and headers only."),
    headers: z
      .record(
        z.string().regex(HEADER_NAME, "not a valid header name"),
        z.string().max(8192).regex(/^[^\r\n\0]*$/, "header values cannot contain CR, LF or NUL"),
      )
      .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
      .refine((h) => Object.keys(h).every((name) => !FORBIDDEN_HEADERS.has(name.toLowerCase())), {
        message: `these headers are set by the client and cannot be sent: ${[...FORBIDDEN_HEADERS].join(", ")}`,
      })
      .optional()
      .describe('Extra request headers, e.g. {"Accept": "application/json", "Authorization": "Bearer …"}. Authorization and Cookie are dropped when a redirect leaves the origin.'),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .optional()
      .describe(`Time limit for the whole fetch in milliseconds: DNS, connection, redirects and body (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS}).`),
    timeout: z
      .number()
      .positive()
      .max(MAX_TIMEOUT_MS / 1000)
      .optional()
      .describe("Same limit in seconds (e.g. 5); timeout_ms wins when both are given."),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_BYTES)
      .default(MAX_BYTES)
      .describe(`Most body bytes read, after decompression (default and maximum ${MAX_BYTES} = 5 MiB); reading stops there and truncated is true.`),
    max_chars: z
      .number()
      .int()
      .min(1)
      .max(MAX_MAX_CHARS)
      .default(DEFAULT_MAX_CHARS)
      .describe(`Most characters of content returned (default ${DEFAULT_MAX_CHARS}); original_length tells how long the text was.`),
    follow_redirects: z
      .boolean()
      .default(true)
      .describe(`Follow redirects (up to ${MAX_REDIRECTS}); each hop is checked like the first URL. false returns the redirect response itself.`),
    extract_text: z
      .boolean()
      .default(true)
      .describe("For HTML responses, return readable text (headings, paragraphs, lists, [links](url); scripts, styles and navigation removed). false returns the raw HTML."),
  })
  .strict();

/** The `data` of a successful fetch_url call. */
export interface FetchUrlOutput {
  /** Final URL, after redirects. */
  url: string;
  status: number;
  /** A safe subset of the response headers (names in lower case). */
  headers: Record<string, string>;
  /** Media type ("text/html"), or null when the server sent none. */
  content_type: string | null;
  /** Encoding the body was decoded with (WHATWG name, e.g. "utf-8", "windows-1252"). */
  charset: string;
  /** The body as text (HTML reduced to text when extract_text), at most max_chars characters. */
  content: string;
  /** True when content does not hold the whole body: cut at max_chars, or reading stopped at max_bytes. */
  truncated: boolean;
  /** Characters of the text before the max_chars cut (of the bytes read, when max_bytes stopped reading). */
  original_length: number;
  /** Body bytes read (after decompression). */
  bytes: number;
  /** True when reading stopped at max_bytes with more body to come. */
  max_bytes_reached: boolean;
  /** True when content is text extracted from HTML. */
  extracted_text: boolean;
  redirects: RedirectHop[];
  duration_ms: number;
}

/** JSON Schema source of fetch_url's `data`. */
const FetchUrlOutputSchema = z.looseObject({
  url: z.string(),
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  content_type: z.string().nullable(),
  charset: z.string(),
  content: z.string(),
  truncated: z.boolean(),
  original_length: z.number().int(),
  bytes: z.number().int(),
  max_bytes_reached: z.boolean(),
  extracted_text: z.boolean(),
  redirects: z.array(z.looseObject({ url: z.string(), status: z.number().int(), location: z.string() })),
  duration_ms: z.number(),
});

/**
 * fetch_url: one HTTP(S) GET or HEAD with SSRF protection (docs/field-cases.md
 * C25). The connection can only reach public addresses: the host is resolved once inside the
 * HTTP client's connection hook, every address is checked and the socket is pinned to them
 * (lib/net/pinned-fetch.ts); every redirect hop is checked the same way.
 */
export const fetchUrlTool = defineTool({
  name: "fetch_url",
  title: "Fetch URL",
  description: [
    "Fetch an http(s) URL and get its body as text: documentation pages, API responses (JSON), raw files. Use this instead of curl or wget in run_command.",
    "HTML is reduced to readable text by default (headings as #, lists, links as [text](url)); pass extract_text: false for the raw HTML. Other text types (JSON, XML, CSV, plain text) come back as sent, decoded from their charset. Binary bodies (images, archives, PDFs) are refused with binary_file.",
    `Only public internet addresses can be reached: loopback, private, link-local, cloud metadata and other internal addresses are refused with ssrf_blocked (also when a redirect or DNS leads there). Up to ${MAX_REDIRECTS} redirects are followed; the hops are listed in redirects.`,
    `Limits: timeout_ms (default ${DEFAULT_TIMEOUT_MS}) for the whole fetch, max_bytes (default 5 MiB) of body read, max_chars (default ${DEFAULT_MAX_CHARS}) of content returned; when truncated is true, content is the beginning only.`,
    "A status of 4xx or 5xx is still a result (check status); network failures are fetch_failed (detail.reason), time-outs fetch_timeout.",
    MASKED_OUTPUT_NOTE,
  ].join("\n"),
  input: FetchUrlInput,
  risk: "network",
  output: FetchUrlOutputSchema,
  subject: (args) => ({ url: canonicalUrl(args.url) }),
  async preview(args) {
    // Refuses what the URL alone shows blocked (loopback, private or metadata addresses written as
    // literals, localhost names, bad ports) before it reaches a reviewer. A host name is NOT looked
    // up here: the preview runs before anyone decides, and a DNS query is itself a request that
    // carries the name to its owner (`<secret>.attacker.example`). Names are resolved, checked and
    // pinned when the call runs (pinnedFetch).
    const target = parseFetchUrl(args.url, "argument");
    const warnings = [target.literal ? `Connects to ${target.host}` : `Connects to ${target.host} (its addresses are resolved and checked when the call runs)`];
    if (args.headers && Object.keys(args.headers).some((h) => ["authorization", "cookie"].includes(h.toLowerCase()))) {
      warnings.push("Sends credentials (Authorization or Cookie header).");
    }
    return { warnings };
  },
  async run(args, ctx): Promise<FetchUrlOutput> {
    const started = performance.now();
    ctx.note({ target: canonicalUrl(args.url) });
    const res = await pinnedFetch({
      url: args.url,
      method: args.method,
      headers: { ...DEFAULT_HEADERS, ...lowerCaseNames(args.headers ?? {}) },
      timeoutMs: args.timeout_ms ?? (args.timeout !== undefined ? Math.ceil(args.timeout * 1000) : DEFAULT_TIMEOUT_MS),
      maxBytes: args.max_bytes,
      followRedirects: args.follow_redirects,
      maxRedirects: MAX_REDIRECTS,
      signal: ctx.signal,
    });
    const type = parseContentType(res.headers.get("content-type"));
    if (!isTextBody(type, res.body)) {
      throw new ToolError("binary_file", `${res.url} returned binary content (${type.essence ?? "unknown type"}); fetch_url returns text only.`, {
        url: res.url,
        status: res.status,
        content_type: type.essence,
        bytes: res.body.length,
      });
    }
    const decoded = decodeBody(res.body, type, !res.maxBytesReached);
    const extract = args.extract_text && isHtml(type);
    const text = extract ? htmlToText(decoded.text, res.url) : decoded.text;
    const content = sliceCodePoints(text, 0, args.max_chars);
    const truncated = res.maxBytesReached || content.length < text.length;
    ctx.note({
      target: res.url,
      bytesOut: Buffer.byteLength(content),
      truncated,
      summary: `${args.method} ${res.status} ${res.url} (${res.body.length} bytes${type.essence ? `, ${type.essence}` : ""})`,
    });
    return {
      url: res.url,
      status: res.status,
      headers: safeHeaders(res.headers),
      content_type: type.essence,
      charset: decoded.charset,
      content,
      truncated,
      original_length: text.length,
      bytes: res.body.length,
      max_bytes_reached: res.maxBytesReached,
      extracted_text: extract,
      redirects: res.redirects,
      duration_ms: Math.round(performance.now() - started),
    };
  },
});

function lowerCaseNames(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function safeHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of SAFE_RESPONSE_HEADERS) {
    const value = headers.get(name);
    if (value !== null) out[name] = value.slice(0, 2000);
  }
  return out;
}
