import http from "node:http";
import https from "node:https";
import type { AddressInfo, Server, Socket } from "node:net";
import zlib from "node:zlib";
import type { ResolvedAddress, Resolver } from "@/lib/net/network-options";
import { SERVER_CERT_PEM, SERVER_KEY_PEM } from "./tls-fixture";

/**
 * Servers for the fetch_url tests, all on loopback:
 * - the "public" server on 127.0.0.1:port (HTTP) and 127.0.0.1:httpsPort (HTTPS, certificate for
 *   example.com and public.test signed by the test CA), serving the routes below;
 * - the "internal" counting listener on 127.0.0.2 at the SAME port, standing for an address that
 *   must never be reached: it counts every TCP connection and answers "INTERNAL-SECRET".
 * Tests allow only 127.0.0.1 (or nothing) and map names to addresses with `tableResolver`.
 */
export interface LoopbackServers {
  port: number;
  httpsPort: number;
  /** TCP connections accepted by the public servers (HTTP + HTTPS). */
  publicConnections(): number;
  /** TCP connections accepted by the internal listener. */
  internalConnections(): number;
  close(): Promise<void>;
}

/** Bytes of the /big route. */
export const BIG_BYTES = 6 * 1024 * 1024;

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://placeholder");
  const send = (status: number, type: string | null, body: string | Buffer, extra: http.OutgoingHttpHeaders = {}) => {
    res.writeHead(status, { ...(type && { "content-type": type }), ...extra });
    res.end(body);
  };
  switch (url.pathname) {
    case "/text":
      return send(200, "text/plain; charset=utf-8", "hello world\n");
    case "/html":
      return send(
        200,
        "text/html; charset=utf-8",
        `<!doctype html><html><head><title>Test page</title><style>p{color:red}</style><script>var secret = "</p>";</script></head>
<body><nav><a href="/home">Home</a></nav><h1>Welcome</h1><p>Read the <a href="/docs/intro">introduction</a> &amp; more.</p>
<ul><li>first</li><li>second</li></ul></body></html>`,
      );
    case "/latin1":
      return send(200, "text/plain; charset=iso-8859-1", Buffer.from("café naïve", "latin1"));
    case "/sjis-meta":
      // "日本" in Shift_JIS, declared only by <meta charset>.
      return send(200, "text/html", Buffer.concat([Buffer.from('<html><head><meta charset="shift_jis"></head><body><p>'), Buffer.from([0x93, 0xfa, 0x96, 0x7b]), Buffer.from("</p></body></html>")]));
    case "/utf16":
      return send(200, "text/plain", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hi ✓", "utf16le")]));
    case "/json":
      return send(200, "application/json", '{"ok":true,"items":[1,2,3]}');
    case "/octet-text":
      return send(200, "application/octet-stream", "plain text served as octet-stream\n");
    case "/binary":
      return send(200, "image/png", Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(256)]));
    case "/gzip":
      return send(200, "text/plain; charset=utf-8", zlib.gzipSync("compressed text ".repeat(1000)), { "content-encoding": "gzip" });
    case "/big": {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "a");
      let sent = 0;
      const pump = () => {
        while (sent < BIG_BYTES) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("error", () => {});
      return pump();
    }
    case "/slow":
      return; // never answers
    case "/headers":
      return send(200, "application/json", JSON.stringify(req.headers));
    case "/missing":
      return send(404, "text/plain", "not here\n");
    case "/cookie":
      return send(200, "text/plain", "with cookie\n", { "set-cookie": "session=secret", "x-internal-token": "t0k3n", etag: '"v1"' });
    case "/redirect":
      res.writeHead(Number(url.searchParams.get("status") ?? 302), { location: url.searchParams.get("to") ?? "/" });
      return void res.end();
    case "/loop":
      res.writeHead(302, { location: "/loop" });
      return void res.end();
    default: {
      const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
      if (chain) {
        const n = Number(chain[1]);
        if (n === 0) return send(200, "text/plain", "end of chain\n");
        res.writeHead(301, { location: `/chain/${n - 1}` });
        return void res.end();
      }
      return send(404, "text/plain", "no route\n");
    }
  }
}

function track(server: Server, counter: { n: number }, sockets: Set<Socket>): void {
  server.on("connection", (socket: Socket) => {
    counter.n++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Starts the servers; retries when the port picked on 127.0.0.1 is taken on 127.0.0.2. */
export async function startLoopbackServers(): Promise<LoopbackServers> {
  const publicCount = { n: 0 };
  const internalCount = { n: 0 };
  const sockets = new Set<Socket>();
  const httpServer = http.createServer(route);
  const httpsServer = https.createServer({ cert: SERVER_CERT_PEM, key: SERVER_KEY_PEM }, route);
  track(httpServer, publicCount, sockets);
  track(httpsServer, publicCount, sockets);
  const internal = http.createServer((_req, res) => res.end("INTERNAL-SECRET\n"));
  track(internal, internalCount, sockets);

  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await listen(httpServer, "127.0.0.1", 0);
    try {
      await listen(internal, "127.0.0.2", port);
      break;
    } catch (err) {
      await new Promise((r) => httpServer.close(r));
      if (attempt >= 5) throw err;
    }
  }
  const httpsPort = await listen(httpsServer, "127.0.0.1", 0);
  return {
    port,
    httpsPort,
    publicConnections: () => publicCount.n,
    internalConnections: () => internalCount.n,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([httpServer, httpsServer, internal].map((s) => new Promise((r) => s.close(r))));
    },
  };
}

/** A resolver answering from a table; unknown names fail with ENOTFOUND. Counts calls per name. */
export function tableResolver(table: Record<string, string[] | ((call: number) => string[])>): Resolver & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const resolve = (async (hostname: string): Promise<ResolvedAddress[]> => {
    const call = (calls.get(hostname) ?? 0) + 1;
    calls.set(hostname, call);
    const entry = table[hostname];
    if (entry === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    const addresses = typeof entry === "function" ? entry(call) : entry;
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  }) as Resolver & { calls: Map<string, number> };
  resolve.calls = calls;
  return resolve;
}
