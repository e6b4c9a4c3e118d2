/**
 * The server process of `npm start` (spawned by scripts/start.ts; not run by hand): one Node HTTP
 * server on HOST:PORT that hands the agent doors' hot path straight to the gateway and everything
 * else to Next.js (a production build, through Next's request handler).
 *
 * Served here, without Next.js: `POST /api/tools/{name}` and `/api/mcp` (GET, POST, DELETE), the
 * doors agents call many times a second, and `POST /api/approvals/{id}/approve|reject`, the
 * reviewer's decision an agent is waiting on. They run the very route handlers Next.js would run
 * (app/api/tools/[tool]/route.ts, app/api/mcp/route.ts), after the same Host/Origin check
 * `proxy.ts` makes for every request. Next.js's own per-request work (routing, the proxy, its
 * request and response adapters) cost more than the audited call itself; measured figures are in
 * docs/BENCHMARKS.md. Any other path or spelling (a trailing slash, an encoded name, `GET
 * /api/tools`) goes to Next.js, which answers it exactly as before.
 *
 * Start-up work (lib/runtime/server-start.ts: recovery, the executor of approved calls, sweeps,
 * killing running commands on shutdown) runs here before Next.js prepares, so the calls this
 * process serves and the approved calls it runs share one copy of the command runner's state;
 * the instrumentation hook then finds it done. SIGTERM/SIGINT stop the server.
 *
 * Arguments: `--host H --port P` (defaults: the configuration's host and port). Environment:
 * `AGENT_REACH_DIRECT_DOORS=off` sends every request through Next.js (for comparison, or as a
 * way around a problem in the direct path).
 */
import http from "node:http";
import next from "next";
import { getConfig } from "@/lib/config";
import { hostCheckResponse } from "@/lib/http/host-check";
import { serveWeb } from "@/lib/http/node-bridge";
import { startServer } from "@/lib/runtime/server-start";
import { InstanceLockError } from "@/lib/runtime/instance-lock";
import { POST as toolPost } from "@/app/api/tools/[tool]/route";
import { DELETE as mcpDelete, GET as mcpGet, POST as mcpPost } from "@/app/api/mcp/route";
import { POST as approvePost } from "@/app/api/approvals/[callId]/approve/route";
import { POST as rejectPost } from "@/app/api/approvals/[callId]/reject/route";

/** Tool names as the registry spells them: only these exact paths take the direct route. */
const TOOL_PATH = /^\/api\/tools\/([a-z][a-z0-9_]{0,63})$/;
/** A reviewer's approve or reject of a call id as the gateway spells them (what a waiting agent waits on). */
const DECISION_PATH = /^\/api\/approvals\/([a-z]+_[a-z0-9]{1,64})\/(approve|reject)$/;

type Handler = (req: Request) => Promise<Response>;

/** The direct handler of a request, or null when Next.js serves it. */
function directRoute(method: string | undefined, rawUrl: string | undefined): Handler | null {
  const pathname = (rawUrl ?? "/").split("?")[0];
  if (pathname === "/api/mcp") {
    if (method === "POST") return mcpPost;
    if (method === "GET") return mcpGet;
    if (method === "DELETE") return mcpDelete;
    return null;
  }
  const tool = method === "POST" ? TOOL_PATH.exec(pathname) : null;
  if (tool) {
    const params = Promise.resolve({ tool: tool[1] });
    return (req) => toolPost(req, { params });
  }
  const decision = method === "POST" ? DECISION_PATH.exec(pathname) : null;
  if (decision) {
    const params = Promise.resolve({ callId: decision[1] });
    const handler = decision[2] === "approve" ? approvePost : rejectPost;
    return (req) => handler(req, { params });
  }
  return null;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const config = getConfig();
  const hostname = argValue("host") ?? config.host;
  const port = Number(argValue("port") ?? config.port);
  process.title = "agent-reach-server";
  await startServer();
  // `next` is a CommonJS module whose default export is the factory.
  const factory = ((next as unknown as { default?: typeof next }).default ?? next) as typeof next;
  const app = factory({ dev: false, dir: process.cwd(), hostname, port });
  await app.prepare();
  const nextHandler = app.getRequestHandler();
  const directDoors = process.env.AGENT_REACH_DIRECT_DOORS !== "off";
  const serverHost = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;

  const server = http.createServer((req, res) => {
    const direct = directDoors ? directRoute(req.method, req.url) : null;
    if (!direct) {
      void nextHandler(req, res);
      return;
    }
    void serveWeb(
      req,
      res,
      async (request) => {
        // The same DNS-rebinding check proxy.ts makes in front of Next.js.
        const refused = hostCheckResponse(request);
        return refused ?? direct(request);
      },
      { serverHost, maxBodyBytes: config.maxBodyBytes },
    ).catch((err) => {
      console.error("[agent-reach] answering failed:", err);
      res.destroy();
    });
  });
  server.on("upgrade", app.getUpgradeHandler());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => resolve());
  });
  console.log(`[agent-reach] server listening on ${serverHost}`);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.once(signal, () => {
      server.close();
      server.closeAllConnections();
      // Running commands' process groups are killed by server-start's own handler; let it run first.
      setImmediate(() => process.exit(0));
    });
  }
}

main().catch((err) => {
  // A second server on the same data directory is a user's mistake: the message says what to do.
  // So is a port another program took since `npm start` checked it.
  const inUse = (err as NodeJS.ErrnoException).code === "EADDRINUSE" ? `port ${argValue("port") ?? getConfig().port} is in use by another program: stop it, or choose another port with PORT.` : null;
  const detail = err instanceof InstanceLockError ? err.message : (inUse ?? (err as Error).stack ?? err);
  console.error(`[agent-reach] the server could not start: ${detail}`);
  process.exit(1);
});
