import { revokeGrant } from "@/lib/approvals/grants";
import { requireReviewer } from "@/lib/http/auth";
import { envelopeResponse, json } from "@/lib/http/respond";
import { failure } from "@/lib/result";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * POST /api/grants/{id}/revoke — ends a grant now (audited as `policy.grant_revoked`); the next
 * call it would have allowed asks again. Reviewer auth (+ CSRF for cookie sessions).
 * Response: `{ok: true, grant_id}`, or 404 not_found, 409 conflict (detail.reason "already_ended").
 */
export const POST = guardDoor(async function POST(req: Request, { params }: { params: Promise<{ grantId: string }> }): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: true });
  if (!auth.ok) return auth.response;
  const { grantId } = await params;
  const result = await revokeGrant(grantId, auth.identity.login);
  if (!result.ok) return envelopeResponse(failure(null, result.error));
  return json({ ok: true, grant_id: grantId });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
