import type { LookupAddress, LookupOptions } from "node:dns";
import net from "node:net";
import tls from "node:tls";
import { Agent, buildConnector, fetch, type Response } from "undici";
import { ToolError, type ErrorReason } from "@/lib/errors";
import { classifyAddress, isLocalhostName } from "@/lib/net/address-policy";
import { fetchNetworkOptions, type ResolvedAddress } from "@/lib/net/network-options";
import { addressBlocked, parseFetchUrl, ssrfBlocked, type FetchTarget } from "@/lib/net/url-target";

/**
 * HTTP(S) requests whose connections can only reach allowed addresses (field case C25; OWASP
 * SSRF Prevention Cheat Sheet, "DNS rebinding"). The check lives inside the HTTP client's own
 * connection hook: undici's Agent `connect` option wraps undici's connector, refusing blocked IP
 * literals, and gives the socket a custom `lookup` that resolves the name once, checks EVERY
 * address, and hands the socket exactly those checked addresses. The socket therefore connects
 * to the address that was checked; a second DNS answer (rebinding) is never asked for. Every
 * redirect hop goes through the same agent and the same URL checks.
 */

/** One request. Sizes in bytes, durations in ms. */
export interface PinnedRequest {
  url: string;
  method: "GET" | "HEAD";
  /** Request headers (already validated by the caller). */
  headers: Record<string, string>;
  /** Budget for the whole call: DNS, connects, every hop and the body. */
  timeoutMs: number;
  /** Body bytes kept (after content decoding); reading stops there. */
  maxBytes: number;
  /**
   * Follow 301/302/303/307/308 up to `maxRedirects` hops. GET and HEAD keep their method on every
   * redirect (RFC 9110 §15.4); Authorization and Cookie are dropped when a hop leaves the origin.
   */
  followRedirects: boolean;
  maxRedirects: number;
  /** Aborts the request (server shutdown). */
  signal?: AbortSignal;
}

/** A redirect that was followed. */
export interface RedirectHop {
  /** The URL that answered with a redirect. */
  url: string;
  status: number;
  /** The absolute URL it pointed to. */
  location: string;
}

/** What came back from the last hop. */
export interface PinnedResponse {
  /** Final URL (after redirects). */
  url: string;
  /** Canonical host of the final URL. */
  host: string;
  status: number;
  headers: Headers;
  /** Body bytes read (decoded from Content-Encoding), at most `maxBytes`. */
  body: Buffer;
  /** True when reading stopped at `maxBytes` and more body followed. */
  maxBytesReached: boolean;
  redirects: RedirectHop[];
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials; dropped when a redirect leaves the origin (Fetch standard, 4.4). */
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

/**
 * Resolves a host name and checks every address it has (mixed public + private answers are
 * refused as a whole).
 *
 * @param host canonical host name (not an IP literal; trailing dot removed)
 * @returns the checked addresses, canonical text, in resolver order
 * @throws ToolError `ssrf_blocked` (detail {reason, address, host, addresses, embedded_ipv4?}),
 *   `fetch_failed` (reason "dns") when the name does not resolve
 */
export async function resolveAllowed(host: string): Promise<ResolvedAddress[]> {
  const options = fetchNetworkOptions();
  if (isLocalhostName(host)) throw ssrfBlocked("localhost", { host });
  let answers: ResolvedAddress[];
  try {
    answers = await options.resolve(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "EDNS";
    throw new ToolError("fetch_failed", `Could not resolve ${host} (${code}).`, { reason: "dns", code, host }, { cause: err });
  }
  if (answers.length === 0) {
    throw new ToolError("fetch_failed", `${host} has no addresses.`, { reason: "dns", code: "ENODATA", host });
  }
  const verdicts = answers.map((a) => classifyAddress(a.address, options));
  const blocked = verdicts.find((v) => !v.allowed);
  if (blocked) throw addressBlocked(blocked, host, { addresses: verdicts.map((v) => v.address) });
  return verdicts.map((v) => ({ address: v.address, family: net.isIPv6(v.address) ? 6 : 4 }));
}

/**
 * Checks a URL the way a fetch would, without connecting: the static URL checks, then (for a
 * host name) resolution and classification of every address. For previews shown to a reviewer
 * and for refusing a blocked call before it is queued; the connection hook checks again when
 * the request really runs.
 *
 * @param raw the URL as sent
 * @returns the canonical target and the addresses it resolves to
 * @throws as `parseFetchUrl` and `resolveAllowed`
 */
export async function assessFetchUrl(raw: string): Promise<{ target: FetchTarget; addresses: string[] }> {
  const target = parseFetchUrl(raw, "argument");
  const addresses = target.literal ? [target.host] : (await resolveAllowed(target.host)).map((a) => a.address);
  return { target, addresses };
}

/**
 * Performs one fetch_url request over a fresh pinned agent (closed afterwards; no connection
 * outlives the call).
 *
 * @param req the request (see `PinnedRequest`)
 * @returns the final response with at most `maxBytes` of body
 * @throws ToolError `invalid_arguments` / `ssrf_blocked` (see `parseFetchUrl`, `resolveAllowed`;
 *   detail also has `url` and `redirects` when a redirect hop was refused), `fetch_timeout`
 *   (detail {timeout_ms, url}), `fetch_failed` (detail.reason "dns", "connection_refused",
 *   "connection_reset", "unreachable", "tls", "port_blocked" (a Fetch-standard bad port),
 *   "too_many_redirects", "bad_redirect", "redirect_with_credentials", "aborted", "network")
 */
export async function pinnedFetch(req: PinnedRequest): Promise<PinnedResponse> {
  let target = parseFetchUrl(req.url, "argument");
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  const agent = pinnedAgent(req.timeoutMs);
  const redirects: RedirectHop[] = [];
  let headers = { ...req.headers };
  try {
    for (;;) {
      const res = await fetch(target.url, { method: req.method, headers, redirect: "manual", dispatcher: agent, signal });
      const location = res.headers.get("location");
      if (!req.followRedirects || !REDIRECT_STATUSES.has(res.status) || location === null) {
        const { body, maxBytesReached } = await readCapped(res, req.maxBytes, signal, target);
        return { url: target.url.href, host: target.host, status: res.status, headers: res.headers, body, maxBytesReached, redirects };
      }
      await res.body?.cancel();
      const next = nextHop(target, location, res.status, redirects, req.maxRedirects);
      if (next.url.origin !== target.url.origin) headers = withoutCredentials(headers);
      target = next;
    }
  } catch (err) {
    throw asToolError(err, { url: target.url.href, redirects, timeoutMs: req.timeoutMs, timedOut: timeout.aborted });
  } finally {
    await agent.destroy().catch(() => {});
  }
}

/** An Agent whose every connection is checked and pinned. */
function pinnedAgent(timeoutMs: number): Agent {
  const extraCa = fetchNetworkOptions().extraCaCertificates ?? [];
  const base = buildConnector({
    timeout: timeoutMs,
    lookup: guardedLookup,
    ...(extraCa.length > 0 && { ca: [...tls.rootCertificates, ...extraCa] }),
  });
  const connect: buildConnector.connector = (opts, callback) => {
    // IP literals never reach `lookup`: check them here, on the parsed numeric address.
    if (net.isIP(opts.hostname) !== 0) {
      const verdict = classifyAddress(opts.hostname, fetchNetworkOptions());
      if (!verdict.allowed) {
        callback(addressBlocked(verdict, opts.hostname), null);
        return;
      }
    }
    base(opts, callback);
  };
  return new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, allowH2: false });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** `net.connect`'s `lookup` hook: resolve once, check every address, return only those. */
function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  resolveAllowed(hostname.toLowerCase().replace(/\.+$/, "")).then(
    (addresses) => {
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      if (wanted.length === 0) {
        const err: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${options.family} address`);
        err.code = "ENOTFOUND";
        callback(err, "");
      } else if (options.all) {
        callback(null, wanted);
      } else {
        callback(null, wanted[0].address, wanted[0].family);
      }
    },
    (err: NodeJS.ErrnoException) => callback(err, ""),
  );
}

/** Validates a `Location` and records the hop. */
function nextHop(current: FetchTarget, location: string, status: number, redirects: RedirectHop[], max: number): FetchTarget {
  let absolute: string;
  try {
    absolute = new URL(location, current.url).href;
  } catch {
    throw new ToolError("fetch_failed", "The server redirected to an invalid URL.", { reason: "bad_redirect", location });
  }
  redirects.push({ url: current.url.href, status, location: absolute });
  if (redirects.length > max) {
    throw new ToolError("fetch_failed", `Stopped after ${max} redirects.`, { reason: "too_many_redirects", max_redirects: max });
  }
  try {
    return parseFetchUrl(absolute, "redirect");
  } catch (err) {
    // Name the hop that was refused (the loop's current URL is still the one that redirected).
    throw err instanceof ToolError ? new ToolError(err.errorName, err.message, { ...err.detail, url: absolute }) : err;
  }
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));
}

/** Reads at most `maxBytes` of the body, then cancels the rest. */
async function readCapped(
  res: Response,
  maxBytes: number,
  signal: AbortSignal,
  target: FetchTarget,
): Promise<{ body: Buffer; maxBytesReached: boolean }> {
  if (res.body === null) return { body: Buffer.alloc(0), maxBytesReached: false };
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      signal.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) return { body: Buffer.concat(chunks, size), maxBytesReached: false };
      const room = maxBytes - size;
      if (value.byteLength > room) {
        chunks.push(Buffer.from(value.buffer, value.byteOffset, room));
        await reader.cancel().catch(() => {});
        return { body: Buffer.concat(chunks, maxBytes), maxBytesReached: true };
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      size += value.byteLength;
    }
  } catch (err) {
    await reader.cancel().catch(() => {});
    throw Object.assign(new Error(`reading the body of ${target.url.href} failed`), { cause: err });
  }
}

/** Maps anything a fetch threw to our error table. */
function asToolError(
  err: unknown,
  ctx: { url: string; redirects: RedirectHop[]; timeoutMs: number; timedOut: boolean },
): ToolError {
  const context = { url: ctx.url, ...(ctx.redirects.length > 0 && { redirects: ctx.redirects }) };
  const own = findInCauses(err, (e): e is ToolError => e instanceof ToolError);
  if (own) return new ToolError(own.errorName, own.message, { ...context, ...own.detail }, { cause: own });
  const code = errorCode(err);
  if (ctx.timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new ToolError("fetch_timeout", `No complete answer within ${ctx.timeoutMs} ms.`, { timeout_ms: ctx.timeoutMs, ...context }, { cause: err });
  }
  const reason = failureReason(err, code);
  return new ToolError("fetch_failed", `Fetching ${ctx.url} failed (${code ?? reason}).`, { reason, ...(code && { code }), ...context }, { cause: err });
}

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"]);

function failureReason(err: unknown, code: string | undefined): ErrorReason<"fetch_failed"> {
  if (findInCauses(err, (e): e is Error => e instanceof Error && e.name === "AbortError")) return "aborted";
  // undici refuses the Fetch standard's "bad ports" (e.g. 25, 6000) with this message.
  if (findInCauses(err, (e): e is Error => e instanceof Error && e.message === "bad port")) return "port_blocked";
  if (code === undefined) return "network";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ENODATA") return "dns";
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET") return "connection_reset";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "unreachable";
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code)) return "tls";
  return "network";
}

/** The first errno-style `code` on the error or its causes. */
function errorCode(err: unknown): string | undefined {
  const withCode = findInCauses(err, (e): e is Error & { code: string } => typeof (e as { code?: unknown }).code === "string");
  return withCode?.code;
}

function findInCauses<T>(err: unknown, match: (e: unknown) => e is T): T | undefined {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (match(e)) return e;
  }
  return undefined;
}
