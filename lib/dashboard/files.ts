import { toErrorBody } from "@/lib/errors";
import type { ToolPreview } from "@/lib/audit/types";
import type { Workspace } from "@/lib/workspace/types";
import { openForRead, resolveInWorkspace } from "@/lib/workspace/fence";
import { sha256Hex } from "@/lib/workspace/text";

/**
 * Reading workspace files for the dashboard (current content for diffs, "changed since" checks).
 * Every read goes through the same fence and checked open as the tools (field case C05-10: a
 * dashboard file view never serves a file outside the workspace).
 */

/** The target file as it is now, compared with the sha256 the diff was computed against. */
export interface TargetState {
  /** sha256 of the file now; null when it does not exist. */
  currentSha256: string | null;
  /** True when `currentSha256` differs from the preview's `targetSha256`. */
  changedSince: boolean;
  /** Set when the file could not be read now (e.g. it became a symlink out of the workspace). */
  error: string | null;
}

/**
 * The state now of the file a preview was computed against.
 * @returns null when the preview is not about one file.
 */
export async function targetState(workspace: Workspace, preview: ToolPreview): Promise<TargetState | null> {
  if (preview.path === undefined || preview.targetSha256 === undefined) return null;
  try {
    const bytes = await readWorkspaceFile(workspace, preview.path);
    const currentSha256 = bytes === null ? null : sha256Hex(bytes);
    return { currentSha256, changedSince: currentSha256 !== preview.targetSha256, error: null };
  } catch (err) {
    return { currentSha256: null, changedSince: true, error: toErrorBody(err).message };
  }
}

/**
 * Reads a workspace file through the fence (same checks and checked open as the tools).
 * @param relPath workspace-relative path, "/"-separated
 * @returns its bytes, or null when it does not exist
 * @throws ToolError from the fence (`path_invalid`, `path_outside_workspace`), `is_directory`
 */
export async function readWorkspaceFile(workspace: Workspace, relPath: string): Promise<Buffer | null> {
  const fenced = await resolveInWorkspace(workspace, relPath);
  if (!fenced.exists) return null;
  const handle = await openForRead(workspace, fenced);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

