import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback HTTP proxy that adds `Authorization: Bearer <token>` to every request and passes
 * everything else through unchanged (Host and Origin included, bodies and SSE streams piped), for
 * clients that cannot send a header of their own (the MCP conformance suite).
 */
export interface AuthProxy {
  url: string;
  close(): Promise<void>;
}

export async function startAuthProxy(target: string, token: string): Promise<AuthProxy> {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const up = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
        setHost: false,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
