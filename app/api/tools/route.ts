import { getConfig } from "@/lib/config";
import { json } from "@/lib/http/respond";
import { listTools } from "@/lib/tools/registry";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/tools — every tool with its JSON Schema (from the zod schema via `z.toJSONSchema`),
 * description, risk and MCP annotations; ready for OpenAI / Anthropic function calling.
 * Public: it describes the interface, not the workspace.
 * Response: `{ tools: [{name, title, description, input_schema, risk, annotations}],
 * approval_wait: {default_s, max_s} }`: how long a tool call waits for a reviewer without a
 * `Prefer: wait`, and at most (the agent-reach CLI waits as long when it follows a queued call
 * itself, see lib/cli/tools.mjs).
 */
export const GET = guardDoor(async function GET(_req: Request): Promise<Response> {
  const config = getConfig();
  return json({
    tools: listTools(),
    approval_wait: { default_s: Math.round(config.approvalWaitDefaultMs / 1000), max_s: Math.round(config.approvalWaitMaxMs / 1000) },
  });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
