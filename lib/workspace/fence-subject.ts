import { errorBody, toErrorBody, ToolError, type ErrorBody } from "@/lib/errors";
import type { AuditNotes } from "@/lib/audit/types";
import { resolveInWorkspace, type FencedPath } from "@/lib/workspace/fence";
import type { Workspace } from "@/lib/workspace/types";

/** The fenced paths of a call, or the refusal that ends it with the audit notes to record. */
export type FenceResult = { paths: FencedPath[]; cwd: FencedPath | null } | { error: ErrorBody; notes: AuditNotes };

/**
 * Fences every path argument of a call and its cwd (lib/workspace/fence.ts); the first refusal
 * ends the call. A cwd must be an existing directory (`not_found` / `invalid_arguments`).
 */
export async function fenceSubject(workspace: Workspace, paths: string[], cwd: string | undefined): Promise<FenceResult> {
  const out: FencedPath[] = [];
  for (const raw of [...paths, ...(cwd !== undefined ? [cwd] : [])]) {
    try {
      out.push(await resolveInWorkspace(workspace, raw));
    } catch (err) {
      const body = toErrorBody(err);
      if (!(err instanceof ToolError)) return { error: body, notes: { pathRaw: raw } };
      const resolved = typeof err.detail.path_resolved === "string" ? err.detail.path_resolved : undefined;
      return { error: body, notes: { pathRaw: raw, ...(resolved && { pathResolved: resolved }) } };
    }
  }
  if (cwd !== undefined) {
    const cwdPath = out.pop()!;
    if (cwdPath.kind !== "directory") {
      return {
        error: errorBody(cwdPath.exists ? "invalid_arguments" : "not_found", `cwd is not a directory: ${cwd}`, { cwd }),
        notes: { pathRaw: cwd, pathResolved: cwdPath.absolute },
      };
    }
    return { paths: out, cwd: cwdPath };
  }
  return { paths: out, cwd: null };
}
