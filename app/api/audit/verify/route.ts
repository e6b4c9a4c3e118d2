import { verifyChain } from "@/lib/audit/events";
import { requireReviewer } from "@/lib/http/auth";
import { json } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/audit/verify — recomputes the event hash chain and reports the first broken link.
 * Reviewer auth. Response: `{ok, checked, broken: null | {seq, reason}}`.
 */
export const GET = guardDoor(async function GET(req: Request): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: false });
  if (!auth.ok) return auth.response;
  return json(await verifyChain());
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
