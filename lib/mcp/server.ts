import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type CreateTaskResult } from "@modelcontextprotocol/sdk/types.js";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { callTool, type Caller } from "@/lib/gateway/call-tool";
import { AGENT_INSTRUCTIONS } from "@/lib/mcp/instructions";
import { progressReporter } from "@/lib/mcp/progress";
import { callTaskStore, taskOf } from "@/lib/mcp/tasks";
import { toCallToolResult, toMcpTool, traceparentOf } from "@/lib/mcp/tool-mapping";
import { TOOLS } from "@/lib/tools/registry";
import pkg from "@/package.json";

/**
 * Builds the MCP server (revisions 2025-03-26 to 2025-11-25) for one HTTP request (stateless
 * Streamable HTTP: see lib/mcp/handle-request.ts). It uses the SDK's low-level `Server`, so the
 * registry stays the one source of tools:
 * - `tools/list` → every registry tool (name, title, description, inputSchema, outputSchema,
 *   annotations, `execution.taskSupport: "optional"`);
 * - `tools/call` → `callTool(caller, name, arguments)` on door "mcp":
 *   - sent as a task (`params.task`, MCP Tasks): the call is recorded and decided at once and the
 *     answer is a task standing for it (lib/mcp/tasks.ts); a call the policy asks about is a task
 *     in `working` until a reviewer decides, then follows the call to `completed` / `failed`;
 *   - sent plainly: a call the policy asks about waits up to AGENT_REACH_APPROVAL_WAIT_DEFAULT_S
 *     (bounded by …_MAX_S), reporting progress when the request has a progressToken, then
 *     answers 601 with the call_id for `get_call`;
 * - `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` → the SDK's task handlers over the
 *   agent's calls (cancelling withdraws a pending call).
 * Failures are tool results with `isError: true` (lib/mcp/tool-mapping.ts), never JSON-RPC errors.
 * A W3C `traceparent` in the request's `_meta` is stored with the call.
 * @param caller the authenticated agent and its session key.
 * @param requestSignal aborted when the HTTP request goes away (stops a wait; a running call finishes).
 */
export function createMcpServer(caller: Caller, requestSignal?: AbortSignal): Server {
  const server = new Server(
    { name: "agent-reach", title: "Agent Reach", version: pkg.version },
    {
      capabilities: {
        tools: { listChanged: false },
        // logging/setLevel is accepted (clients send it); the door writes no log notifications.
        logging: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      instructions: AGENT_INSTRUCTIONS,
      taskStore: callTaskStore(caller.agent?.id ?? null),
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.map(toMcpTool) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
    const signal = requestSignal ? AbortSignal.any([extra.signal, requestSignal]) : extra.signal;
    const callerOfRequest = { ...caller, traceparent: traceparentOf(request.params._meta) };
    if (request.params.task) {
      // A task answers at once: nothing waits on this request, the client polls the task.
      const envelope = await callTool(callerOfRequest, request.params.name, request.params.arguments ?? {}, { waitMs: 0, signal });
      const row = envelope.call_id ? await db().toolCall.findUnique({ where: { id: envelope.call_id } }) : null;
      if (!row) throw new Error("the call was not recorded");
      return { task: taskOf(row) };
    }
    const progress = progressReporter(extra.sendNotification, request.params._meta?.progressToken);
    try {
      const envelope = await callTool(callerOfRequest, request.params.name, request.params.arguments ?? {}, {
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
