import { createMcpHandler, Server, type AuthInfo, type McpHttpHandler, type McpRequestContext } from "@modelcontextprotocol/server";
import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { getConfig } from "@/lib/config";
import { callTool, type Caller } from "@/lib/gateway/call-tool";
import { AGENT_INSTRUCTIONS } from "@/lib/mcp/instructions";
import { progressReporter } from "@/lib/mcp/progress";
import { toCallToolResult, toMcpTool, traceparentOf } from "@/lib/mcp/tool-mapping";
import { TOOLS } from "@/lib/tools/registry";
import pkg from "@/package.json";

/**
 * The MCP door for clients of the current revision (2026-07-28: stateless, `server/discover`
 * instead of `initialize`, protocol version and client identity carried by every request), served
 * by the official SDK's v2 server package (`createMcpHandler`, strict: only modern requests reach
 * it; lib/mcp/handle-request.ts routes 2025-era requests to the v1 server in lib/mcp/server.ts).
 *
 * Same registry, same pipeline, same results as the older revisions:
 * - `tools/list` → every registry tool (input and output schemas, annotations; no
 *   `execution.taskSupport`, which this revision removed);
 * - `tools/call` → `callTool` on door "mcp"; a call the policy asks about waits up to
 *   AGENT_REACH_APPROVAL_WAIT_DEFAULT_S with progress notifications when the request carries a
 *   progressToken, then answers 601 with the call_id for `get_call`. (Tasks in this revision are
 *   the `io.modelcontextprotocol/tasks` extension, which the v2 server package does not serve yet;
 *   a modern client collects a long approval with `get_call`.)
 *
 * The agent comes from the bearer token the door verified, passed through `authInfo`.
 */

/** `authInfo.extra` key holding the authenticated caller. */
const CALLER_KEY = "agent-reach/caller";

/** The per-request server for one modern request. */
function buildServer(context: McpRequestContext): Server {
  const caller = context.authInfo?.extra?.[CALLER_KEY] as Caller | undefined;
  if (!caller) throw new Error("modern MCP request without an authenticated caller");
  const server = new Server(
    { name: "agent-reach", title: "Agent Reach", version: pkg.version },
    { capabilities: { tools: { listChanged: false }, logging: {} }, instructions: AGENT_INSTRUCTIONS },
  );
  server.setRequestHandler("tools/list", async () => ({
    tools: TOOLS.map((tool) => {
      const { execution: _execution, ...listed } = toMcpTool(tool);
      return listed as never;
    }),
  }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const meta = request.params._meta as Record<string, unknown> | undefined;
    const progress = progressReporter(
      (notification: ServerNotification) => ctx.mcpReq.notify(notification as never),
      meta?.progressToken as ProgressToken | undefined,
    );
    const requestSignal = context.requestInfo?.signal;
    const signal = requestSignal ? AbortSignal.any([ctx.mcpReq.signal, requestSignal]) : ctx.mcpReq.signal;
    try {
      const envelope = await callTool({ ...caller, traceparent: traceparentOf(meta) }, request.params.name, request.params.arguments ?? {}, {
        waitMs: getConfig().approvalWaitDefaultMs,
        signal,
        onPending: progress.onPending,
      });
      return toCallToolResult(envelope) as never;
    } finally {
      progress.stop();
    }
  });
  return server;
}

const HANDLER_KEY = Symbol.for("agent-reach.mcp.modern-handler");

/** The process-wide modern handler (one per process, shared by every route bundle). */
function modernHandler(): McpHttpHandler {
  const store = globalThis as unknown as Record<symbol, McpHttpHandler | undefined>;
  store[HANDLER_KEY] ??= createMcpHandler(buildServer, {
    legacy: "reject",
    responseMode: "auto",
    maxRequestBodySize: getConfig().maxBodyBytes,
    onerror: (err) => console.warn(`[agent-reach] MCP (2026-07-28): ${err.message}`),
  });
  return store[HANDLER_KEY];
}

/**
 * Answers one modern (2026-07-28) MCP request.
 * @param req the HTTP request (its body already read: pass it as `parsedBody`).
 * @param caller the authenticated agent.
 * @param parsedBody the JSON body.
 * @returns the SDK's response: JSON, or SSE when progress notifications precede the result.
 */
export function handleModernRequest(req: Request, caller: Caller, parsedBody: unknown): Promise<Response> {
  const authInfo: AuthInfo = {
    token: "verified",
    clientId: caller.agent?.id ?? "anonymous",
    scopes: [],
    extra: { [CALLER_KEY]: caller },
  };
  return modernHandler().fetch(req, { authInfo, parsedBody });
}
