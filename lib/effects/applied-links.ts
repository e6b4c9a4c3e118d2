import fs from "node:fs";
import path from "node:path";
import { db } from "@/lib/db";
import type { WorkspaceLink } from "@/lib/effects/link-check";

/** Per workspace: the link paths found in the rows of the change sets seen so far. */
interface Known {
  paths: Set<string>;
  seen: Set<string>;
}

const known: Map<string, Known> = ((globalThis as { agentReachAppliedLinks?: Map<string, Known> }).agentReachAppliedLinks ??= new Map());

/**
 * The links the gateway itself applied in a workspace that are still links on disk: every
 * FileChange row with a link after it (at any depth, bulky rows included) of an applied change
 * set, with its target as the disk holds it now. The walk for links (lib/effects/link-check.ts
 * `scanLinks`) does not enter `node_modules`; these rows name the links a command made there, so a
 * later change set that retypes a path such a link resolves through is judged against it too.
 *
 * Cost: the rows of a change set are read once per process (kept per workspace, only change sets
 * applied since are read again); each call lists the applied change sets' ids (one indexed
 * query, 2 ms for 2,000) and looks at each link path still known (one `lstat` each; a path that is
 * not a link any more is dropped).
 * @param workspaceId the workspace's id
 * @param root canonical workspace root
 * @returns the links, workspace-relative, sorted by path
 */
export async function appliedLinks(workspaceId: string, root: string): Promise<WorkspaceLink[]> {
  const sets = await db().changeSet.findMany({ where: { workspaceId, status: "applied" }, select: { callId: true } });
  if (sets.length === 0) return [];
  let k = known.get(workspaceId);
  if (!k) known.set(workspaceId, (k = { paths: new Set(), seen: new Set() }));
  const fresh = sets.map((s) => s.callId).filter((id) => !k.seen.has(id));
  for (let i = 0; i < fresh.length; i += 500) {
    const ids = fresh.slice(i, i + 500);
    const rows = await db().fileChange.findMany({ where: { callId: { in: ids }, afterType: "symlink" }, select: { path: true } });
    for (const r of rows) k.paths.add(r.path);
    for (const id of ids) k.seen.add(id);
  }
  // One lstat per path, synchronously and without an error for a missing one: ten thousand take
  // a few ms this way, far more as promises queued on the thread pool or as thrown errors. A path
  // that is no longer a link is forgotten: a later change set that makes it one again adds it back.
  const out: WorkspaceLink[] = [];
  for (const rel of k.paths) {
    const abs = path.join(/*turbopackIgnore: true*/ root, rel);
    let target: string | null = null;
    if (rel !== "" && !rel.split("/").some((c) => c === "" || c === "." || c === "..")) {
      try {
        if (fs.lstatSync(/*turbopackIgnore: true*/ abs, { throwIfNoEntry: false })?.isSymbolicLink()) target = fs.readlinkSync(/*turbopackIgnore: true*/ abs);
      } catch {
        // A parent is not a directory any more.
      }
    }
    if (target === null) k.paths.delete(rel);
    else out.push({ path: rel, target });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
