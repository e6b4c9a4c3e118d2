import { AGENT_INSTRUCTIONS } from "@/lib/mcp/instructions";

/**
 * GET /api/agent-instructions — how a model should use the tools (markdown): the same text the MCP
 * server sends as `instructions`, for agents on the HTTP door or the CLI to put in their prompt.
 * Public: it describes the interface, not the workspace.
 */
export async function GET(): Promise<Response> {
  return new Response(AGENT_INSTRUCTIONS, {
    headers: { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-store" },
  });
}
