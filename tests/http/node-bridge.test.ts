import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostCheckResponse } from "@/lib/http/host-check";
import { serveWeb } from "@/lib/http/node-bridge";

/**
 * The bridge the server process uses to answer the agent doors without Next.js
 * (lib/http/node-bridge.ts), on a real Node HTTP server on loopback: bodies past the cap keep the
 * connection usable, a hostile Host header is the door's to refuse (never a 500), JSON answers
 * carry their length, streamed answers stream, and a client that hangs up aborts the handler.
 */

const LIMIT = 1000;
let server: http.Server;
let base: string;
let aborted = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    void serveWeb(
      req,
      res,
      async (r) => {
        const refused = hostCheckResponse(r);
        if (refused) return refused;
        const url = new URL(r.url);
        if (url.pathname === "/stream") {
          const enc = new TextEncoder();
          const body = new ReadableStream({
            async start(c) {
              for (const part of ["one\n", "two\n"]) {
                c.enqueue(enc.encode(part));
                await new Promise((res) => setTimeout(res, 20));
              }
              c.close();
            },
          });
          return new Response(body, { headers: { "content-type": "text/event-stream" } });
        }
        if (url.pathname === "/wait") {
          await new Promise<void>((res) => r.signal.addEventListener("abort", () => res()));
          aborted++;
          return new Response("{}", { headers: { "content-type": "application/json" } });
        }
        const body = new Uint8Array(await r.arrayBuffer());
        return new Response(JSON.stringify({ bytes: body.length, host: r.headers.get("host") }), {
          status: body.length > LIMIT ? 413 : 200,
          headers: { "content-type": "application/json", "set-cookie": "a=1" },
        });
      },
      { serverHost: "127.0.0.1:1", maxBodyBytes: LIMIT },
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** One raw HTTP/1.1 exchange on a fresh socket (for headers fetch will not send). */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const { port } = server.address() as net.AddressInfo;
    const s = net.connect(port, "127.0.0.1", () => s.write(request));
    let out = "";
    s.on("data", (d) => (out += d));
    s.on("end", () => resolve(out));
    s.on("error", reject);
  });
}

describe("node bridge", () => {
  it("reads a body up to the cap, and the kept-alive connection still serves the next request", async () => {
    const sizes = [10, 5_000_000, 10, LIMIT, LIMIT + 1, 10];
    const got: [number, number][] = [];
    for (const size of sizes) {
      const res = await fetch(`${base}/echo`, { method: "POST", body: "x".repeat(size) });
      got.push([res.status, (await res.json()).bytes]);
    }
    expect(got).toEqual([
      [200, 10],
      [413, LIMIT + 1],
      [200, 10],
      [200, LIMIT],
      [413, LIMIT + 1],
      [200, 10],
    ]);
  });

  it.each(["evil.com@127.0.0.1", "evil.example", "127.0.0.1.nip.io", "[::1"])("a Host of %s is refused by the door's check (403), never a 500", async (host) => {
    const out = await raw(`POST /echo HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    expect(out.split("\r\n")[0]).toMatch(/^HTTP\/1\.1 (403|400) /);
  });

  it("passes the Host header on as sent; a JSON answer has its length and every Set-Cookie", async () => {
    const out = await raw(`POST /echo HTTP/1.1\r\nHost: localhost:3000\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    expect(out).toMatch(/^HTTP\/1\.1 200 /);
    expect(out).toMatch(/\r\ncontent-length: \d+\r\n/i);
    expect(out).toMatch(/\r\nset-cookie: a=1\r\n/i);
    expect(out).toContain(`"host":"localhost:3000"`);
  });

  it("streams a streamed answer", async () => {
    const res = await fetch(`${base}/stream`);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(await res.text()).toBe("one\ntwo\n");
  });

  it("aborts the handler's signal when the client hangs up", async () => {
    const before = aborted;
    const controller = new AbortController();
    const pending = fetch(`${base}/wait`, { method: "POST", body: "{}", signal: controller.signal }).catch(() => null);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await pending;
    for (let i = 0; i < 50 && aborted === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(aborted).toBe(before + 1);
  });
});
