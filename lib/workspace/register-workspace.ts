import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getConfig, type Config } from "@/lib/config";
import { db } from "@/lib/db";
import { sha256Hex } from "@/lib/ids";
import type { Workspace } from "@/lib/workspace/types";

/**
 * Workspace registration: the root this process serves, checked and canonicalised, registered in
 * the Workspace table under a stable id. Every layer that needs "the workspace this instance
 * serves" (the gateway, backups, rewinds, reveals, the start-up sweep) asks here.
 */

const globalForWs = globalThis as unknown as { agentReachWorkspace?: Promise<Workspace> };

/**
 * Checks that `configuredRoot` may serve as a workspace root and returns its canonical form.
 * Creates the directory when missing. Refuses `/` and the home directory (or an ancestor of it)
 * unless `allowUnsafeRoot` is set, because every file there would be in reach of the agent.
 * @throws Error with a message for the operator (a start-up error, not a tool error).
 */
export async function prepareWorkspaceRoot(config: Config): Promise<string> {
  await fs.mkdir(config.workspaceRoot, { recursive: true });
  const root = await fs.realpath(config.workspaceRoot);
  const stat = await fs.stat(root);
  if (!stat.isDirectory()) throw new Error(`AGENT_REACH_WORKSPACE is not a directory: ${config.workspaceRoot}`);
  const home = await fs.realpath(os.homedir()).catch(() => os.homedir());
  const unsafe = root === path.parse(root).root || home === root || !path.relative(root, home).startsWith("..");
  if (unsafe && !config.allowUnsafeRoot) {
    throw new Error(
      `Refusing workspace root ${root}: it is "/" or contains the home directory. ` +
        `Point AGENT_REACH_WORKSPACE at a project folder, or set AGENT_REACH_ALLOW_UNSAFE_ROOT=1 to force it.`,
    );
  }
  return root;
}

/** Stable workspace id for a canonical root. */
export function workspaceIdFor(root: string): string {
  return `ws_${sha256Hex(root).slice(0, 20)}`;
}

/**
 * The workspace this process serves (from AGENT_REACH_WORKSPACE), registered in the database.
 * The instance that registers it last (at start-up) owns it: approved calls of a workspace run on
 * its owner, whichever instance the reviewer used. Cached for the life of the process.
 */
export function currentWorkspace(): Promise<Workspace> {
  globalForWs.agentReachWorkspace ??= (async () => {
    const config = getConfig();
    const root = await prepareWorkspaceRoot(config);
    const id = workspaceIdFor(root);
    await db().workspace.upsert({
      where: { id },
      create: { id, root, hostId: config.hostId, preset: config.defaultPreset },
      update: { hostId: config.hostId },
    });
    return { id, root, configuredRoot: config.workspaceRoot };
  })().catch((err) => {
    globalForWs.agentReachWorkspace = undefined;
    throw err;
  });
  return globalForWs.agentReachWorkspace;
}

/** Forgets the cached workspace (an in-process gateway switching configuration). */
export function forgetWorkspace(): void {
  globalForWs.agentReachWorkspace = undefined;
}
