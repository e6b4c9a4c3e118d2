import ipaddr from "ipaddr.js";
import { getConfig, type Config } from "@/lib/config";
import { errorResponse } from "@/lib/http/respond";

/**
 * DNS rebinding protection for every door (API routes, the MCP door, the event stream, dashboard
 * pages and server actions; applied in front of all of them by `proxy.ts`).
 *
 * A page on `http://evil.example` whose name an attacker re-points at 127.0.0.1 can make a browser
 * send requests to this gateway that the browser treats as same-origin. Such requests carry the
 * attacker's name in `Host` (and in `Origin` for cross-origin ones), so the gateway answers only
 * requests whose Host names it, and whose Origin, when sent, names it too (MCP spec, "Transports →
 * Streamable HTTP → Security Warning": servers MUST validate the Origin header).
 *
 * Allowed hosts, compared after the WHATWG URL parser's canonicalisation (lower case; IPv4
 * shorthand such as `127.1` or `0x7f.1` becomes dotted decimal; IPv6 compressed; one trailing dot
 * dropped):
 * - any IP literal in a loopback range (127.0.0.0/8, ::1, and IPv4-mapped ::ffff:127.x.y.z): an
 *   address cannot be re-pointed, and only this machine reaches it;
 * - the name `localhost` (not `*.localhost`, not `localhost.example`);
 * - the host of the configured public URL (AGENT_REACH_PUBLIC_URL), and the bind address when it
 *   is a specific IP (not 0.0.0.0 or ::, which some browsers route to loopback);
 * - each entry of AGENT_REACH_ALLOWED_HOSTS: `name` (any port) or `name:port` (that port only).
 * Any port goes for the first three. A name that merely starts or ends with an allowed one
 * (`127.0.0.1.nip.io`, `localhost.evil.example`) is a different name and is refused.
 *
 * Origin: absent is fine (CLI clients, curl and same-origin GETs send none); present, it must be
 * an `http:` or `https:` origin whose host is allowed. `Origin: null` (sandboxed frames, file://
 * pages, some redirects) is refused.
 */

/** A Host header as RFC 9110 allows it: reg-name or IPv4 or `[IPv6]`, then an optional port. */
const HOST_SYNTAX = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._~-]+)(?::\d{1,5})?$/i;

/** Why a request was refused; null when it may proceed. */
export type HostCheckFailure = { header: "host" | "origin"; value: string | null; reason: string };

interface Allowed {
  /** Lower-case names (no trailing dot) allowed on any port. */
  names: Set<string>;
  /** Lower-case `name:port` pairs allowed on that port only. */
  hostPorts: Set<string>;
}

/** The canonical hostname and port of an `authority` (`host[:port]`), or null when it is not one. */
export function canonicalHost(authority: string): { hostname: string; port: string } | null {
  if (!HOST_SYNTAX.test(authority)) return null;
  let url: URL;
  try {
    url = new URL(`http://${authority}`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.pathname !== "/" || url.search || url.hash) return null;
  let hostname = url.hostname.toLowerCase();
  if (hostname.endsWith(".") && !hostname.endsWith("..")) hostname = hostname.slice(0, -1);
  if (hostname === "") return null;
  return { hostname, port: url.port };
}

/** True for an IP literal (dotted IPv4 or bracketed IPv6) in a loopback range. */
function isLoopbackLiteral(hostname: string): boolean {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  if (!ipaddr.isValid(bare)) return false;
  if (!hostname.startsWith("[") && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return false;
  let addr = ipaddr.parse(bare);
  if (addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return addr.range() === "loopback";
}

/** True for 0.0.0.0 / :: (listen on every address), which must never become an allowed Host. */
function isUnspecified(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, "");
  return ipaddr.isValid(bare) && ipaddr.parse(bare).range() === "unspecified";
}

/** The allowed names of a configuration (see the module comment). */
export function allowedHosts(config: Pick<Config, "publicUrl" | "host" | "allowedHosts">): Allowed {
  const names = new Set<string>(["localhost"]);
  const hostPorts = new Set<string>();
  const add = (hostname: string | null | undefined) => {
    if (hostname && !isUnspecified(hostname)) names.add(hostname);
  };
  try {
    add(canonicalHost(new URL(config.publicUrl).host)?.hostname);
  } catch {
    /* an unparsable public URL adds nothing */
  }
  const bind = config.host.includes(":") && !config.host.startsWith("[") ? `[${config.host}]` : config.host;
  if (ipaddr.isValid(bind.replace(/^\[|\]$/g, ""))) add(canonicalHost(bind)?.hostname);
  for (const entry of config.allowedHosts) {
    const parsed = canonicalHost(entry);
    if (!parsed || isUnspecified(parsed.hostname)) continue;
    if (/:\d+$/.test(entry.replace(/^\[[^\]]*\]/, ""))) hostPorts.add(`${parsed.hostname}:${parsed.port || "80"}`);
    else names.add(parsed.hostname);
  }
  return { names, hostPorts };
}

/** `allowedHosts` of each configuration object, computed once (a configuration is not changed in place). */
const allowedByConfig = new WeakMap<object, Allowed>();

function allowedHostsOf(config: Pick<Config, "publicUrl" | "host" | "allowedHosts">): Allowed {
  let allowed = allowedByConfig.get(config);
  if (!allowed) {
    allowed = allowedHosts(config);
    allowedByConfig.set(config, allowed);
  }
  return allowed;
}

/** True when `authority` (`host[:port]`, as in a Host header or an origin's host) is allowed. */
export function isAllowedAuthority(authority: string, allowed: Allowed, defaultPort = "80"): boolean {
  const parsed = canonicalHost(authority);
  if (!parsed) return false;
  if (isLoopbackLiteral(parsed.hostname)) return true;
  if (allowed.names.has(parsed.hostname)) return true;
  return allowed.hostPorts.has(`${parsed.hostname}:${parsed.port || defaultPort}`);
}

/**
 * Checks a request's Host and Origin headers.
 * @param headers the request headers.
 * @param config the configuration to take the public URL, bind address and operator list from.
 * @returns null when the request may proceed, else which header failed and why.
 */
export function checkHostAndOrigin(headers: Headers, config: Pick<Config, "publicUrl" | "host" | "allowedHosts"> = getConfig()): HostCheckFailure | null {
  const allowed = allowedHostsOf(config);
  const host = headers.get("host");
  if (host === null || host.trim() === "") return { header: "host", value: host, reason: "the request has no Host header" };
  if (!isAllowedAuthority(host.trim(), allowed)) return { header: "host", value: host, reason: "the Host header does not name this gateway" };
  const origin = headers.get("origin");
  if (origin === null) return null;
  if (origin.trim().toLowerCase() === "null") return { header: "origin", value: origin, reason: "an opaque origin (null) cannot be trusted" };
  let url: URL;
  try {
    url = new URL(origin.trim());
  } catch {
    return { header: "origin", value: origin, reason: "the Origin header is not a URL" };
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password || url.pathname.replace(/\/$/, "") !== "" || url.search || url.hash) {
    return { header: "origin", value: origin, reason: "the Origin header is not an http(s) origin" };
  }
  if (!isAllowedAuthority(url.host, allowed, url.protocol === "https:" ? "443" : "80")) {
    return { header: "origin", value: origin, reason: "the Origin header does not name this gateway" };
  }
  return null;
}

/**
 * The 403 `forbidden` response for a request `checkHostAndOrigin` refused, or null when it may
 * proceed. The body is the gateway's error envelope; `detail` says which header failed and how to
 * allow a name on purpose.
 */
export function hostCheckResponse(req: Request, config?: Pick<Config, "publicUrl" | "host" | "allowedHosts">): Response | null {
  let failure: HostCheckFailure | null;
  try {
    failure = checkHostAndOrigin(req.headers, config);
  } catch {
    failure = { header: "host", value: req.headers.get("host"), reason: "the Host or Origin header could not be checked" };
  }
  if (!failure) return null;
  return errorResponse("forbidden", `Request refused: ${failure.reason} (DNS rebinding protection).`, {
    reason: "host_not_allowed",
    header: failure.header,
    value: failure.value?.slice(0, 200) ?? null,
    hint: "Use http://localhost or http://127.0.0.1, set AGENT_REACH_PUBLIC_URL, or add the name to AGENT_REACH_ALLOWED_HOSTS.",
  });
}
