import { z } from "zod";
import { approveCall } from "@/lib/approvals/queue";
import { requireReviewer } from "@/lib/http/auth";
import { envelopeResponse, errorResponse, json, readJsonBody } from "@/lib/http/respond";
import { failure } from "@/lib/result";
import { guardDoor } from "@/lib/http/door";

const ApproveBody = z.object({ content: z.string().optional() }).strict();

/**
 * POST /api/approvals/{id}/approve — approves a pending call and runs it once.
 * Body (optional): `{"content": "…"}` to approve a write_file with edited content.
 * Reviewer auth (+ CSRF for cookie sessions). Response: `{ok: true, status, result}` where
 * result is the call's envelope; or an error envelope: 404 not_found, 409 conflict
 * (`detail.reason: "already_decided"`), 403 approval_expired, 400 invalid_arguments.
 */
export const POST = guardDoor(async function POST(req: Request, { params }: { params: Promise<{ callId: string }> }): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: true });
  if (!auth.ok) return auth.response;
  const body = await readJsonBody(req);
  if (!body.ok) return body.response;
  const parsed = ApproveBody.safeParse(body.value);
  if (!parsed.success) return errorResponse("invalid_arguments", "Body must be {} or {\"content\": string}.");
  const { callId } = await params;
  const result = await approveCall(callId, auth.identity.login, parsed.data);
  if (!result.ok) return envelopeResponse(failure(callId, result.error));
  return json({ ok: true, call_id: callId, status: result.status, result: result.envelope });
});
