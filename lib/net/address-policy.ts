import net from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which IP addresses fetch_url may connect to (field case C25; OWASP SSRF Prevention Cheat
 * Sheet). Classification uses ipaddr.js's special-purpose ranges (IANA IPv4/IPv6
 * Special-Purpose Address Registries, RFC 6890) plus a list of cloud metadata endpoints, and
 * looks inside every IPv6 form that embeds an IPv4 address (IPv4-mapped RFC 4291 §2.5.5.2,
 * IPv4-compatible §2.5.5.1, IPv4-translated RFC 6145, NAT64 RFC 6052/8215, 6to4 RFC 3056).
 *
 * Only globally routable unicast addresses are allowed by default. Callers pass addresses in
 * their canonical text form (what WHATWG URL parsing or a resolver produced); anything that
 * `net.isIP` does not accept is refused as "invalid_address", never guessed at.
 */

/** Why an address (or host name) is refused: `error.detail.reason` of `ssrf_blocked`. */
export type BlockReason =
  | "metadata"
  | "loopback"
  | "private"
  | "link_local"
  | "unique_local"
  | "cgnat"
  | "multicast"
  | "broadcast"
  | "unspecified"
  | "reserved"
  | "ipv6_transition"
  | "invalid_address"
  | "localhost";

/** Settings that relax the default (strict) policy. Metadata endpoints are never relaxed. */
export interface AddressAllowances {
  /**
   * Addresses or CIDR ranges (e.g. "127.0.0.1", "10.1.0.0/16", "fd12::/64") that are allowed even
   * though they are in a blocked class. Used by tests to reach their own loopback server.
   */
  allowAddresses?: readonly string[];
  /** Allows RFC 1918 private, IPv6 unique-local (fc00::/7) and CGNAT (100.64.0.0/10) addresses. */
  allowPrivateNetworks?: boolean;
}

/** The classification of one address. */
export interface AddressVerdict {
  /** Canonical text form (RFC 5952 for IPv6). */
  address: string;
  allowed: boolean;
  /** Null when allowed. */
  reason: BlockReason | null;
  /** For IPv6 forms that embed an IPv4 address: that address (dotted decimal). */
  embeddedIpv4?: string;
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Cloud metadata and host-agent endpoints. They hand out credentials, so they stay blocked even
 * when an operator allows private networks or a test allows an address.
 */
const METADATA = [
  "169.254.169.254/32", // AWS, GCP, Azure, OCI, OpenStack, DigitalOcean instance metadata
  "169.254.170.2/32", // AWS ECS task metadata and credentials
  "169.254.170.23/32", // AWS EKS Pod Identity agent
  "169.254.169.253/32", // AWS VPC DNS resolver
  "169.254.169.123/32", // AWS time sync
  "169.254.0.23/32", // Tencent Cloud metadata
  "100.100.100.0/24", // Alibaba Cloud metadata (100.100.100.200) and internal services
  "192.0.0.192/32", // Oracle Cloud legacy metadata
  "168.63.129.16/32", // Azure WireServer / host agent (a public-looking address)
  "fd00:ec2::/32", // AWS instance metadata over IPv6 (fd00:ec2::254)
].map((cidr) => ipaddr.parseCIDR(cidr));

/** ipaddr.js range names → our reasons. Names not listed (and not "unicast") are "reserved". */
const RANGE_REASONS: Record<string, BlockReason> = {
  loopback: "loopback",
  private: "private",
  linkLocal: "link_local",
  uniqueLocal: "unique_local",
  carrierGradeNat: "cgnat",
  multicast: "multicast",
  broadcast: "broadcast",
  unspecified: "unspecified",
  "6to4": "ipv6_transition",
  teredo: "ipv6_transition",
};

/** Reasons that `allowPrivateNetworks` relaxes. */
const PRIVATE_NETWORK_REASONS: ReadonlySet<BlockReason> = new Set(["private", "unique_local", "cgnat"]);

/**
 * Classifies one IP address for an outgoing connection.
 *
 * @param address an IPv4 dotted-quad or IPv6 address (brackets allowed, a zone id is ignored for
 *   classification), as produced by WHATWG URL parsing or a DNS resolver
 * @param allowances relaxations (default: none); metadata endpoints are never relaxed
 * @returns the verdict; never throws
 */
export function classifyAddress(address: string, allowances: AddressAllowances = {}): AddressVerdict {
  const text = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (net.isIP(text.split("%")[0]) === 0) return { address, allowed: false, reason: "invalid_address" };
  const parsed = ipaddr.parse(text);
  const canonical = canonicalText(parsed);
  const { reason, embedded } = baseReason(parsed);
  const verdict = (r: BlockReason | null): AddressVerdict => ({
    address: canonical,
    allowed: r === null,
    reason: r,
    ...(embedded && { embeddedIpv4: embedded.toString() }),
  });
  if (reason === null || reason === "metadata") return verdict(reason);
  if (allowances.allowPrivateNetworks && PRIVATE_NETWORK_REASONS.has(reason)) return verdict(null);
  const allowList = allowances.allowAddresses ?? [];
  if (allowList.some((entry) => inRange(parsed, entry) || (embedded !== null && inRange(embedded, entry)))) {
    return verdict(null);
  }
  return verdict(reason);
}

/**
 * True for names that mean this host whatever DNS says: "localhost" and every name under
 * ".localhost" (RFC 6761 §6.3), compared case-insensitively and without a trailing dot.
 *
 * @param host a host name (not an IP literal)
 */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

function canonicalText(parsed: Parsed): string {
  return parsed.kind() === "ipv6" ? (parsed as ipaddr.IPv6).toRFC5952String() : parsed.toString();
}

/** The reason before allowances, and the IPv4 address an IPv6 form embeds (if any). */
function baseReason(parsed: Parsed): { reason: BlockReason | null; embedded: ipaddr.IPv4 | null } {
  if (isMetadata(parsed)) return { reason: "metadata", embedded: null };
  if (parsed.kind() === "ipv4") return { reason: reasonOfRange(parsed.range()), embedded: null };
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded === null) return { reason: reasonOfRange(v6.range()), embedded: null };
  const inner = baseReason(embedded).reason;
  if (inner !== null) return { reason: inner, embedded };
  // A public IPv4 address behind IPv4-mapped or NAT64 is a normal public destination (DNS64
  // networks answer with 64:ff9b::/96); the deprecated and tunnelling forms are not.
  const range = v6.range();
  const passThrough = range === "ipv4Mapped" || range === "rfc6052";
  return { reason: passThrough ? null : "ipv6_transition", embedded };
}

function reasonOfRange(range: string): BlockReason | null {
  if (range === "unicast") return null;
  return RANGE_REASONS[range] ?? "reserved";
}

function isMetadata(parsed: Parsed): boolean {
  return METADATA.some(([net, bits]) => net.kind() === parsed.kind() && parsed.match(net, bits));
}

/**
 * The IPv4 address embedded in an IPv6 address, for the forms that carry one: IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), IPv4-compatible (::/96 except :: and ::1),
 * NAT64 (64:ff9b::/96 and 64:ff9b:1::/48, last 32 bits) and 6to4 (2002::/16, bits 16-47).
 */
function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = v6.parts;
  const low32 = () => new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
  const range = v6.range();
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") return low32();
  if (range === "6to4") return new ipaddr.IPv4([p[1] >> 8, p[1] & 0xff, p[2] >> 8, p[2] & 0xff]);
  const compatible = p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1);
  return compatible ? low32() : null;
}

function inRange(addr: Parsed, entry: string): boolean {
  try {
    const [net, bits] = entry.includes("/") ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), addr.kind() === "ipv4" ? 32 : 128];
    return net.kind() === addr.kind() && addr.match(net, bits);
  } catch {
    return false;
  }
}
