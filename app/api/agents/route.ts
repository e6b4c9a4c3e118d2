import { z } from "zod";
import { createAgent } from "@/lib/auth/agents";
import { PRESET_NAMES } from "@/lib/policy/presets";
import { requireReviewer } from "@/lib/http/auth";
import { errorResponse, json, readJsonBody } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

const NewAgentBody = z
  .object({
    name: z.string().min(1).max(100),
    workspace_id: z.string().max(100).nullable().default(null),
    preset: z.enum(PRESET_NAMES).nullable().default(null),
  })
  .strict();

/**
 * POST /api/agents — creates a named agent token (the dashboard's Tokens page, for automation).
 * Body: `{"name": "…", "workspace_id"?: "…"|null, "preset"?: "strict"|"balanced"|"autonomous"|null}`
 * (preset null or absent: the token's calls follow the workspace's supervision preset).
 * Reviewer auth (+ CSRF for cookie sessions).
 * Response: 201 `{ok: true, agent_id, name, token, preset}`; the token is shown this once and only its
 * sha256 is stored. 400 `invalid_arguments` for a bad body or an unknown workspace.
 */
export const POST = guardDoor(async function POST(req: Request): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: true });
  if (!auth.ok) return auth.response;
  const body = await readJsonBody(req);
  if (!body.ok) return body.response;
  const parsed = NewAgentBody.safeParse(body.value);
  if (!parsed.success) {
    return errorResponse("invalid_arguments", `Body must be {"name": string, "workspace_id"?: string|null, "preset"?: ${PRESET_NAMES.map((p) => `"${p}"`).join("|")}|null}.`);
  }
  const result = await createAgent({ name: parsed.data.name, workspaceId: parsed.data.workspace_id, preset: parsed.data.preset }, auth.identity.login);
  if (!result.ok) return errorResponse(result.error.name, result.error.message, result.error.detail);
  return json({ ok: true, agent_id: result.agentId, name: result.name, token: result.token, preset: parsed.data.preset }, 201);
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);
