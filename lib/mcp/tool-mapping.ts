import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Envelope } from "@/lib/result";
import { annotationsOf, type ToolDefinition } from "@/lib/tools/define-tool";
import { inputJsonSchema, outputJsonSchema } from "@/lib/tools/registry";

/**
 * Translation between the registry / the gateway's envelope and MCP's tool shapes
 * (MCP spec 2025-06-18 and later, "Tools": Tool, CallToolResult). No logic of its own.
 */

/** `_meta` key carrying the audit call id on every tool result (MCP `_meta` naming: prefix + "/"). */
export const CALL_ID_META_KEY = "agent-reach/call_id";

/**
 * JSON Schema of a failed call's `structuredContent`: the gateway's error envelope, the same body
 * the HTTP door answers (`{ok: false, call_id, error: {code, name, message, detail, retryable,
 * retry_after_ms}}`).
 */
export const ERROR_ENVELOPE_JSON_SCHEMA = {
  type: "object",
  properties: {
    ok: { const: false },
    call_id: { type: ["string", "null"] },
    error: {
      type: "object",
      properties: {
        code: { type: "integer" },
        name: { type: "string" },
        message: { type: "string" },
        detail: { type: "object" },
        retryable: { type: "boolean" },
        retry_after_ms: { type: ["integer", "null"] },
      },
      required: ["code", "name", "message"],
    },
  },
  required: ["ok", "error"],
} as const;

/**
 * A tool's MCP `outputSchema`: a successful call's `structuredContent` is its `data` (the tool's
 * output schema); a failed call's (`isError: true`) is the error envelope. Clients validate
 * `structuredContent` whether or not `isError` is set, so the schema admits both.
 */
export function mcpOutputSchema(tool: ToolDefinition): Tool["outputSchema"] {
  return { type: "object", anyOf: [outputJsonSchema(tool), ERROR_ENVELOPE_JSON_SCHEMA] } as Tool["outputSchema"];
}

/**
 * A registry tool as MCP `tools/list` announces it: name, title, the model-facing description,
 * the JSON Schemas of the arguments and of the result (from the zod schemas), the behaviour
 * annotations (from the definition: its risk level and overrides) and `execution.taskSupport:
 * "optional"` (any call may wait for a reviewer, so a client may run any of them as a task).
 */
export function toMcpTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputJsonSchema(tool) as Tool["inputSchema"],
    outputSchema: mcpOutputSchema(tool),
    annotations: { title: tool.title, ...annotationsOf(tool) },
    execution: { taskSupport: "optional" },
  };
}

/** W3C Trace Context `traceparent` (version 00 layout; other versions keep the same first four fields). */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-[\x21-\x7e]*)?$/;

/**
 * The `traceparent` of a request's `_meta` (MCP: W3C Trace Context carried in `_meta.traceparent`),
 * when it is well-formed (lower-case hex, non-zero trace and parent ids, version not ff); else null.
 * Capped at 256 characters.
 */
export function traceparentOf(meta: unknown): string | null {
  if (typeof meta !== "object" || meta === null) return null;
  const value = (meta as Record<string, unknown>).traceparent;
  if (typeof value !== "string" || value.length > 256 || !TRACEPARENT.test(value)) return null;
  const [version, traceId, parentId] = value.split("-");
  if (version === "ff" || /^0+$/.test(traceId) || /^0+$/.test(parentId)) return null;
  if (version === "00" && value.length !== 55) return null;
  return value;
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
