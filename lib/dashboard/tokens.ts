import { db } from "@/lib/db";
import { isPresetName, type PresetName } from "@/lib/policy/presets";

/**
 * Agent tokens as the dashboard's token page lists them. They are created and revoked by
 * lib/auth/agents.ts (lib/auth/tokens.ts stores only their sha256).
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
