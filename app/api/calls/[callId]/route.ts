import { getConfig } from "@/lib/config";
import { getCallWithResult } from "@/lib/audit/queries";
import { waitForOutcome } from "@/lib/approvals/wait";
import { pendingEnvelope } from "@/lib/gateway/call-tool";
import { requireAgentOrReviewer } from "@/lib/http/auth";
import { envelopeResponse, errorResponse } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { heldEnvelope } from "@/lib/effects/call-hooks";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/calls/{id}[?wait=N] — the status of a call; long-polls up to N seconds (bounded by
 * AGENT_REACH_APPROVAL_WAIT_MAX_S) for it to finish.
 * Auth: the agent token that made the call (another agent's call answers 404 `not_found`, as an
 * unknown id does, so its existence is not confirmed), or a reviewer credential (any call).
 * Response: once finished, the same envelope the tool call returned (same HTTP status) plus
 * `call` (tool, status, decision, timings); before that, 202 with `approval_pending` (601) and `call`,
 * its `detail.reasons` / `preset` / `rule` read from the verdict recorded with the call.
 * A call whose command ran and whose file changes are held for a reviewer is not finished: it
 * waits (and answers 202, `detail.effects` "held") until they are applied or discarded; that 202
 * also carries `held_result`, the envelope the tool call itself answered when its command ran
 * (the command's output, `changes.status` "held"), for a client that followed the call here.
 */
export const GET = guardDoor(async function GET(req: Request, { params }: { params: Promise<{ callId: string }> }): Promise<Response> {
  const auth = await requireAgentOrReviewer(req);
  if (!auth.ok) return auth.response;
  // The agent whose calls this request may read; null for a reviewer (every call).
  const agentId = auth.agent?.id ?? null;
  const { callId } = await params;
  const waitParam = new URL(req.url).searchParams.get("wait");
  const waitS = waitParam === null ? 0 : Number(waitParam);
  if (!Number.isFinite(waitS) || waitS < 0) return errorResponse("invalid_arguments", "wait must be a number of seconds >= 0.");
  let found = await getCallWithResult(callId);
  if (!found || (agentId !== null && found.summary.agent_id !== agentId)) return errorResponse("not_found", `No call ${callId}.`, { call_id: callId });
  if (!found.envelope && waitS > 0) {
    await waitForOutcome(callId, Math.min(waitS * 1000, getConfig().approvalWaitMaxMs), req.signal);
    found = (await getCallWithResult(callId)) ?? found;
  }
  if (found.envelope) return envelopeResponse(found.envelope, {}, { call: found.summary });
  // A held call (its command ran, its changes wait for a reviewer) says so in its 601. The reasons,
  // preset and rule come from the verdict stored with the call, not from this process's memory.
  const heldResult = found.summary.status === "pending" ? await heldEnvelope(callId) : null;
  return envelopeResponse(pendingEnvelope(callId, found.verdict ?? undefined, heldResult !== null), {}, {
    call: found.summary,
    ...(heldResult && { held_result: heldResult }),
  });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
