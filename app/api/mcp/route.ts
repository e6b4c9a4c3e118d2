import { handleMcpRequest } from "@/lib/mcp/handle-request";
import { guardDoor } from "@/lib/http/door";

/**
 * /api/mcp — the MCP door (Streamable HTTP, stateless; see lib/mcp/handle-request.ts).
 * POST: JSON-RPC messages (initialize, tools/list, tools/call, notifications); DELETE: ends a
 * client's session (nothing to free: the audit Session stays); GET: 405 (no server-initiated stream).
 * Auth: `Authorization: Bearer <agent token>`.
 */
const guarded = guardDoor(handleMcpRequest);
export const GET = guarded;
export const POST = guarded;
export const DELETE = guarded;
