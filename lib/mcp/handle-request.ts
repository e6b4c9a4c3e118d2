import { isLegacyRequest } from "@modelcontextprotocol/server";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { requireAgent } from "@/lib/http/auth";
import { hostCheckResponse } from "@/lib/http/host-check";
import { methodNotAllowedResponse } from "@/lib/http/methods";
import { readJsonBody } from "@/lib/http/respond";
import { newId } from "@/lib/ids";
import { handleModernRequest } from "@/lib/mcp/modern";
import { createMcpServer } from "@/lib/mcp/server";

/**
 * The MCP door over Streamable HTTP (MCP spec 2025-03-26 and later, "Transports").
 *
 * Revisions, negotiated per request: a request in the 2026-07-28 shape (protocol version and
 * client identity in `_meta`, `server/discover`) goes to the v2 SDK's server
 * (lib/mcp/modern.ts); everything else (2025-03-26, 2025-06-18, 2025-11-25: `initialize`, then
 * requests without the per-request envelope) to the v1 SDK's server (lib/mcp/server.ts), which
 * also serves MCP Tasks. The SDK's own classifier (`isLegacyRequest`) decides.
 *
 * Stateless transport, with session ids we hand out ourselves. Every request gets a fresh `Server`
 * and transport (`sessionIdGenerator: undefined`), so any instance behind a load balancer can
 * answer any request and a restart loses nothing: the only per-session state Agent Reach has is
 * the audit Session, which lives in the database. To still group a client's calls into one audit
 * Session, the response to `initialize` carries an `Mcp-Session-Id` we generate; clients send it
 * back on every later request (spec: "MUST include it"), and it becomes the call's session key,
 * scoped to the agent token so one agent cannot write into another's session. A stateful
 * transport would need sticky routing or a shared session store, for no gain: the server never
 * pushes unsolicited messages (no GET stream, answered 405 as the spec allows), and progress
 * notifications travel on the POST's own SSE response.
 *
 * Authentication: `Authorization: Bearer <agent token>` (RFC 6750) on every request; without a
 * valid one, 401 `unauthorized` with `WWW-Authenticate: Bearer`.
 */

/** A session id as the spec allows it: visible ASCII (0x21-0x7E); we cap the length. */
const SESSION_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Answers one HTTP request to /api/mcp (GET, POST or DELETE).
 * @returns 405 `method_not_allowed` for GET and HEAD (JSON envelope, `Allow: DELETE, OPTIONS, POST`); 401 without a valid agent token; 400 for a malformed `Mcp-Session-Id`;
 *   413/400 for an oversized or unparsable body; otherwise the transport's response (SSE stream or
 *   202), with a new `Mcp-Session-Id` on a successful `initialize` that came without one.
 */
export async function handleMcpRequest(req: Request): Promise<Response> {
  // proxy.ts checks every request already; the door checks again so it stays safe if mounted elsewhere.
  const refused = hostCheckResponse(req);
  if (refused) return refused;
  // HEAD reaches this handler too (Next.js answers it with GET's).
  if (req.method === "GET" || req.method === "HEAD") {
    return methodNotAllowedResponse(req, ["POST", "DELETE"]);
  }
  const auth = await requireAgent(req);
  if (!auth.ok) return auth.response;
  const sessionId = req.headers.get("mcp-session-id");
  if (sessionId !== null && !SESSION_ID.test(sessionId)) {
    return jsonRpcError(400, "Bad Request: Mcp-Session-Id must be 1-128 visible ASCII characters");
  }
  let parsedBody: unknown;
  if (req.method === "POST") {
    const body = await readJsonBody(req);
    if (!body.ok) return body.response;
    parsedBody = body.value;
  }

  const caller = { door: "mcp" as const, agent: auth.identity, sessionKey: sessionId ? `${auth.identity.id}:${sessionId}` : null };
  if (req.method === "POST" && !(await isLegacyRequest(req, parsedBody))) {
    return handleModernRequest(req, caller, parsedBody);
  }

  const invalid = invalidToolCall(parsedBody);
  if (invalid) return invalid;

  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const server = createMcpServer(caller, req.signal);
  await server.connect(transport);
  const response = await transport.handleRequest(req, { parsedBody });
  if (sessionId === null && response.ok && isInitialize(parsedBody)) {
    response.headers.set("mcp-session-id", newId("mcp"));
  }
  return response;
}

/**
 * A `tools/call` request whose params are not of the spec's shape (e.g. `arguments` is an array or
 * a string) gets JSON-RPC error -32602 "Invalid params" here. The SDK's `Server` parses the
 * request with its schema before its own tools/call check and reports that ZodError as -32603
 * "Internal error", which would blame the server for the agent's input (found by fuzzing the
 * doors, tests/reliability/fuzz-doors.test.ts).
 * @returns the error response, or null when the body is not such a request
 */
function invalidToolCall(body: unknown): Response | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const message = body as { method?: unknown; id?: unknown };
  if (message.method !== "tools/call" || message.id === undefined) return null;
  const parsed = CallToolRequestSchema.safeParse(body);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  const where = issue?.path.join(".") || "params";
  const reply = { jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${where}: ${issue?.message ?? "invalid"}` } };
  return new Response(JSON.stringify(reply), { status: 200, headers: { "content-type": "application/json" } });
}

function isInitialize(body: unknown): boolean {
  return Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
}

function jsonRpcError(status: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), {
    status,
    headers: { "content-type": "application/json" },
  });
}
