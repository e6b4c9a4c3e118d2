import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { getConfig } from "@/lib/config";
import { callTool, type Caller } from "@/lib/gateway/call-tool";
import { AGENT_INSTRUCTIONS } from "@/lib/mcp/instructions";
import { progressReporter } from "@/lib/mcp/progress";
import { toCallToolResult, toMcpTool } from "@/lib/mcp/tool-mapping";
import { TOOLS } from "@/lib/tools/registry";
import pkg from "@/package.json";

/**
 * Builds the MCP server for one HTTP request (stateless Streamable HTTP: see lib/mcp/handle-request.ts).
 * It uses the SDK's low-level `Server`, so the registry stays the one source of tools:
 * - `tools/list` → every registry tool (name, title, description, inputSchema, annotations);
 * - `tools/call` → `callTool(caller, name, arguments)` on door "mcp"; a call the policy asks about
 *   waits up to AGENT_REACH_APPROVAL_WAIT_DEFAULT_S (bounded by …_MAX_S), reporting progress when
 *   the request has a progressToken, then answers 601 with the call_id for `get_call`.
 * Failures are tool results with `isError: true` (lib/mcp/tool-mapping.ts), never JSON-RPC errors.
 * @param caller the authenticated agent and its session key.
 * @param requestSignal aborted when the HTTP request goes away (stops a wait; a running call finishes).
 */
export function createMcpServer(caller: Caller, requestSignal?: AbortSignal): Server {
  const server = new Server(
    { name: "agent-reach", title: "Agent Reach", version: pkg.version },
    { capabilities: { tools: { listChanged: false } }, instructions: AGENT_INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.map(toMcpTool) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progress = progressReporter(extra.sendNotification, request.params._meta?.progressToken);
    const signal = requestSignal ? AbortSignal.any([extra.signal, requestSignal]) : extra.signal;
    try {
      const envelope = await callTool(caller, request.params.name, request.params.arguments ?? {}, {
        waitMs: getConfig().approvalWaitDefaultMs,
        signal,
        onPending: progress.onPending,
      });
      return toCallToolResult(envelope);
    } finally {
      progress.stop();
    }
  });

  return server;
}
