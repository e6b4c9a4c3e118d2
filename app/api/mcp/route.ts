import { handleMcpRequest } from "@/lib/mcp/handle-request";

/**
 * /api/mcp — the MCP door (Streamable HTTP, stateless; see lib/mcp/handle-request.ts).
 * POST: JSON-RPC messages (initialize, tools/list, tools/call, notifications); DELETE: ends a
 * client's session (nothing to free: the audit Session stays); GET: 405 (no server-initiated stream).
 * Auth: `Authorization: Bearer <agent token>`.
 */
export const GET = handleMcpRequest;
export const POST = handleMcpRequest;
export const DELETE = handleMcpRequest;
