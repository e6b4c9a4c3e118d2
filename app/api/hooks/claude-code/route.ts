import { getConfig } from "@/lib/config";
import { decideClaudeCodeHook, PreToolUsePayload } from "@/lib/hooks/claude-code";
import { requireAgent } from "@/lib/http/auth";
import { approvalWait, errorResponse, json, readJsonBody } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * POST /api/hooks/claude-code[?on_timeout=deny|ask] — decides a Claude Code PreToolUse call
 * (`agent-reach hook claude-code` sends it; lib/hooks/claude-code.ts). The call is recorded,
 * fenced and decided by the policy, waits for a reviewer when the policy asks, and is not executed.
 * Headers: `Authorization: Bearer <agent token>`; `Prefer: wait=N` (RFC 7240) bounds the wait
 * (echoed as `Preference-Applied: wait=N` when honored, as on POST /api/tools/{name}).
 * Body: the PreToolUse payload as Claude Code wrote it.
 * Response 200: `{ok: true, decision, reason, call_id, tool, result, hook_output}` where
 * `hook_output` is what the hook prints; 400 invalid_arguments for a payload that is not a
 * PreToolUse event; 401 unauthorized.
 */
export const POST = guardDoor(async function POST(req: Request): Promise<Response> {
  const auth = await requireAgent(req);
  if (!auth.ok) return auth.response;
  const body = await readJsonBody(req);
  if (!body.ok) return body.response;
  const payload = PreToolUsePayload.safeParse(body.value);
  if (!payload.success) {
    const issue = payload.error.issues[0];
    return errorResponse("invalid_arguments", `Not a Claude Code PreToolUse payload: ${issue?.path.join(".") || "body"}: ${issue?.message}`);
  }
  const onTimeout = new URL(req.url).searchParams.get("on_timeout") ?? "deny";
  if (onTimeout !== "deny" && onTimeout !== "ask") return errorResponse("invalid_arguments", "on_timeout must be deny or ask.");
  const { waitMs, applied } = approvalWait(req, getConfig());
  const verdict = await decideClaudeCodeHook(auth.identity, payload.data, { waitMs, onTimeout, signal: req.signal });
  return json({ ok: true, ...verdict }, 200, applied !== null ? { "preference-applied": applied } : {});
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
