import { describe, expect, it } from "vitest";
import { checkHostAndOrigin, hostCheckResponse } from "@/lib/http/host-check";

/**
 * DNS rebinding protection: which Host and Origin spellings pass and which are refused, for the
 * default configuration (bind 127.0.0.1, no public URL) and with an operator list.
 */

const base = { publicUrl: "http://127.0.0.1:3000", host: "127.0.0.1", allowedHosts: [] as string[] };

function check(host: string | null, origin?: string | null, config = base) {
  const headers = new Headers();
  if (host !== null) headers.set("host", host);
  if (origin !== undefined && origin !== null) headers.set("origin", origin);
  return checkHostAndOrigin(headers, config);
}

describe("Host header", () => {
  it.each([
    "localhost",
    "localhost:3000",
    "LOCALHOST:3000",
    "LocalHost",
    "localhost.:3000",
    "127.0.0.1",
    "127.0.0.1:3000",
    "127.0.0.1.:3000",
    "127.1:3000",
    "127.0.1",
    "0x7f.1:3000",
    "0x7f000001",
    "2130706433:3000",
    "0177.0.0.1",
    "127.255.255.254:80",
    "[::1]",
    "[::1]:3000",
    "[0:0:0:0:0:0:0:1]:3000",
    "[0000::0001]",
    "[::ffff:127.0.0.1]:3000",
    "[::FFFF:7F00:1]",
  ])("allows %s", (host) => {
    expect(check(host)).toBeNull();
  });

  it.each([
    "127.0.0.1.nip.io:3000",
    "127.0.0.1.sslip.io",
    "localtest.me",
    "localhost.evil.example",
    "evil.localhost",
    "sub.localhost:3000",
    "evil.example",
    "EVIL.EXAMPLE:3000",
    "0.0.0.0:3000",
    "0:3000",
    "[::]:3000",
    "192.168.1.10:3000",
    "10.0.0.1",
    "[fe80::1]",
    "[::ffff:10.0.0.1]",
    "localhost..",
    "localhost:3000@evil.example",
    "evil.example#@localhost",
    "evil.example/localhost",
    "localhost:3000/x",
    "local host",
    "localhost:99999999",
    "[::1%25lo]:3000",
    "127.0.0.1:3000, evil.example",
    "",
    "   ",
  ])("refuses %j", (host) => {
    expect(check(host)).toMatchObject({ header: "host" });
  });

  it("refuses a request without a Host header", () => {
    expect(check(null)).toMatchObject({ header: "host" });
  });
});

describe("Origin header", () => {
  it.each([
    "http://localhost:3000",
    "http://LOCALHOST:3000",
    "https://localhost",
    "http://127.0.0.1:3000",
    "http://127.1:3000",
    "http://[::1]:3000",
    "http://localhost:5173",
    "http://localhost:3000/",
  ])("allows %s", (origin) => {
    expect(check("127.0.0.1:3000", origin)).toBeNull();
  });

  it.each([
    "null",
    "NULL",
    "http://evil.example",
    "http://127.0.0.1.nip.io:3000",
    "http://localhost.evil.example:3000",
    "file://",
    "chrome-extension://abcdef",
    "ftp://localhost",
    "http://user:pw@localhost:3000",
    "http://localhost:3000/path",
    "http://localhost:3000?x",
    "not a url",
    "http://0.0.0.0:3000",
    "",
  ])("refuses %j", (origin) => {
    expect(check("127.0.0.1:3000", origin)).toMatchObject({ header: "origin" });
  });
});

describe("configured names", () => {
  const config = {
    publicUrl: "https://reach.example.com",
    host: "0.0.0.0",
    allowedHosts: ["gw.internal", "Other.Example:8443", "0.0.0.0", "[::]"],
  };

  it("allows the public URL's host, operator names and name:port pairs", () => {
    expect(check("reach.example.com", undefined, config)).toBeNull();
    expect(check("REACH.example.com.", "https://reach.example.com", config)).toBeNull();
    expect(check("gw.internal:3000", "http://gw.internal:3000", config)).toBeNull();
    expect(check("other.example:8443", undefined, config)).toBeNull();
    expect(check("localhost:3000", undefined, config)).toBeNull();
  });

  it("refuses other ports of a name:port entry, look-alike names and the unspecified address", () => {
    expect(check("other.example:8444", undefined, config)).not.toBeNull();
    expect(check("other.example", undefined, config)).not.toBeNull();
    expect(check("reach.example.com.evil.example", undefined, config)).not.toBeNull();
    expect(check("evilreach.example.com", undefined, config)).not.toBeNull();
    expect(check("0.0.0.0:3000", undefined, config)).not.toBeNull();
    expect(check("[::]:3000", undefined, config)).not.toBeNull();
  });

  it("allows a specific bind address", () => {
    expect(check("192.168.1.10:3000", undefined, { ...base, host: "192.168.1.10" })).toBeNull();
  });
});

describe("hostCheckResponse", () => {
  it("answers 403 forbidden with the error envelope, never a 500", async () => {
    const res = hostCheckResponse(new Request("http://127.0.0.1:3000/api/mcp", { headers: { host: "127.0.0.1:3000", origin: "null" } }), base);
    expect(res?.status).toBe(403);
    const body = await res!.json();
    expect(body).toMatchObject({ ok: false, error: { name: "forbidden", code: 607, detail: { reason: "host_not_allowed", header: "origin" } } });
  });

  it("lets an allowed request through", () => {
    expect(hostCheckResponse(new Request("http://127.0.0.1:3000/", { headers: { host: "localhost:3000" } }), base)).toBeNull();
  });
});
