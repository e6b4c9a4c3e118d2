import { listGrants } from "@/lib/approvals/grants";
import { requireReviewer } from "@/lib/http/auth";
import { json } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/grants — the "don't ask again" grants made from approvals, newest first: active ones
 * and those that ended in the last 7 days (expired grants are ended, and audited, first).
 * Reviewer auth. Response: `{ grants: GrantView[] }` (lib/approvals/grants.ts).
 */
export const GET = guardDoor(async function GET(req: Request): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: false });
  if (!auth.ok) return auth.response;
  return json({ grants: await listGrants() });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
