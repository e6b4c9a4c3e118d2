import { json } from "@/lib/http/respond";
import { listTools } from "@/lib/tools/registry";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/tools — every tool with its JSON Schema (from the zod schema via `z.toJSONSchema`),
 * description, risk and MCP annotations; ready for OpenAI / Anthropic function calling.
 * Public: it describes the interface, not the workspace.
 * Response: `{ tools: [{name, title, description, input_schema, risk, annotations}] }`.
 */
export const GET = guardDoor(async function GET(_req: Request): Promise<Response> {
  return json({ tools: listTools() });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
