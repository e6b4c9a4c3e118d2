import fs from "node:fs/promises";
import path from "node:path";
import { db } from "@/lib/db";
import type { WorkspaceLink } from "@/lib/effects/link-check";

/** Most applied change sets looked at for links, newest first (older links are rarely still there). */
const MAX_CHANGE_SETS = 5000;

/**
 * The links the gateway itself applied in a workspace that are still links on disk: every
 * FileChange row with a link after it (at any depth, bulky rows included) of an applied change
 * set, with its target as the disk holds it now. The walk for links (lib/effects/link-check.ts
 * `scanLinks`) does not enter `node_modules`; these rows name the links a command made there, so a
 * later change set that retypes a path such a link resolves through is judged against it too.
 *
 * Cost: two indexed queries (applied change sets of the workspace, then their link rows) and one
 * `readlink` per distinct path found.
 * @param workspaceId the workspace's id
 * @param root canonical workspace root
 * @returns the links, workspace-relative, sorted by path
 */
export async function appliedLinks(workspaceId: string, root: string): Promise<WorkspaceLink[]> {
  const sets = await db().changeSet.findMany({ where: { workspaceId, status: "applied" }, select: { callId: true }, orderBy: { createdAt: "desc" }, take: MAX_CHANGE_SETS });
  if (sets.length === 0) return [];
  const paths = new Set<string>();
  for (let i = 0; i < sets.length; i += 500) {
    const rows = await db().fileChange.findMany({ where: { callId: { in: sets.slice(i, i + 500).map((s) => s.callId) }, afterType: "symlink" }, select: { path: true } });
    for (const r of rows) paths.add(r.path);
  }
  const out: WorkspaceLink[] = [];
  await Promise.all(
    [...paths].map(async (rel) => {
      if (rel === "" || rel.split("/").some((c) => c === "" || c === "." || c === "..")) return;
      const target = await fs.readlink(/*turbopackIgnore: true*/ path.join(/*turbopackIgnore: true*/ root, rel)).catch(() => null);
      if (target !== null) out.push({ path: rel, target });
    }),
  );
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
