import { handleMcpRequest } from "@/lib/mcp/handle-request";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * /api/mcp — the MCP door (Streamable HTTP, stateless; see lib/mcp/handle-request.ts).
 * POST: JSON-RPC messages (initialize, tools/list, tools/call, notifications); DELETE: ends a
 * client's session (nothing to free: the audit Session stays); GET: 405 (no server-initiated stream);
 * PUT and PATCH: 405 as well (lib/http/methods.ts).
 * Auth: `Authorization: Bearer <agent token>`.
 */
const guarded = guardDoor(handleMcpRequest);
export const GET = guarded;
export const POST = guarded;
export const DELETE = guarded;
// GET and HEAD are answered by the door itself (405, above); PUT and PATCH the same way here, and
// OPTIONS names POST and DELETE.
export const { PUT, PATCH, OPTIONS } = refuseOtherMethods(["POST", "DELETE"]);
