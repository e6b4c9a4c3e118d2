import net from "node:net";
import { ToolError } from "@/lib/errors";
import { classifyAddress, isLocalhostName, type AddressVerdict, type BlockReason } from "@/lib/net/address-policy";
import { fetchNetworkOptions } from "@/lib/net/network-options";

/**
 * Parsing and static checks of a URL fetch_url is asked to fetch (or is redirected to). The URL
 * is parsed once with WHATWG URL, the parser undici itself uses, so the host checked here is the
 * host the client connects to: `http://2852039166/`, `http://0xA9FEA9FE/`, `http://0251.0376.0251.0376/`
 * and `http://169.254.43518/` all arrive as 169.254.169.254, and `[::ffff:169.254.169.254]` as
 * `[::ffff:a9fe:a9fe]` (field case C25).
 */

/** `error.detail.reason` of `ssrf_blocked`. */
export type SsrfReason = BlockReason | "scheme_not_allowed";

/** A URL accepted for fetching. */
export interface FetchTarget {
  /** The WHATWG-parsed URL (the one given to the HTTP client). */
  url: URL;
  /**
   * Canonical host: lower case, IDNA (punycode) form, IPv4 in dotted decimal, IPv6 in RFC 5952
   * form without brackets, trailing dots removed. Policy rules match on this.
   */
  host: string;
  /** True when the host is an IP literal (no DNS involved). */
  literal: boolean;
}

/** Where a URL came from: the agent's argument, or a server's `Location` header. */
export type UrlOrigin = "argument" | "redirect";

const ALLOWED_SCHEMES = new Set(["http:", "https:"]);

/**
 * Parses and checks a URL before anything is resolved or connected.
 *
 * @param raw the URL as sent, or a `Location` value already resolved against the current URL
 * @param origin "argument" (the agent's URL) or "redirect" (a server's `Location`)
 * @throws ToolError for an argument: `invalid_arguments` (detail.reason "invalid_url",
 *   "scheme_not_allowed", "credentials_in_url", "empty_host"); for a redirect: `fetch_failed`
 *   (reason "bad_redirect", "redirect_with_credentials") or `ssrf_blocked` (reason
 *   "scheme_not_allowed"); for both: `ssrf_blocked` when the host is a blocked IP literal or a
 *   localhost name (detail {reason, address?, host, embedded_ipv4?})
 */
export function parseFetchUrl(raw: string, origin: UrlOrigin): FetchTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw origin === "argument"
      ? new ToolError("invalid_arguments", "url is not a valid absolute URL (e.g. https://example.com/page).", { reason: "invalid_url", url: raw })
      : new ToolError("fetch_failed", "The server redirected to an invalid URL.", { reason: "bad_redirect", location: raw });
  }
  if (!ALLOWED_SCHEMES.has(url.protocol)) {
    const scheme = url.protocol.slice(0, -1);
    if (origin === "redirect") throw ssrfBlocked("scheme_not_allowed", { host: url.hostname, scheme, url: raw });
    throw new ToolError("invalid_arguments", `Only http and https URLs can be fetched, not "${scheme}".`, {
      reason: "scheme_not_allowed",
      scheme,
    });
  }
  if (url.username !== "" || url.password !== "") {
    throw origin === "argument"
      ? new ToolError("invalid_arguments", "Credentials in URLs are refused; send them in a header (e.g. Authorization) instead.", {
          reason: "credentials_in_url",
        })
      : new ToolError("fetch_failed", "The server redirected to a URL with credentials in it; it was not followed.", {
          reason: "redirect_with_credentials",
        });
  }
  const target = targetOf(url);
  if (target.host === "") {
    throw new ToolError("invalid_arguments", "The URL has no host.", { reason: "empty_host", url: raw });
  }
  if (target.literal) {
    const verdict = classifyAddress(target.host, fetchNetworkOptions());
    if (!verdict.allowed) throw addressBlocked(verdict, target.host);
  } else if (isLocalhostName(target.host)) {
    throw ssrfBlocked("localhost", { host: target.host });
  }
  return target;
}

/**
 * The canonical form of a URL for policy and audit (`subject().url`): WHATWG serialization with
 * the host's trailing dots removed, so `http://Example.COM./a` and `http://example.com/a` match
 * the same domain rule. Returns `raw` unchanged when it does not parse.
 *
 * @param raw the URL as sent
 */
export function canonicalUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.hostname = url.hostname.replace(/\.+$/, "");
    return url.href;
  } catch {
    return raw;
  }
}

/**
 * The `ssrf_blocked` error for a refused address.
 *
 * @param verdict the refused address's classification
 * @param host the canonical host that led to it (a name or the literal itself)
 * @param extra more detail (e.g. every address DNS returned)
 */
export function addressBlocked(verdict: AddressVerdict, host: string, extra: Record<string, unknown> = {}): ToolError {
  return ssrfBlocked(verdict.reason ?? "reserved", {
    address: verdict.address,
    host,
    ...(verdict.embeddedIpv4 && { embedded_ipv4: verdict.embeddedIpv4 }),
    ...extra,
  });
}

/**
 * The `ssrf_blocked` error (403) for `reason`.
 *
 * @param reason `error.detail.reason`
 * @param detail at least `host`; `address` when an address was classified
 */
export function ssrfBlocked(reason: SsrfReason, detail: Record<string, unknown>): ToolError {
  const what = detail.address && detail.address !== detail.host ? `${String(detail.host)} (${String(detail.address)})` : String(detail.host);
  return new ToolError(
    "ssrf_blocked",
    `Refused to fetch ${what}: ${describe(reason)}. Only public internet addresses can be fetched.`,
    { reason, ...detail },
  );
}

function targetOf(url: URL): FetchTarget {
  const bare = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const literal = net.isIP(bare) !== 0;
  return { url, host: literal ? bare : bare.replace(/\.+$/, ""), literal };
}

const DESCRIPTIONS: Record<SsrfReason, string> = {
  metadata: "a cloud metadata endpoint",
  loopback: "a loopback address",
  private: "a private network address",
  link_local: "a link-local address",
  unique_local: "an IPv6 unique-local address",
  cgnat: "a carrier-grade NAT address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  unspecified: "the unspecified address",
  reserved: "a reserved or special-purpose address",
  ipv6_transition: "an IPv6 transition address (IPv4-compatible, 6to4, Teredo)",
  invalid_address: "an address that is not a valid IP address",
  localhost: "a localhost name",
  scheme_not_allowed: "a redirect to a scheme other than http or https",
};

function describe(reason: SsrfReason): string {
  return DESCRIPTIONS[reason];
}
