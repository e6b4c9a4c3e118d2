import { z } from "zod";
import { db } from "@/lib/db";
import { errorBody, type ErrorBody } from "@/lib/errors";
import { appendEvent } from "@/lib/audit/events";
import { createAgentToken, revokeAgent } from "@/lib/auth/tokens";
import { PRESET_NAMES } from "@/lib/policy/presets";

/**
 * Agents as a reviewer manages them: a named agent token, optionally scoped to one workspace and
 * with its own supervision preset, created (the token is returned once; lib/auth/tokens.ts stores
 * only its sha256) and revoked. Both are written to the hash-chained event log with the reviewer
 * as actor; the token itself never is. The dashboard and `POST /api/agents` both come here.
 */

/** What the create form sends. */
export const NewAgentInput = z.object({
  name: z.string().trim().min(1, "a name is required").max(100),
  /** Workspace id, or "" / null for any workspace. */
  workspaceId: z
    .string()
    .nullable()
    .transform((s) => (s ? s : null)),
  /** The token's supervision preset, or "" / null / absent: its workspace's. */
  preset: z
    .union([z.enum(PRESET_NAMES), z.literal(""), z.null()])
    .optional()
    .transform((p) => (p ? p : null)),
});
export type NewAgentInput = z.input<typeof NewAgentInput>;

/**
 * Result of creating a token: the token (show it once), or the error as the API answers it:
 * `invalid_arguments` (a bad field or an unknown workspace; `detail.issues` lists `{path, message}`).
 */
export type NewAgentResult = { ok: true; agentId: string; name: string; token: string } | { ok: false; error: ErrorBody };

/** Creates a named agent token, optionally scoped to one workspace and with its own supervision preset. */
export async function createAgent(input: NewAgentInput, actor: string): Promise<NewAgentResult> {
  const parsed = NewAgentInput.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
    return { ok: false, error: errorBody("invalid_arguments", issues.map((i) => i.message).join("; "), { issues }) };
  }
  const { name, workspaceId, preset } = parsed.data;
  if (workspaceId !== null && !(await db().workspace.findUnique({ where: { id: workspaceId } }))) {
    return { ok: false, error: errorBody("invalid_arguments", "Unknown workspace.", { issues: [{ path: "workspaceId", message: "no such workspace" }], workspace_id: workspaceId }) };
  }
  const { agent, token } = await createAgentToken(name);
  if (workspaceId !== null || preset !== null) await db().agent.update({ where: { id: agent.id }, data: { workspaceId, preset } });
  await appendEvent({ type: "agent.created", actor: `reviewer:${actor}`, data: { agent_id: agent.id, name, workspace_id: workspaceId, preset } });
  return { ok: true, agentId: agent.id, name, token };
}

/**
 * Revokes an agent's token; its later calls are unauthorized and its calls not yet run end
 * rejected ("token revoked"; `endedCalls` lists them). Revoking twice changes nothing.
 * @returns ok, or `not_found` when there is no such agent
 */
export async function revokeAgentToken(agentId: string, actor: string): Promise<{ ok: true; endedCalls: string[] } | { ok: false; error: ErrorBody }> {
  const agent = await db().agent.findUnique({ where: { id: agentId }, select: { revokedAt: true } });
  if (!agent) return { ok: false, error: errorBody("not_found", `No agent ${agentId}.`, { agent_id: agentId }) };
  if (agent.revokedAt) return { ok: true, endedCalls: [] };
  await appendEvent({ type: "agent.revoked", actor: `reviewer:${actor}`, data: { agent_id: agentId } });
  const endedCalls = await revokeAgent(agentId);
  return { ok: true, endedCalls };
}
