import dns from "node:dns";
import type { AddressAllowances } from "@/lib/net/address-policy";

/**
 * Process-wide network settings of fetch_url: how host names are resolved and which blocked
 * address classes are relaxed. The default is the system resolver (getaddrinfo, so /etc/hosts
 * counts) and strict blocking: no blocked address class is relaxed.
 */

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name (no trailing dot, lower case, never an IP literal) to every address it
 * has. Rejects with an Error carrying an errno `code` (e.g. "ENOTFOUND") when it has none.
 */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface FetchNetworkOptions extends AddressAllowances {
  resolve: Resolver;
  /**
   * PEM certificates trusted in addition to Node's bundled roots. Certificate and host name
   * checks are never turned off.
   */
  extraCaCertificates?: readonly string[];
}

/** The system resolver: every address getaddrinfo returns, in its order. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

const DEFAULTS: FetchNetworkOptions = Object.freeze({ resolve: systemResolver, allowAddresses: [], allowPrivateNetworks: false });

/** The settings in force: the system resolver, strict blocking, Node's bundled roots. */
export function fetchNetworkOptions(): FetchNetworkOptions {
  return DEFAULTS;
}
