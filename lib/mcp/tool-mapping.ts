import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Envelope } from "@/lib/result";
import type { ToolDefinition } from "@/lib/tools/define-tool";
import { inputJsonSchema } from "@/lib/tools/registry";

/**
 * Translation between the registry / the gateway's envelope and MCP's tool shapes
 * (MCP spec 2025-06-18 and later, "Tools": Tool, CallToolResult). No logic of its own.
 */

/** `_meta` key carrying the audit call id on every tool result (MCP `_meta` naming: prefix + "/"). */
export const CALL_ID_META_KEY = "agent-reach/call_id";

/**
 * A registry tool as MCP `tools/list` announces it: name, title, the model-facing description,
 * the JSON Schema of the arguments (from the zod schema) and the behaviour annotations.
 */
export function toMcpTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputJsonSchema(tool) as Tool["inputSchema"],
    annotations: { title: tool.title, ...tool.annotations },
  };
}

/**
 * The MCP result of one call (MCP spec, "Tools" → "Error Handling": a failed call is a result with
 * `isError: true`, not a JSON-RPC error, so the model sees it and can correct itself).
 * - success: `content` = the envelope's `data` as JSON text, `structuredContent` = `data`;
 * - failure: `content` = the whole envelope as JSON text (the same body the HTTP door answers,
 *   `call_id` included, e.g. for `get_call` after 601), `structuredContent` = the envelope.
 * `_meta["agent-reach/call_id"]` holds the call id either way (null when nothing was recorded).
 */
export function toCallToolResult(envelope: Envelope): CallToolResult {
  const _meta = { [CALL_ID_META_KEY]: envelope.call_id };
  if (!envelope.ok) {
    return {
      content: [{ type: "text", text: JSON.stringify(envelope) }],
      structuredContent: envelope as unknown as Record<string, unknown>,
      isError: true,
      _meta,
    };
  }
  const data = envelope.data;
  const isRecord = typeof data === "object" && data !== null && !Array.isArray(data);
  return {
    content: [{ type: "text", text: JSON.stringify(data) }],
    ...(isRecord && { structuredContent: data as Record<string, unknown> }),
    _meta,
  };
}
