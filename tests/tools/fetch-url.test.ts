import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { httpStatusOf, ToolError } from "@/lib/errors";
import { fetchUrlTool, FetchUrlInput, type FetchUrlOutput } from "@/lib/tools/fetch-url";
import { makeFixture, type Fixture } from "../helpers/fixture";
import { makeToolContext } from "../helpers/tool-context";
import { BIG_BYTES, startLoopbackServers, tableResolver, type LoopbackServers } from "../net/loopback-servers";
import { setTestNetwork } from "@/tests/helpers/test-network";

// fetch_url's resolver and allowances come from the test (tests/helpers/test-network.ts).
vi.mock("@/lib/net/network-options", async (importOriginal) => (await import("@/tests/helpers/test-network")).withTestNetwork(await importOriginal()));

/**
 * fetch_url as a tool: schema → subject → preview → run, against loopback servers reached
 * through a table resolver that maps names to 127.0.0.1 (the only allowed address).
 */
let servers: LoopbackServers;
let fx: Fixture;
let restore: () => void = () => {};
const resolver = tableResolver({ "public.test": ["127.0.0.1"], "other.test": ["127.0.0.1"], "internal.test": ["127.0.0.2"] });

beforeAll(async () => {
  servers = await startLoopbackServers();
  fx = await makeFixture();
});
afterAll(async () => {
  await servers.close();
  await fx.cleanup();
});
afterEach(() => restore());

const url = (path: string, host = "public.test") => `http://${host}:${servers.port}${path}`;

async function run(args: Record<string, unknown>) {
  const ctx = makeToolContext(fx.ws);
  const parsed = FetchUrlInput.parse(args);
  const data = await fetchUrlTool.run(parsed, ctx);
  return { data: data as FetchUrlOutput, ctx };
}

async function runError(args: Record<string, unknown>): Promise<ToolError> {
  try {
    await run(args);
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}

describe("fetch_url arguments", () => {
  it.each([
    [{ url: "https://example.com/", timeout: 5 }, true],
    [{ url: "https://example.com/", timeout_ms: 2500, max_bytes: 1024, max_chars: 100, method: "HEAD", follow_redirects: false, extract_text: false }, true],
    [{ url: "https://example.com/", headers: { Accept: "application/json", "X-Api-Key": "k" } }, true],
    [{ url: "https://example.com/", extra: 1 }, false],
    [{ url: "" }, false],
    [{ url: "https://example.com/", method: "POST" }, false],
    [{ url: "https://example.com/", headers: { Host: "internal" } }, false],
    [{ url: "https://example.com/", headers: { "accept-encoding": "identity" } }, false],
    [{ url: "https://example.com/", headers: { "Transfer-Encoding": "chunked" } }, false],
    [{ url: "https://example.com/", headers: { "X-A": "v\r\nInjected: 1" } }, false],
    [{ url: "https://example.com/", headers: { "bad name": "v" } }, false],
    [{ url: "https://example.com/", max_bytes: 6 * 1024 * 1024 }, false],
    [{ url: "https://example.com/", timeout_ms: 0 }, false],
  ])("%j parses: %s", (args, ok) => {
    expect(FetchUrlInput.safeParse(args).success).toBe(ok);
  });

  it("exposes the canonical URL to the policy", async () => {
    const subject = await fetchUrlTool.subject(FetchUrlInput.parse({ url: "HTTP://Docs.Example.COM./a b" }), makeToolContext(fx.ws));
    expect(subject).toEqual({ url: "http://docs.example.com/a%20b" });
  });
});

describe("fetch_url: C25 through the tool, default strict settings", () => {
  beforeEach(() => {
    restore = setTestNetwork({ resolve: tableResolver({ "example.com": ["93.184.216.34"] }) });
  });

  const C25 = [
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://0xA9FEA9FE/",
    "http://0251.0376.0251.0376/",
    "http://169.254.43518/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://127.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://[::]/",
    "http://[::1]/",
    "http://localhost./",
    "http://LOCALHOST/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fd00:ec2::254]/",
    "http://100.100.100.100/",
    "http://192.0.0.192/",
    "http://[64:ff9b::a9fe:a9fe]/",
  ];

  // Every one is blocked from the URL alone: no lookup is needed to refuse it before queueing.
  it.each(C25)("%s → 403 ssrf_blocked in preview (before queueing) and in run", async (u) => {
    const args = FetchUrlInput.parse({ url: u, timeout: 5 });
    const ctx = makeToolContext(fx.ws);
    for (const step of [() => fetchUrlTool.preview!(args, ctx), () => fetchUrlTool.run(args, ctx)]) {
      const err = await step().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ToolError);
      const body = (err as ToolError).toBody();
      expect(body).toMatchObject({ code: 301, name: "ssrf_blocked", detail: { reason: expect.any(String), host: expect.any(String) } });
      expect(httpStatusOf(body.name)).toBe(403);
    }
    expect(ctx.notes.target).toBe((await fetchUrlTool.subject(args, ctx)).url);
  });

  it("lets the control through the checks (https://example.com/ with a public answer)", async () => {
    const preview = await fetchUrlTool.preview!(FetchUrlInput.parse({ url: "https://example.com/" }), makeToolContext(fx.ws));
    expect(preview.warnings).toEqual(["Connects to example.com (its addresses are resolved and checked when the call runs)"]);
  });

  it("never looks a name up before the call runs: a DNS query would carry the name out before anyone decided", async () => {
    const asked: string[] = [];
    restore();
    restore = setTestNetwork({
      resolve: async (host) => {
        asked.push(host);
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    for (const host of ["c2VjcmV0.attacker.example", "secret-value.example.net", "internal.test"]) {
      await fetchUrlTool.preview!(FetchUrlInput.parse({ url: `https://${host}/?d=x` }), makeToolContext(fx.ws));
    }
    expect(asked).toEqual([]);
    // At run time the name is resolved and the loopback answer refused.
    const err = await fetchUrlTool.run(FetchUrlInput.parse({ url: "https://internal.test/" }), makeToolContext(fx.ws)).catch((e: ToolError) => e.toBody());
    expect(err).toMatchObject({ name: "ssrf_blocked" });
    expect(asked).toEqual(["internal.test"]);
  });
});

describe("fetch_url against the loopback server", () => {
  beforeEach(() => {
    restore = setTestNetwork({ resolve: resolver, allowAddresses: ["127.0.0.1"] });
  });

  it("returns text with the result fields and audit notes", async () => {
    const { data, ctx } = await run({ url: url("/text") });
    expect(data).toMatchObject({
      url: url("/text"),
      status: 200,
      content_type: "text/plain",
      charset: "utf-8",
      content: "hello world\n",
      truncated: false,
      original_length: 12,
      bytes: 12,
      max_bytes_reached: false,
      extracted_text: false,
      redirects: [],
    });
    expect(data.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(data.duration_ms).toBeGreaterThanOrEqual(0);
    expect(ctx.notes).toMatchObject({ target: url("/text"), truncated: false, bytesOut: 12 });
    expect(ctx.notes.summary).toContain("GET 200");
  });

  it.each([
    ["/json", { content: '{"ok":true,"items":[1,2,3]}', content_type: "application/json" }],
    ["/latin1", { content: "café naïve", charset: "windows-1252" }],
    ["/sjis-meta", { content: "日本", charset: "shift_jis", extracted_text: true }],
    ["/utf16", { content: "hi ✓", charset: "utf-16le" }],
    ["/gzip", { content: "compressed text ".repeat(1000), bytes: 16000 }],
    ["/octet-text", { content: "plain text served as octet-stream\n" }],
    ["/missing", { status: 404, content: "not here\n" }],
  ])("GET %s", async (path, expected) => {
    const { data } = await run({ url: url(path) });
    expect(data).toMatchObject(expected);
  });

  it("reduces HTML to readable text, or returns it raw on request", async () => {
    const { data } = await run({ url: url("/html") });
    expect(data.extracted_text).toBe(true);
    expect(data.content).toBe(
      `Test page\n\n# Welcome\n\nRead the [introduction](${url("/docs/intro")}) & more.\n\n- first\n- second`,
    );
    const raw = await run({ url: url("/html"), extract_text: false });
    expect(raw.data.extracted_text).toBe(false);
    expect(raw.data.content).toContain("<script>");
  });

  it("stops reading at max_bytes and says so", async () => {
    const { data, ctx } = await run({ url: url("/big"), max_bytes: 1000 });
    expect(data).toMatchObject({ bytes: 1000, max_bytes_reached: true, truncated: true, original_length: 1000 });
    expect(data.content).toBe("a".repeat(1000));
    expect(ctx.notes.truncated).toBe(true);
  });

  it("caps content at max_chars and reports the original length", async () => {
    const { data } = await run({ url: url("/big"), max_chars: 50 });
    expect(data.content).toHaveLength(50);
    expect(data).toMatchObject({ truncated: true, max_bytes_reached: true, bytes: 5 * 1024 * 1024 });
    expect(data.original_length).toBeLessThan(BIG_BYTES);
    const small = await run({ url: url("/gzip"), max_chars: 10 });
    expect(small.data).toMatchObject({ content: "compressed", truncated: true, original_length: 16000, max_bytes_reached: false });
  });

  it("refuses binary bodies with binary_file", async () => {
    const err = await runError({ url: url("/binary") });
    expect(err.errorName).toBe("binary_file");
    expect(err.detail).toMatchObject({ status: 200, content_type: "image/png", bytes: 264 });
  });

  it("HEAD returns status and headers without content", async () => {
    const { data } = await run({ url: url("/text"), method: "HEAD" });
    expect(data).toMatchObject({ status: 200, content: "", bytes: 0, truncated: false });
  });

  it("returns only a safe subset of response headers", async () => {
    const { data } = await run({ url: url("/cookie") });
    expect(data.headers).toMatchObject({ etag: '"v1"', "content-type": "text/plain" });
    expect(data.headers).not.toHaveProperty("set-cookie");
    expect(data.headers).not.toHaveProperty("x-internal-token");
  });

  it("sends the agent's headers and a User-Agent of its own", async () => {
    const { data } = await run({ url: url("/headers"), headers: { "X-Trace": "abc", Accept: "application/json" } });
    const echoed = JSON.parse(data.content) as Record<string, string>;
    expect(echoed).toMatchObject({ "x-trace": "abc", accept: "application/json" });
    expect(echoed["user-agent"]).toMatch(/^agent-reach\//);
    const custom = await run({ url: url("/headers"), headers: { "User-Agent": "custom/1.0" } });
    expect(JSON.parse(custom.data.content)["user-agent"]).toBe("custom/1.0");
  });

  it("keeps credentials on a same-origin redirect and drops them when the redirect leaves the origin", async () => {
    const headers = { Authorization: "Bearer s3cret", Cookie: "a=b", "X-Trace": "abc" };
    const same = await run({ url: url(`/redirect?to=${encodeURIComponent("/headers")}`), headers });
    expect(JSON.parse(same.data.content)).toMatchObject({ authorization: "Bearer s3cret", cookie: "a=b" });
    const cross = await run({ url: url(`/redirect?to=${encodeURIComponent(url("/headers", "other.test"))}`), headers });
    const echoed = JSON.parse(cross.data.content) as Record<string, string>;
    expect(echoed).not.toHaveProperty("authorization");
    expect(echoed).not.toHaveProperty("cookie");
    expect(echoed["x-trace"]).toBe("abc");
    expect(cross.data.redirects).toEqual([{ url: url(`/redirect?to=${encodeURIComponent(url("/headers", "other.test"))}`), status: 302, location: url("/headers", "other.test") }]);
    expect(cross.data.url).toBe(url("/headers", "other.test"));
  });

  it("returns the redirect itself when follow_redirects is false", async () => {
    const { data } = await run({ url: url("/redirect?to=/text&status=308"), follow_redirects: false });
    expect(data).toMatchObject({ status: 308, redirects: [] });
    expect(data.headers.location).toBe("/text");
  });

  it("refuses a redirect into the internal listener with ssrf_blocked, listing the hops", async () => {
    const before = servers.internalConnections();
    const err = await runError({ url: url(`/redirect?to=${encodeURIComponent(url("/", "internal.test"))}`) });
    expect(err.errorName).toBe("ssrf_blocked");
    expect(err.detail).toMatchObject({ reason: "loopback", address: "127.0.0.2", host: "internal.test", url: url("/", "internal.test") });
    expect(servers.internalConnections()).toBe(before);
  });

  it.each([
    [{ timeout_ms: 300 }, 300],
    [{ timeout: 0.3 }, 300],
    [{ timeout: 60, timeout_ms: 250 }, 250],
  ])("times out with fetch_timeout (%j)", async (limits, ms) => {
    const err = await runError({ url: url("/slow"), ...limits });
    expect(err.errorName).toBe("fetch_timeout");
    expect(err.detail).toMatchObject({ timeout_ms: ms, url: url("/slow") });
  });

  it("reports network failures as fetch_failed with a reason", async () => {
    const dns = await runError({ url: "http://no-such-host.test/" });
    expect(dns.detail).toMatchObject({ reason: "dns", host: "no-such-host.test" });
    expect(dns.errorName).toBe("fetch_failed");
  });

  it("refuses credentials in the URL and non-http schemes as invalid_arguments", async () => {
    expect((await runError({ url: `http://user:pw@public.test:${servers.port}/text` })).detail.reason).toBe("credentials_in_url");
    expect((await runError({ url: "ftp://public.test/file" })).errorName).toBe("invalid_arguments");
  });

  it("previews what a reviewer should know", async () => {
    const preview = await fetchUrlTool.preview!(FetchUrlInput.parse({ url: url("/text"), headers: { Authorization: "Bearer x" } }), makeToolContext(fx.ws));
    expect(preview.warnings).toEqual(["Connects to public.test (its addresses are resolved and checked when the call runs)", "Sends credentials (Authorization or Cookie header)."]);
  });
});
