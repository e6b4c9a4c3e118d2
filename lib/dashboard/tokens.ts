import { z } from "zod";
import { db } from "@/lib/db";
import { appendEvent } from "@/lib/audit/events";
import { createAgentToken, revokeAgent } from "@/lib/auth/tokens";
import { isPresetName, PRESET_NAMES, type PresetName } from "@/lib/policy/presets";

/**
 * Agent tokens as the dashboard lists, creates and revokes them (lib/auth/tokens.ts stores only
 * their sha256; a token is shown once, at creation). Creation and revocation are written to the
 * hash-chained event log with the reviewer as actor; the token itself never is.
 */

/** An agent as listed. */
export interface AgentRow {
  id: string;
  name: string;
  /** First characters of the token, to tell tokens apart (`ar_agent_xxxxx`). */
  tokenPrefix: string;
  /** Workspace scope: the workspace root it is limited to, or null for any workspace. */
  workspaceRoot: string | null;
  workspaceId: string | null;
  /** The token's own supervision preset, or null: its workspace's applies (lib/policy/presets.ts). */
  preset: PresetName | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  sessions: number;
}

/** Every agent, active first, newest first. */
export async function listAgents(): Promise<AgentRow[]> {
  const [agents, workspaces, sessions] = await Promise.all([
    db().agent.findMany({ orderBy: [{ createdAt: "desc" }] }),
    db().workspace.findMany({ select: { id: true, root: true } }),
    db().session.groupBy({ by: ["agentId"], _count: { _all: true } }),
  ]);
  const roots = new Map(workspaces.map((w) => [w.id, w.root]));
  const counts = new Map(sessions.map((s) => [s.agentId, s._count._all]));
  return agents
    .map((a) => ({
      id: a.id,
      name: a.name,
      tokenPrefix: a.tokenPrefix,
      workspaceId: a.workspaceId,
      workspaceRoot: a.workspaceId ? (roots.get(a.workspaceId) ?? a.workspaceId) : null,
      preset: a.preset === null ? null : isPresetName(a.preset) ? a.preset : "strict",
      createdAt: a.createdAt,
      lastUsedAt: a.lastUsedAt,
      revokedAt: a.revokedAt,
      sessions: counts.get(a.id) ?? 0,
    }))
    .sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null));
}

/** Workspaces a token can be scoped to. */
export async function listWorkspaces(): Promise<{ id: string; root: string }[]> {
  return db().workspace.findMany({ select: { id: true, root: true }, orderBy: { root: "asc" } });
}

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
