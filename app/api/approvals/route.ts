import { listPending } from "@/lib/approvals/queue";
import { requireReviewer } from "@/lib/http/auth";
import { json } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/approvals — pending calls, oldest first, each with its exact arguments, the policy
 * verdict (decision, rule, parsed command parts) and, for writes, the target's sha256 and the
 * proposed unified diff. Reviewer auth. Response: `{ approvals: PendingCallView[] }`.
 */
export const GET = guardDoor(async function GET(req: Request): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: false });
  if (!auth.ok) return auth.response;
  return json({ approvals: await listPending() });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
