import { z } from "zod";
import { approveCall } from "@/lib/approvals/queue";
import { GrantRequest, grantsFromCall } from "@/lib/approvals/grants";
import { requireReviewer } from "@/lib/http/auth";
import { envelopeResponse, errorResponse, json, readJsonBody } from "@/lib/http/respond";
import { failure } from "@/lib/result";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

const ApproveBody = z.object({ content: z.string().optional(), grant: GrantRequest.optional() }).strict();

/**
 * POST /api/approvals/{id}/approve — approves a pending call and runs it once.
 * Body (optional): `{"content": "…"}` to approve a write_file with edited content, and/or
 * `{"grant": {"scope": "session"|"workspace", "expires_in_s": 60…2592000, "patterns": ["python3 -m pytest *"]}}`
 * (run_command) or `{"grant": {…, "path_glob": "src/**\/*.ts"}}` (write_file, edit_file) to allow
 * the call's pattern from now on ("don't ask again"; lib/approvals/grants.ts). A grant that
 * would reach a sensitive path, a denied or specially asked command, or leave the sandbox is
 * refused (400 invalid_arguments, detail.reason "grant_refused") and the call stays pending.
 * The answer's `grants` lists the rules created.
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
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return errorResponse("invalid_arguments", `Body must be {} or {"content"?: string, "grant"?: {...}}: ${issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "invalid"}.`);
  }
  const { callId } = await params;
  const { grant, ...edit } = parsed.data;
  const result = await approveCall(callId, auth.identity.login, edit, grant);
  if (!result.ok) return envelopeResponse(failure(callId, result.error));
  const grants = grant ? await grantsFromCall(callId) : [];
  return json({ ok: true, call_id: callId, status: result.status, result: result.envelope, ...(grant && { grants }) });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
