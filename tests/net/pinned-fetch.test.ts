import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ToolError } from "@/lib/errors";
import { assessFetchUrl, pinnedFetch, resolveAllowed, type PinnedRequest } from "@/lib/net/pinned-fetch";
import { startLoopbackServers, tableResolver, type LoopbackServers } from "./loopback-servers";
import { TEST_CA_PEM } from "./tls-fixture";
import { setTestNetwork } from "@/tests/helpers/test-network";

// fetch_url's resolver and allowances come from the test (tests/helpers/test-network.ts).
vi.mock("@/lib/net/network-options", async (importOriginal) => (await import("@/tests/helpers/test-network")).withTestNetwork(await importOriginal()));

/**
 * Connection-level guarantees of fetch_url (field case C25 and the design notes):
 * the "public" test server is 127.0.0.1:port, the only address a test allows; the "internal"
 * listener is 127.0.0.2 on the SAME port and counts connections, which must stay at zero.
 */
let servers: LoopbackServers;
let restore: () => void = () => {};

beforeAll(async () => {
  servers = await startLoopbackServers();
});
afterAll(async () => {
  await servers.close();
});
afterEach(() => restore());

function request(url: string, over: Partial<PinnedRequest> = {}): Promise<unknown> {
  return pinnedFetch({ url, method: "GET", headers: {}, timeoutMs: 5000, maxBytes: 1 << 20, followRedirects: true, maxRedirects: 5, ...over });
}

async function failure(p: Promise<unknown>): Promise<ToolError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected the fetch to fail");
}

describe("C25 through a real request, strict settings (nothing allowed)", () => {
  const resolver = tableResolver({ "example.com": ["93.184.216.34"] });
  beforeEach(() => {
    restore = setTestNetwork({ resolve: resolver });
  });

  it("refuses every spelling of the listeners' loopback addresses and metadata before any socket connects", async () => {
    const p = () => servers.port;
    const urls = [
      `http://127.0.0.1:${p()}/text`,
      `http://127.1:${p()}/text`,
      `http://2130706433:${p()}/text`,
      `http://0x7f000001:${p()}/text`,
      `http://0177.0.0.1:${p()}/text`,
      `http://[::ffff:127.0.0.1]:${p()}/text`,
      `http://[::127.0.0.1]:${p()}/text`,
      `http://127.0.0.2:${p()}/`,
      `http://[::ffff:7f00:2]:${p()}/`,
      `http://localhost:${p()}/text`,
      `http://LOCALHOST.:${p()}/text`,
      `http://[::1]:${p()}/text`,
      "http://169.254.169.254/latest/meta-data/",
      "http://2852039166/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[fd00:ec2::254]/",
    ];
    const before = { pub: servers.publicConnections(), internal: servers.internalConnections() };
    for (const url of urls) {
      const err = await failure(request(url));
      expect(err.errorName, url).toBe("ssrf_blocked");
      expect(err.detail).toMatchObject({ reason: expect.any(String), host: expect.any(String) });
    }
    expect(servers.publicConnections()).toBe(before.pub);
    expect(servers.internalConnections()).toBe(before.internal);
  });

  it("passes the control: a public answer is not refused (the connection then fails, it is not a test server)", async () => {
    const { target, addresses } = await assessFetchUrl("https://example.com/");
    expect(target.host).toBe("example.com");
    expect(addresses).toEqual(["93.184.216.34"]);
  });
});

describe("DNS answers, rebinding and redirects (only 127.0.0.1 allowed)", () => {
  const resolver = tableResolver({
      "public.test": ["127.0.0.1"],
      "example.com": ["127.0.0.1"],
      "internal.test": ["127.0.0.2"],
      "mapped.test": ["::ffff:127.0.0.2"],
      "mixed.test": ["127.0.0.1", "127.0.0.2"],
      "mixed-metadata.test": ["127.0.0.1", "169.254.169.254"],
      "metadata.test": ["169.254.169.254"],
      "empty.test": [],
      // public at the first lookup, internal afterwards: a DNS rebinding attacker
      "rebind.test": (call) => (call === 1 ? ["127.0.0.1"] : ["127.0.0.2"]),
  });
  beforeEach(() => {
    resolver.calls.clear();
    restore = setTestNetwork({
      resolve: resolver,
      allowAddresses: ["127.0.0.1"],
      extraCaCertificates: [TEST_CA_PEM],
    });
  });

  it("fetches from the allowed server through a name (control)", async () => {
    const res = (await request(`http://public.test:${servers.port}/text`)) as { status: number; body: Buffer; host: string };
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("hello world\n");
    expect(res.host).toBe("public.test");
  });

  it("keeps TLS certificate and host name checks while pinning the address (https control)", async () => {
    const res = (await request(`https://example.com:${servers.httpsPort}/text`)) as { status: number; body: Buffer };
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("hello world\n");
    // The certificate names example.com and public.test only: another name on the same address fails.
    const err = await failure(request(`https://127.0.0.1:${servers.httpsPort}/text`));
    expect(err.errorName).toBe("fetch_failed");
    expect(err.detail.reason).toBe("tls");
  });

  it.each([
    ["internal.test", "loopback", "127.0.0.2"],
    ["mapped.test", "loopback", "::ffff:7f00:2"],
    ["mixed.test", "loopback", "127.0.0.2"],
    ["mixed-metadata.test", "metadata", "169.254.169.254"],
    ["metadata.test", "metadata", "169.254.169.254"],
  ])("refuses %s (DNS answers %s) and connects nowhere", async (host, reason, address) => {
    const before = { pub: servers.publicConnections(), internal: servers.internalConnections() };
    const err = await failure(request(`http://${host}:${servers.port}/text`));
    expect(err.errorName).toBe("ssrf_blocked");
    expect(err.detail).toMatchObject({ reason, address, host });
    expect(err.detail.addresses).toEqual(expect.arrayContaining([address]));
    expect(servers.publicConnections()).toBe(before.pub);
    expect(servers.internalConnections()).toBe(before.internal);
  });

  it("reports a name without addresses as fetch_failed (dns)", async () => {
    for (const host of ["empty.test", "unknown.test"]) {
      const err = await failure(request(`http://${host}/`));
      expect(err.errorName).toBe("fetch_failed");
      expect(err.detail).toMatchObject({ reason: "dns", host });
    }
  });

  it("resolves once per connection and connects to the address it checked (DNS rebinding)", async () => {
    const before = servers.internalConnections();
    const res = (await request(`http://rebind.test:${servers.port}/text`)) as { status: number };
    expect(res.status).toBe(200);
    expect(resolver.calls.get("rebind.test")).toBe(1);
    expect(servers.internalConnections()).toBe(before);
  });

  it("a check before the request cannot be raced: the connection hook checks the answer it uses", async () => {
    const before = servers.internalConnections();
    // First lookup (the preview / a hand-made pre-check) sees the public answer...
    await expect(resolveAllowed("rebind.test")).resolves.toEqual([{ address: "127.0.0.1", family: 4 }]);
    // ...the connection's own lookup gets the internal one and refuses it.
    const err = await failure(request(`http://rebind.test:${servers.port}/text`));
    expect(err.detail).toMatchObject({ reason: "loopback", address: "127.0.0.2" });
    expect(servers.internalConnections()).toBe(before);
  });

  it.each([
    ["a name that resolves inside", (port: number) => `http://internal.test:${port}/secret`, "loopback"],
    ["an IP literal inside", (port: number) => `http://127.0.0.2:${port}/secret`, "loopback"],
    ["a decimal spelling of it", (port: number) => `http://2130706434:${port}/secret`, "loopback"],
    ["an IPv4-mapped spelling of it", (port: number) => `http://[::ffff:127.0.0.2]:${port}/secret`, "loopback"],
    ["localhost", (port: number) => `http://localhost:${port}/secret`, "localhost"],
    ["the metadata endpoint", () => "http://169.254.169.254/latest/meta-data/iam/security-credentials/", "metadata"],
    ["file://", () => "file:///etc/passwd", "scheme_not_allowed"],
  ])("blocks a redirect to %s at that hop; the internal listener sees no connection", async (_what, to, reason) => {
    const before = servers.internalConnections();
    const location = encodeURIComponent(to(servers.port));
    const start = `http://public.test:${servers.port}/redirect?to=${location}`;
    const err = await failure(request(start));
    expect(err.errorName).toBe("ssrf_blocked");
    expect(err.detail.reason).toBe(reason);
    const hop = new URL(to(servers.port)).href;
    expect(err.detail.url).toBe(hop);
    expect(err.detail.redirects).toEqual([{ url: start, status: 302, location: hop }]);
    expect(servers.internalConnections()).toBe(before);
  });

  it("follows allowed redirects and lists every hop", async () => {
    const res = (await request(`http://public.test:${servers.port}/chain/3`)) as { url: string; redirects: unknown[]; body: Buffer };
    expect(res.body.toString()).toBe("end of chain\n");
    expect(res.url).toBe(`http://public.test:${servers.port}/chain/0`);
    expect(res.redirects).toHaveLength(3);
  });

  it("stops after maxRedirects hops", async () => {
    const err = await failure(request(`http://public.test:${servers.port}/loop`));
    expect(err.errorName).toBe("fetch_failed");
    expect(err.detail.reason).toBe("too_many_redirects");
    expect(err.detail.redirects).toHaveLength(6);
  });

  it("maps a refused connection to fetch_failed (connection_refused)", async () => {
    restore();
    restore = setTestNetwork({ resolve: resolver, allowAddresses: ["127.0.0.1", "127.0.0.3"], extraCaCertificates: [TEST_CA_PEM] });
    const err = await failure(request(`http://127.0.0.3:${servers.port}/`));
    expect(err.errorName).toBe("fetch_failed");
    expect(err.detail.reason).toBe("connection_refused");
  });
});
