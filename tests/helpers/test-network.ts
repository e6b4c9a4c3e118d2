import type * as NetworkOptions from "@/lib/net/network-options";
import type { FetchNetworkOptions } from "@/lib/net/network-options";

/**
 * fetch_url's network settings for tests, swapped in from the test side: a test file replaces
 * `@/lib/net/network-options` for the modules it loads with `withTestNetwork` (vitest module
 * mocking), then sets a table resolver, its own loopback listener in `allowAddresses` or a test
 * CA with `setTestNetwork`. Metadata endpoints stay blocked whatever is set (the address policy
 * decides that, not these settings).
 *
 *   vi.mock("@/lib/net/network-options", async (importOriginal) =>
 *     (await import("@/tests/helpers/test-network")).withTestNetwork(await importOriginal()));
 */
let current: FetchNetworkOptions | null = null;
let defaults: FetchNetworkOptions | null = null;

/** The module with `fetchNetworkOptions` answering the test's settings (the real defaults until set). */
export function withTestNetwork(real: typeof NetworkOptions): typeof NetworkOptions {
  defaults = real.fetchNetworkOptions();
  return { ...real, fetchNetworkOptions: () => current ?? defaults! };
}

/**
 * Replaces some settings for the rest of this test file; the others keep the product's defaults.
 * @returns a function that restores the defaults (call it in `afterEach`)
 */
export function setTestNetwork(options: Partial<FetchNetworkOptions>): () => void {
  if (!defaults) throw new Error("setTestNetwork: mock @/lib/net/network-options with withTestNetwork first");
  current = { ...defaults, ...options };
  return () => {
    current = null;
  };
}
