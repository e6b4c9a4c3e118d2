import { AGENT_INSTRUCTIONS } from "@/lib/mcp/instructions";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/agent-instructions — how a model should use the tools (markdown): the same text the MCP
 * server sends as `instructions`, for agents on the HTTP door or the CLI to put in their prompt.
 * Public: it describes the interface, not the workspace.
 */
export const GET = guardDoor(async function GET(_req: Request): Promise<Response> {
  return new Response(AGENT_INSTRUCTIONS, {
    headers: { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-store" },
  });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
