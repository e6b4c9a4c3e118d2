import fs from "node:fs/promises";
import path from "node:path";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/workspace/register-workspace";

/**
 * Start-up sweep of orphaned temp files of our atomic writes (crash consistency).
 *
 * `atomicWriteFile` (lib/workspace/atomic-write.ts) writes the new bytes to
 * `.<16 hex digits>.agent-reach.tmp` in the target's directory and renames it over the target.
 * When the process is killed between creating that file and the rename, the temp file stays
 * behind (the target itself still holds its old bytes). The sweep removes exactly those files:
 * regular files whose whole name matches `TEMP_NAME_PATTERN` and that were last modified before
 * a cut-off. Nothing else is touched: no other name, no directory, no symlink (never followed),
 * no file modified at or after the cut-off (a write in flight has a fresher temp file).
 */

/** The exact name atomicWriteFile gives its temp files; anything else is never removed. */
export const TEMP_NAME_PATTERN = /^\.[0-9a-f]{16}\.agent-reach\.tmp$/;

/** Entries visited at most by one sweep (a bound on start-up time in a huge workspace). */
export const SWEEP_MAX_ENTRIES = 2_000_000;

/** Allowance for clock skew between the hosts that may write to one shared workspace (ms). */
const OTHER_HOST_MARGIN_MS = 5_000;

export interface SweepOptions {
  /** Only temp files last modified strictly before this moment are removed. */
  before: Date;
  /** Stop after visiting this many directory entries (default `SWEEP_MAX_ENTRIES`). */
  maxEntries?: number;
}

export interface SweepResult {
  /** Workspace-relative paths of the temp files removed. */
  removed: string[];
  /** Temp-named files left because they were modified at or after the cut-off. */
  keptRecent: number;
  /** Directory entries visited. */
  visited: number;
  /** True when the walk stopped at `maxEntries` (some directories were not visited). */
  truncated: boolean;
}

/**
 * Walks `root` (without following symlinks) and removes orphaned atomic-write temp files.
 *
 * @param root canonical absolute path of the workspace root
 * @param options the cut-off (`before`) and the entry bound
 * @returns what was removed and visited; unreadable directories and files that vanish meanwhile
 *   are skipped, never thrown
 */
export async function sweepOrphanedTemps(root: string, options: SweepOptions): Promise<SweepResult> {
  const maxEntries = options.maxEntries ?? SWEEP_MAX_ENTRIES;
  const cutoff = options.before.getTime();
  const result: SweepResult = { removed: [], keptRecent: 0, visited: 0, truncated: false };
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (result.visited >= maxEntries) {
        result.truncated = true;
        return result;
      }
      result.visited++;
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(abs);
      else if (entry.isFile() && TEMP_NAME_PATTERN.test(entry.name)) await removeIfOld(abs, cutoff, root, result);
    }
  }
  return result;
}

async function removeIfOld(abs: string, cutoff: number, root: string, result: SweepResult): Promise<void> {
  const st = await fs.lstat(abs).catch(() => null);
  if (!st?.isFile()) return;
  if (st.mtimeMs >= cutoff) {
    result.keptRecent++;
    return;
  }
  try {
    await fs.unlink(abs);
    result.removed.push(path.relative(root, abs));
  } catch {
    // Gone already, or not removable (read-only file system): nothing to do at start-up.
  }
}

/**
 * The sweep `startServer` runs (lib/runtime/server-start.ts), after calls this host left running
 * were marked interrupted: a temp file is an orphan when it is older than this start and older
 * than every call another instance is running in this workspace right now (minus a clock-skew
 * margin), so a write in flight on another instance sharing the workspace is never disturbed.
 *
 * @param hostId this instance's host id (AGENT_REACH_HOST_ID)
 * @returns the sweep's result (removed paths are workspace-relative)
 */
export async function sweepTempsAtStart(hostId: string): Promise<SweepResult> {
  const workspace = await currentWorkspace();
  const started = Date.now();
  const oldestElsewhere = await db().toolCall.findFirst({
    where: { workspaceId: workspace.id, status: "running", hostId: { not: hostId } },
    orderBy: { createdAt: "asc" },
    select: { createdAt: true },
  });
  // A call's row is created before it starts, so its createdAt bounds any temp file it wrote.
  const elsewhere = oldestElsewhere ? oldestElsewhere.createdAt.getTime() - OTHER_HOST_MARGIN_MS : Infinity;
  return sweepOrphanedTemps(workspace.root, { before: new Date(Math.min(started, elsewhere)) });
}
