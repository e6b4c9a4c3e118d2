import { callTool } from "@/lib/gateway/call-tool";
import { requireAgent } from "@/lib/http/auth";
import { approvalWait, envelopeResponse, readJsonBody } from "@/lib/http/respond";
import { getConfig } from "@/lib/config";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * POST /api/tools/{name} — one tool call.
 * Headers: `Authorization: Bearer <agent token>` (required); `X-Agent-Session: <id>` groups
 * calls into one session (optional); `Prefer: wait=N` (RFC 7240) waits up to N seconds for a
 * reviewer when the policy asks (default and maximum are configured). A honored wait is echoed as
 * `Preference-Applied: wait=N` (N after the cap); a malformed one is ignored (the default applies,
 * no `Preference-Applied`), see `approvalWait` in lib/http/respond.ts for why it is not a 400.
 * Body: the tool's arguments as a JSON object.
 * Response: the envelope `{ok, call_id, data}` / `{ok: false, call_id, error}`; HTTP status by
 * error name (lib/errors.ts); 202 + `Location` for `approval_pending`.
 */
export const POST = guardDoor(async function POST(req: Request, { params }: { params: Promise<{ tool: string }> }): Promise<Response> {
  const auth = await requireAgent(req);
  if (!auth.ok) return auth.response;
  const body = await readJsonBody(req);
  if (!body.ok) return body.response;
  const { tool } = await params;
  const { waitMs, applied } = approvalWait(req, getConfig());
  const envelope = await callTool(
    {
      // The agent-reach CLI speaks this same HTTP door; its User-Agent marks its calls in the log.
      door: req.headers.get("user-agent")?.startsWith("agent-reach-cli/") ? "cli" : "http",
      agent: auth.identity,
      sessionKey: req.headers.get("x-agent-session"),
    },
    tool,
    body.value,
    { waitMs, signal: req.signal },
  );
  return envelopeResponse(envelope, applied !== null ? { "preference-applied": applied } : {});
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
