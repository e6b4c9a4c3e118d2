import { appendEvent } from "@/lib/audit/events";
import { db } from "@/lib/db";
import { DEFAULT_PRESET, isPresetName, type PresetName } from "@/lib/policy/presets";

/**
 * Which supervision preset a call is judged under (lib/policy/presets.ts): the agent token's own
 * preset when it has one, else its workspace's. Read for every call (cached briefly, dropped on
 * every change made through this module), so a change on the dashboard applies to the next call.
 */
const CACHE_MS = 1000;
const globalForPresets = globalThis as unknown as { agentReachPresets?: Map<string, { at: number; preset: PresetName | null }> };

function cache(): Map<string, { at: number; preset: PresetName | null }> {
  globalForPresets.agentReachPresets ??= new Map();
  return globalForPresets.agentReachPresets;
}

async function cached(key: string, load: () => Promise<string | null | undefined>): Promise<PresetName | null> {
  const hit = cache().get(key);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.preset;
  const raw = await load();
  // A value written behind the dashboard's back that names no preset counts as the strictest.
  const preset = raw == null ? null : isPresetName(raw) ? raw : "strict";
  cache().set(key, { at: Date.now(), preset });
  return preset;
}

/** The workspace's preset ("balanced" for a workspace not registered yet). */
export async function workspacePreset(workspaceId: string): Promise<PresetName> {
  const p = await cached(`ws:${workspaceId}`, async () => (await db().workspace.findUnique({ where: { id: workspaceId }, select: { preset: true } }))?.preset);
  return p ?? DEFAULT_PRESET;
}

/**
 * The preset a call of `agentId` (null: no agent, e.g. a reviewer's own action or the "try it" box)
 * in `workspaceId` is judged under, and where it came from.
 */
export async function effectivePreset(workspaceId: string, agentId: string | null): Promise<{ preset: PresetName; from: "agent" | "workspace" }> {
  if (agentId) {
    const own = await cached(`agent:${agentId}`, async () => (await db().agent.findUnique({ where: { id: agentId }, select: { preset: true } }))?.preset);
    if (own) return { preset: own, from: "agent" };
  }
  return { preset: await workspacePreset(workspaceId), from: "workspace" };
}

/** Forgets the cached presets (call after any change). */
export function invalidatePresets(): void {
  globalForPresets.agentReachPresets = undefined;
}

/**
 * Sets a workspace's preset and records who changed it (event `policy.preset_changed`).
 * @param actor the audit actor, e.g. "reviewer:rev_…"
 */
export async function setWorkspacePreset(workspaceId: string, preset: PresetName, actor: string): Promise<void> {
  const before = await workspacePreset(workspaceId);
  await db().workspace.update({ where: { id: workspaceId }, data: { preset } });
  invalidatePresets();
  await appendEvent({ type: "policy.preset_changed", actor, data: { workspace_id: workspaceId, from: before, to: preset } });
}

/**
 * Sets (or clears, with null: the workspace's preset applies) an agent token's preset and records
 * who changed it (event `agent.preset_changed`). @returns false when there is no such agent
 */
export async function setAgentPreset(agentId: string, preset: PresetName | null, actor: string): Promise<boolean> {
  const found = await db().agent.findUnique({ where: { id: agentId }, select: { preset: true } });
  if (!found) return false;
  await db().agent.update({ where: { id: agentId }, data: { preset } });
  invalidatePresets();
  await appendEvent({ type: "agent.preset_changed", actor, data: { agent_id: agentId, from: found.preset, to: preset } });
  return true;
}
