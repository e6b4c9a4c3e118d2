import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyAddress, isLocalhostName, type BlockReason } from "@/lib/net/address-policy";

// Field case C25: every address class that must not be reached, in the canonical forms that
// WHATWG URL parsing and resolvers produce.
const BLOCKED: Array<[string, BlockReason, string?]> = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["::1", "loopback"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["::", "unspecified"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "cgnat"],
  ["100.127.255.254", "cgnat"],
  ["169.254.1.1", "link_local"],
  ["fe80::1", "link_local"],
  ["fd12:3456::1", "unique_local"],
  ["fc00::1", "unique_local"],
  ["224.0.0.1", "multicast"],
  ["ff02::1", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved"],
  ["192.0.2.10", "reserved"],
  ["198.18.0.1", "reserved"],
  ["2001:db8::1", "reserved"],
  // cloud metadata
  ["169.254.169.254", "metadata"],
  ["169.254.170.2", "metadata"],
  ["100.100.100.200", "metadata"],
  ["100.100.100.100", "metadata"],
  ["192.0.0.192", "metadata"],
  ["168.63.129.16", "metadata"],
  ["fd00:ec2::254", "metadata"],
  // IPv6 forms that embed an IPv4 address
  ["::ffff:a9fe:a9fe", "metadata", "169.254.169.254"],
  ["::ffff:169.254.169.254", "metadata", "169.254.169.254"],
  ["::ffff:7f00:1", "loopback", "127.0.0.1"],
  ["::ffff:a00:1", "private", "10.0.0.1"],
  ["::7f00:1", "loopback", "127.0.0.1"],
  ["::a9fe:a9fe", "metadata", "169.254.169.254"],
  ["64:ff9b::a9fe:a9fe", "metadata", "169.254.169.254"],
  ["64:ff9b::7f00:1", "loopback", "127.0.0.1"],
  ["64:ff9b:1::a00:1", "private", "10.0.0.1"],
  ["::ffff:0:7f00:1", "loopback", "127.0.0.1"],
  ["2002:a9fe:a9fe::1", "metadata", "169.254.169.254"],
  ["2002:c0a8:101::1", "private", "192.168.1.1"],
  // transition forms of public addresses: deprecated or tunnelling, refused
  ["::808:808", "ipv6_transition", "8.8.8.8"],
  ["2002:808:808::1", "ipv6_transition", "8.8.8.8"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "ipv6_transition"],
  // not an address in canonical form: never guessed at
  ["127.1", "invalid_address"],
  ["2130706433", "invalid_address"],
  ["localhost", "invalid_address"],
  ["", "invalid_address"],
];

const ALLOWED = ["93.184.216.34", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::200e", "::ffff:808:808", "64:ff9b::808:808", "[2606:4700:4700::1111]"];

describe("classifyAddress", () => {
  it.each(BLOCKED)("blocks %s as %s", (address, reason, embedded) => {
    const v = classifyAddress(address);
    expect(v).toMatchObject({ allowed: false, reason });
    if (embedded) expect(v.embeddedIpv4).toBe(embedded);
  });

  it.each(ALLOWED)("allows the public address %s", (address) => {
    expect(classifyAddress(address)).toMatchObject({ allowed: true, reason: null });
  });

  it("returns the canonical RFC 5952 text of IPv6 addresses", () => {
    expect(classifyAddress("0:0:0:0:0:FFFF:A9FE:A9FE").address).toBe("::ffff:a9fe:a9fe");
    expect(classifyAddress("2606:4700:4700:0:0:0:0:1111").address).toBe("2606:4700:4700::1111");
  });

  const ALLOWANCES: Array<[string, Parameters<typeof classifyAddress>[1], boolean]> = [
    ["127.0.0.1", { allowAddresses: ["127.0.0.1"] }, true],
    ["127.0.0.2", { allowAddresses: ["127.0.0.1"] }, false],
    ["127.0.0.2", { allowAddresses: ["127.0.0.0/8"] }, true],
    ["::ffff:127.0.0.1", { allowAddresses: ["127.0.0.1"] }, true],
    ["fd12::5", { allowAddresses: ["fd12::/16"] }, true],
    ["10.1.2.3", { allowAddresses: ["not-an-address"] }, false],
    ["10.1.2.3", { allowPrivateNetworks: true }, true],
    ["192.168.0.10", { allowPrivateNetworks: true }, true],
    ["fd12::5", { allowPrivateNetworks: true }, true],
    ["100.64.1.1", { allowPrivateNetworks: true }, true],
    // allowing private networks does not open the host itself or link-local
    ["127.0.0.1", { allowPrivateNetworks: true }, false],
    ["169.254.1.1", { allowPrivateNetworks: true }, false],
    // metadata stays blocked whatever is allowed (C25)
    ["169.254.169.254", { allowPrivateNetworks: true, allowAddresses: ["169.254.0.0/16", "0.0.0.0/0"] }, false],
    ["100.100.100.200", { allowPrivateNetworks: true }, false],
    ["fd00:ec2::254", { allowPrivateNetworks: true, allowAddresses: ["::/0"] }, false],
    ["::ffff:a9fe:a9fe", { allowAddresses: ["169.254.169.254"] }, false],
    ["64:ff9b::a9fe:a9fe", { allowPrivateNetworks: true, allowAddresses: ["::/0"] }, false],
  ];

  it.each(ALLOWANCES)("%s with %j → allowed=%s", (address, allowances, allowed) => {
    expect(classifyAddress(address, allowances).allowed).toBe(allowed);
  });

  const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join("."));
  const hex = (a: string) => {
    const o = a.split(".").map(Number);
    return `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  };

  it("decides IPv4-mapped and NAT64 forms exactly like the IPv4 address inside (property)", () => {
    fc.assert(
      fc.property(ipv4, (a) => {
        const plain = classifyAddress(a);
        for (const form of [`::ffff:${a}`, `::ffff:${hex(a)}`, `64:ff9b::${hex(a)}`]) {
          const v = classifyAddress(form);
          expect(v.allowed).toBe(plain.allowed);
          if (!plain.allowed) expect(v.reason).toBe(plain.reason);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("blocks every address of the loopback, private, link-local and CGNAT ranges (property)", () => {
    const inRange = (first: number[], restBits: number) =>
      fc.nat(2 ** restBits - 1).map((n) => {
        const base = (first[0] << 24) | ((first[1] ?? 0) << 16);
        const v = (base | n) >>> 0;
        return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join(".");
      });
    const ranges = fc.oneof(inRange([127], 24), inRange([10], 24), inRange([192, 168], 16), inRange([169, 254], 16), inRange([100, 64], 22));
    fc.assert(
      fc.property(ranges, (a) => {
        expect(classifyAddress(a).allowed).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("isLocalhostName", () => {
  it.each([
    ["localhost", true],
    ["LOCALHOST", true],
    ["localhost.", true],
    ["localhost..", true],
    ["api.localhost", true],
    ["a.b.LocalHost.", true],
    ["localhost.example.com", false],
    ["mylocalhost", false],
    ["example.com", false],
  ])("%s → %s", (name, expected) => {
    expect(isLocalhostName(name)).toBe(expected);
  });
});
