import { z } from "zod";
import { db } from "@/lib/db";
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

/** Result of creating a token: the token (show it once) or a message for the form. */
export type NewAgentResult = { ok: true; agentId: string; name: string; token: string } | { ok: false; message: string };

/** Creates a named agent token, optionally scoped to one workspace and with its own supervision preset. */
export async function createAgent(input: NewAgentInput, actor: string): Promise<NewAgentResult> {
  const parsed = NewAgentInput.safeParse(input);
  if (!parsed.success) return { ok: false, message: parsed.error.issues.map((i) => i.message).join("; ") };
  const { name, workspaceId, preset } = parsed.data;
  if (workspaceId !== null && !(await db().workspace.findUnique({ where: { id: workspaceId } }))) {
    return { ok: false, message: "Unknown workspace." };
  }
  const { agent, token } = await createAgentToken(name);
  if (workspaceId !== null || preset !== null) await db().agent.update({ where: { id: agent.id }, data: { workspaceId, preset } });
  await appendEvent({ type: "agent.created", actor: `reviewer:${actor}`, data: { agent_id: agent.id, name, workspace_id: workspaceId, preset } });
  return { ok: true, agentId: agent.id, name, token };
}

/**
 * Revokes an agent's token; its later calls are unauthorized and its calls not yet run end
 * rejected ("token revoked"; `endedCalls` lists them). Revoking twice changes nothing.
 */
export async function revokeAgentToken(agentId: string, actor: string): Promise<{ ok: boolean; message?: string; endedCalls?: string[] }> {
  const agent = await db().agent.findUnique({ where: { id: agentId }, select: { revokedAt: true } });
  if (!agent) return { ok: false, message: `No agent ${agentId}.` };
  if (agent.revokedAt) return { ok: true, endedCalls: [] };
  await appendEvent({ type: "agent.revoked", actor: `reviewer:${actor}`, data: { agent_id: agentId } });
  const endedCalls = await revokeAgent(agentId);
  return { ok: true, endedCalls };
}
