import { z } from "zod";
import { rejectCall } from "@/lib/approvals/queue";
import { requireReviewer } from "@/lib/http/auth";
import { envelopeResponse, errorResponse, json, readJsonBody } from "@/lib/http/respond";
import { failure } from "@/lib/result";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

const RejectBody = z.object({ reason: z.string().max(2000).default("") }).strict();

/**
 * POST /api/approvals/{id}/reject — rejects a pending call; the agent receives
 * `approval_rejected` (602) with the reason. Body: `{"reason": "…"}`.
 * Reviewer auth (+ CSRF for cookie sessions). Response: `{ok: true, status: "rejected", result}`
 * or an error envelope (404 not_found, 409 conflict already_decided).
 */
export const POST = guardDoor(async function POST(req: Request, { params }: { params: Promise<{ callId: string }> }): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: true });
  if (!auth.ok) return auth.response;
  const body = await readJsonBody(req);
  if (!body.ok) return body.response;
  const parsed = RejectBody.safeParse(body.value);
  if (!parsed.success) return errorResponse("invalid_arguments", "Body must be {\"reason\": string}.");
  const { callId } = await params;
  const result = await rejectCall(callId, auth.identity.login, parsed.data.reason);
  if (!result.ok) return envelopeResponse(failure(callId, result.error));
  return json({ ok: true, call_id: callId, status: result.status, result: result.envelope });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
