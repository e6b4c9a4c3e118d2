import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ToolError } from "@/lib/errors";
import { classifyAddress } from "@/lib/net/address-policy";
import { canonicalUrl, parseFetchUrl, type SsrfReason } from "@/lib/net/url-target";
import { setTestNetwork } from "@/tests/helpers/test-network";

// fetch_url's resolver and allowances come from the test (tests/helpers/test-network.ts).
vi.mock("@/lib/net/network-options", async (importOriginal) => (await import("@/tests/helpers/test-network")).withTestNetwork(await importOriginal()));

function errorOf(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a ToolError");
}

// Field case C25, "Minimal input", plus other spellings of the same classes. Each is decided on
// the numeric address WHATWG URL parsing produces, with no DNS and no socket.
const C25: Array<[string, SsrfReason, string | null]> = [
  ["http://169.254.169.254/latest/meta-data/", "metadata", "169.254.169.254"],
  ["http://2852039166/", "metadata", "169.254.169.254"],
  ["http://0xA9FEA9FE/", "metadata", "169.254.169.254"],
  ["http://0251.0376.0251.0376/", "metadata", "169.254.169.254"],
  ["http://169.254.43518/", "metadata", "169.254.169.254"],
  ["http://[::ffff:169.254.169.254]/", "metadata", "::ffff:a9fe:a9fe"],
  ["http://[::ffff:a9fe:a9fe]/", "metadata", "::ffff:a9fe:a9fe"],
  ["http://[0:0:0:0:0:ffff:127.0.0.1]/", "loopback", "::ffff:7f00:1"],
  ["http://[::127.0.0.1]/", "loopback", "::7f00:1"],
  ["http://127.1/", "loopback", "127.0.0.1"],
  ["http://0/", "unspecified", "0.0.0.0"],
  ["http://0.0.0.0/", "unspecified", "0.0.0.0"],
  ["http://[::]/", "unspecified", "::"],
  ["http://[::1]/", "loopback", "::1"],
  ["http://localhost./", "localhost", null],
  ["http://LOCALHOST/", "localhost", null],
  ["http://10.0.0.1/", "private", "10.0.0.1"],
  ["http://172.16.0.1/", "private", "172.16.0.1"],
  ["http://192.168.1.1/", "private", "192.168.1.1"],
  ["http://100.64.0.1/", "cgnat", "100.64.0.1"],
  ["http://[fd00:ec2::254]/", "metadata", "fd00:ec2::254"],
  ["http://100.100.100.100/", "metadata", "100.100.100.100"],
  ["http://192.0.0.192/", "metadata", "192.0.0.192"],
  ["http://[64:ff9b::a9fe:a9fe]/", "metadata", "64:ff9b::a9fe:a9fe"],
  // more spellings of the same classes
  ["http://0x7f.1/", "loopback", "127.0.0.1"],
  ["http://0177.0.0.1/", "loopback", "127.0.0.1"],
  ["http://%31%32%37.0.0.1/", "loopback", "127.0.0.1"],
  ["http://127.0.0.1.:8080/", "loopback", "127.0.0.1"],
  ["http://2130706433:3000/", "loopback", "127.0.0.1"],
  ["https://[fe80::1]/", "link_local", "fe80::1"],
  ["http://[::ffff:10.0.0.1]/", "private", "::ffff:a00:1"],
  ["http://api.localhost/", "localhost", null],
  ["http://ＬＯＣＡＬＨＯＳＴ/", "localhost", null],
  ["http://１２７.０.０.１/", "loopback", "127.0.0.1"],
];

describe("parseFetchUrl: C25 alternate spellings", () => {
  afterEach(() => setTestNetwork({})());

  it.each(C25)("%s → ssrf_blocked %s", (url, reason, address) => {
    const err = errorOf(() => parseFetchUrl(url, "argument"));
    expect(err.errorName).toBe("ssrf_blocked");
    expect(err.detail.reason).toBe(reason);
    if (address !== null) expect(err.detail.address).toBe(address);
    expect(typeof err.detail.host).toBe("string");
  });

  it("keeps metadata blocked when the settings allow private networks and every address", () => {
    setTestNetwork({ allowPrivateNetworks: true, allowAddresses: ["0.0.0.0/0", "::/0"] });
    for (const url of ["http://2852039166/", "http://[::ffff:a9fe:a9fe]/", "http://[fd00:ec2::254]/", "http://100.100.100.200/", "http://[64:ff9b::a9fe:a9fe]/"]) {
      expect(errorOf(() => parseFetchUrl(url, "argument")).detail.reason).toBe("metadata");
    }
    expect(parseFetchUrl("http://10.0.0.1/", "argument").host).toBe("10.0.0.1");
  });

  it("decides every decimal spelling of an IPv4 address like the dotted address (property)", () => {
    fc.assert(
      fc.property(fc.nat(0xffffffff), (n) => {
        const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
        const expected = classifyAddress(dotted);
        for (const spelling of [String(n), `0x${n.toString(16)}`, dotted]) {
          let blocked: ToolError | null = null;
          try {
            const target = parseFetchUrl(`http://${spelling}/`, "argument");
            expect(target.host).toBe(dotted);
          } catch (err) {
            blocked = err as ToolError;
          }
          expect(blocked === null).toBe(expected.allowed);
          if (blocked) expect(blocked.detail.reason).toBe(expected.reason);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe("parseFetchUrl: arguments", () => {
  it("accepts public URLs (the C25 control) and returns the canonical host", () => {
    expect(parseFetchUrl("https://example.com/", "argument")).toMatchObject({ host: "example.com", literal: false });
    expect(parseFetchUrl("https://Example.COM./a?b=1", "argument")).toMatchObject({ host: "example.com", literal: false });
    expect(parseFetchUrl("http://93.184.216.34:8080/x", "argument")).toMatchObject({ host: "93.184.216.34", literal: true });
    expect(parseFetchUrl("http://[2606:4700:4700::1111]/", "argument")).toMatchObject({ host: "2606:4700:4700::1111", literal: true });
    expect(parseFetchUrl("https://ΕΛΛΗΝΙΚΆ.example/", "argument").host).toBe("xn--hxargifdar.example");
  });

  it.each([
    ["ftp://example.com/file", "scheme_not_allowed"],
    ["file:///etc/passwd", "scheme_not_allowed"],
    ["gopher://example.com:70/", "scheme_not_allowed"],
    ["javascript:alert(1)", "scheme_not_allowed"],
    ["data:text/plain,hi", "scheme_not_allowed"],
    ["http://user:secret@example.com/", "credentials_in_url"],
    ["https://token@example.com/", "credentials_in_url"],
    ["http://:pw@example.com/", "credentials_in_url"],
    ["not a url", "invalid_url"],
    ["/relative/path", "invalid_url"],
    ["http://", "invalid_url"],
    ["http://exa mple.com/", "invalid_url"],
    ["http://[::ffff:127.0.0.1%25eth0]/", "invalid_url"],
  ])("%s → invalid_arguments (%s)", (url, reason) => {
    const err = errorOf(() => parseFetchUrl(url, "argument"));
    expect(err.errorName).toBe("invalid_arguments");
    expect(err.detail.reason).toBe(reason);
  });

  it.each([
    ["file:///etc/passwd", "ssrf_blocked", "scheme_not_allowed"],
    ["gopher://127.0.0.1:6379/_INFO", "ssrf_blocked", "scheme_not_allowed"],
    ["http://user:pw@example.com/", "fetch_failed", "redirect_with_credentials"],
    ["http://169.254.169.254/", "ssrf_blocked", "metadata"],
  ])("a redirect to %s → %s (%s)", (url, name, reason) => {
    const err = errorOf(() => parseFetchUrl(url, "redirect"));
    expect(err.errorName).toBe(name);
    expect(err.detail.reason).toBe(reason);
  });
});

describe("canonicalUrl", () => {
  it.each([
    ["http://Example.COM./a", "http://example.com/a"],
    ["HTTPS://EXAMPLE.com:443/", "https://example.com/"],
    ["http://ΕΛΛΗΝΙΚΆ.example", "http://xn--hxargifdar.example/"],
    ["http://2852039166/", "http://169.254.169.254/"],
    ["http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/"],
    ["not a url", "not a url"],
  ])("%s → %s", (raw, expected) => {
    expect(canonicalUrl(raw)).toBe(expected);
  });
});
