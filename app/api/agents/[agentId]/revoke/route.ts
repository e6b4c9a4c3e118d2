import { revokeAgentToken } from "@/lib/auth/agents";
import { requireReviewer } from "@/lib/http/auth";
import { errorResponse, json } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * POST /api/agents/{id}/revoke — revokes an agent token (the dashboard's Tokens page, for
 * automation). Its later calls answer 401; its calls still waiting for a reviewer, or approved but
 * not started, end `approval_rejected` (602) with `detail.reason` "token revoked", and the agent's
 * waiters receive that. Revoking twice changes nothing. Reviewer auth (+ CSRF for cookie sessions).
 * Response: `{ok: true, agent_id, ended_calls: [call ids]}`, or 404 `not_found`.
 */
export const POST = guardDoor(async function POST(req: Request, { params }: { params: Promise<{ agentId: string }> }): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: true });
  if (!auth.ok) return auth.response;
  const { agentId } = await params;
  const result = await revokeAgentToken(agentId, auth.identity.login);
  if (!result.ok) return errorResponse(result.error.name, result.error.message, result.error.detail);
  return json({ ok: true, agent_id: agentId, ended_calls: result.endedCalls });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
