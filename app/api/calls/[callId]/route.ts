import { getConfig } from "@/lib/config";
import { getCallWithResult } from "@/lib/audit/queries";
import { waitForOutcome } from "@/lib/approvals/queue";
import { pendingEnvelope } from "@/lib/gateway/call-tool";
import { bearerToken } from "@/lib/auth/tokens";
import { requireAgent, requireReviewer } from "@/lib/http/auth";
import { envelopeResponse, errorResponse } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";

/**
 * GET /api/calls/{id}[?wait=N] — the status of a call; long-polls up to N seconds (bounded by
 * AGENT_REACH_APPROVAL_WAIT_MAX_S) for it to finish.
 * Auth: the agent token, or a reviewer credential.
 * Response: once finished, the same envelope the tool call returned (same HTTP status) plus
 * `call` (tool, status, decision, timings); before that, 202 with `approval_pending` (601) and `call`.
 */
export const GET = guardDoor(async function GET(req: Request, { params }: { params: Promise<{ callId: string }> }): Promise<Response> {
  const token = bearerToken(req.headers.get("authorization"));
  const auth = token?.startsWith("ar_agent_") ? await requireAgent(req) : await requireReviewer(req, { mutation: false });
  if (!auth.ok) return auth.response;
  const { callId } = await params;
  const waitParam = new URL(req.url).searchParams.get("wait");
  const waitS = waitParam === null ? 0 : Number(waitParam);
  if (!Number.isFinite(waitS) || waitS < 0) return errorResponse("invalid_arguments", "wait must be a number of seconds >= 0.");
  let found = await getCallWithResult(callId);
  if (!found) return errorResponse("not_found", `No call ${callId}.`, { call_id: callId });
  if (!found.envelope && waitS > 0) {
    await waitForOutcome(callId, Math.min(waitS * 1000, getConfig().approvalWaitMaxMs), req.signal);
    found = (await getCallWithResult(callId)) ?? found;
  }
  return envelopeResponse(found.envelope ?? pendingEnvelope(callId), {}, { call: found.summary });
});
