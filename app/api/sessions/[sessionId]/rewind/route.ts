import { z } from "zod";
import { rewindSession } from "@/lib/effects/rewind";
import { requireReviewer } from "@/lib/http/auth";
import { errorResponse, json, readJsonBody } from "@/lib/http/respond";
import { httpStatusOf } from "@/lib/errors";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

const RewindBody = z
  .object({
    before_call_id: z.string().min(1).max(200),
    dry_run: z.boolean().optional(),
  })
  .strict();

/**
 * POST /api/sessions/{session_id}/rewind — puts the workspace back as it was before call
 * `before_call_id` of the session: every later change of that session (writes, edits, restores,
 * commands, reverts) is undone, newest first, as one reviewer action. `session_id` is the id the
 * timeline shows (`ses_…`) or the agent's X-Agent-Session value.
 * Body: `{"before_call_id": "call_…", "dry_run"?: true}` (dry run: the combined diff and conflicts,
 * nothing changed). Reviewer auth (+ CSRF for cookie sessions).
 * Response 200: `{ok: true, call_id, reverted_calls, conflicts: [], changes, diff}`; errors as
 * envelopes: 404 not_found (session or call), 409 conflict (detail.conflicts; nothing changed,
 * the body also carries the would-be `reverted_calls`), 400 invalid_arguments.
 */
export const POST = guardDoor(async function POST(req: Request, { params }: { params: Promise<{ sessionId: string }> }): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: true });
  if (!auth.ok) return auth.response;
  const body = await readJsonBody(req);
  if (!body.ok) return body.response;
  const parsed = RewindBody.safeParse(body.value);
  if (!parsed.success) return errorResponse("invalid_arguments", 'Body must be {"before_call_id": "call_…", "dry_run"?: boolean}.');
  const { sessionId } = await params;
  const result = await rewindSession({ sessionRef: sessionId, beforeCallId: parsed.data.before_call_id, login: auth.identity.login, dryRun: parsed.data.dry_run === true });
  if (result.ok) return json({ ok: true, ...result.outcome });
  return json({ ok: false, call_id: result.outcome?.call_id ?? null, error: result.error, ...(result.outcome && { reverted_calls: result.outcome.reverted_calls, conflicts: result.outcome.conflicts }) }, httpStatusOf(result.error.name));
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
