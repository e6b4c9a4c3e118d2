import { ToolError } from "@/lib/errors";
import { capDiff, diffFileBytes, type FileDiff } from "@/lib/diff/unified";
import type { Config } from "@/lib/config";
import type { AuditNotes, ToolPreview } from "@/lib/audit/types";
import type { BackupStore } from "@/lib/backups/types";
import type { Workspace } from "@/lib/workspace/types";
import { asExpectedWriteFailure, atomicWriteFile } from "@/lib/workspace/atomic-write";
import { openForRead, resolveInWorkspace, type FencedPath } from "@/lib/workspace/fence";
import { withChangeSetLock } from "@/lib/effects/change-set-lock";
import { withPathLock } from "@/lib/workspace/path-lock";
import { roundTrips } from "@/lib/workspace/encoding";
import { detectBom, profileText, sha256Hex, type Eol, type TextEncoding, type TextProfile } from "@/lib/workspace/text";

/**
 * The one write pipeline of write_file, edit_file and restore_backup (field cases C13, C14, C15):
 * fence → lock the canonical path → re-read the current bytes under the lock → compare
 * `expected_sha256` (content hash, never mtime) and the queued sha256 (605 conflict) → compute the
 * new bytes from the current ones → diff → atomic write, saving the backup of the old bytes right
 * before the rename → audit notes. A refused call changes nothing and saves no backup.
 */

/** Longest diff a preview carries to the approval view (characters); a browser still renders it. */
const PREVIEW_DIFF_MAX_CHARS = 1_000_000;

/** The target file as it is now, read under the lock. */
export interface CurrentFile {
  bytes: Buffer;
  sha256: string;
  /** Permission bits. */
  mode: number;
  /** Hard-link count. */
  nlink: number;
}

/** The new content a writer computed from the current file. */
export interface PlannedContent {
  bytes: Buffer;
  /** Permission bits to set; default keeps the current mode (new files: 0666 minus umask). */
  mode?: number;
  /** What the reviewer and the agent should know (e.g. "line endings converted to CRLF"). */
  warnings: string[];
  /** The encoding the writer encoded the text in (canonical name); the diff decodes both sides in it where they decode exactly. */
  encoding?: TextEncoding;
}

export interface UpdateRequest<P extends PlannedContent> {
  /** The path argument exactly as sent (fenced here). */
  rawPath: string;
  /** sha256 the agent expects the file to have now (64 hex digits); mismatch → `stale_content`. */
  expectedSha256?: string;
  /** Create missing parent directories (only after the fence accepted the path). */
  createDirs: boolean;
  /**
   * Computes the new content from the current file (null when it does not exist). Throws a
   * ToolError to refuse; nothing is written then.
   */
  plan(current: CurrentFile | null, target: FencedPath): P | Promise<P>;
}

/** The `data` of a successful write (snake_case, as on the wire). */
export interface UpdateResult {
  /** Canonical workspace-relative path that was written (a symlink's target, C13-4). */
  path: string;
  created: boolean;
  /** False when the new bytes and mode equal the current ones: nothing was written, no backup. */
  changed: boolean;
  size_bytes: number;
  sha256_before: string | null;
  sha256: string;
  /** Backup of the old bytes (restore it with restore_backup), null when nothing was replaced. */
  backup_id: string | null;
  /** Unified diff, cut to the configured read cap at a line boundary when `diff_truncated`. */
  diff: string;
  diff_truncated: boolean;
  additions: number;
  deletions: number;
  encoding: TextEncoding;
  /** 0..1, how sure the encoding is (see lib/workspace/encoding.ts). */
  encoding_confidence: number;
  eol: Eol;
  bom: boolean;
  /** Permission bits as 4 octal digits, e.g. "0644". */
  mode: string;
  warnings: string[];
  /** Link count of the replaced file, present only when it was > 1 (C13-5). */
  nlink_before?: number;
}

/**
 * What the pipeline uses of a tool call's context (a tool passes its ToolContext,
 * lib/tools/define-tool.ts): the workspace, the configuration, the audit notes, the backup store
 * and, for an approved call that was queued, the target's sha256 at queue time.
 */
export interface UpdateContext {
  workspace: Workspace;
  config: Config;
  note(notes: AuditNotes): void;
  backups: BackupStore;
  queuedTargetSha256?: string | null;
}

/**
 * Runs a write through the pipeline (see the module comment).
 *
 * @returns the write's result plus the writer's plan (for writer-specific fields)
 * @throws ToolError from the fence (`path_invalid`, `path_outside_workspace`, `not_found`);
 *   `is_directory`; `path_invalid` (reason "not_regular_file"); `not_found` (reason
 *   "parent_missing") when `createDirs` is false; `stale_content` with detail {current_sha256,
 *   expected_sha256}; `conflict` with detail {current_sha256, queued_sha256} when
 *   `ctx.queuedTargetSha256` is set and differs; whatever `plan` throws; `write_failed` (see
 *   atomicWriteFile; its detail names the `path` and `size_bytes` that were not written);
 *   `not_found` / `path_outside_workspace` with detail.reason "changed_during_call" when a
 *   directory on the path was removed or swapped for a symlink while the call ran
 *   (`asExpectedWriteFailure`). Never a raw file-system error.
 */
export async function updateFile<P extends PlannedContent>(ctx: UpdateContext, req: UpdateRequest<P>): Promise<{ result: UpdateResult; plan: P }> {
  try {
    return await updateFileSteps(ctx, req);
  } catch (err) {
    throw await asExpectedWriteFailure(err, ctx.workspace.root, req.rawPath);
  }
}

async function updateFileSteps<P extends PlannedContent>(ctx: UpdateContext, req: UpdateRequest<P>): Promise<{ result: UpdateResult; plan: P }> {
  const fenced = await fenceTarget(ctx, req);
  // Not between a command's change set being staged and applied (its backups and record would
  // name bytes this write replaced): the workspace's change-set lock, then the path's.
  return withChangeSetLock(ctx.workspace.root, () => withPathLock(fenced.absolute, async () => {
    const target = await resolveInWorkspace(ctx.workspace, req.rawPath);
    if (target.absolute !== fenced.absolute) {
      throw new ToolError("write_failed", "The path started pointing somewhere else while the call waited; nothing was written. Retry the call.", {
        reason: "target_changed",
      });
    }
    const current = await readCurrent(ctx, target);
    ctx.note({ shaBefore: current?.sha256 ?? null });
    assertExpected(req.expectedSha256, current);
    assertNotChangedSinceQueued(ctx, current);
    const plan = await req.plan(current, target);
    const result = await commit(ctx, target, current, plan, req.createDirs);
    return { result, plan };
  }));
}

/**
 * The preview for the approval queue: the same fence, read, checks and plan as `updateFile`, and
 * the diff of the proposed change, without writing or locking anything.
 *
 * @throws the same ToolErrors as `updateFile` before its write (a call that cannot succeed is
 *   refused before anyone is asked to approve it); never `conflict` or `write_failed`
 */
export async function previewUpdate<P extends PlannedContent>(ctx: UpdateContext, req: UpdateRequest<P>): Promise<ToolPreview> {
  const target = await fenceTarget(ctx, req);
  const current = await readCurrent(ctx, target);
  assertExpected(req.expectedSha256, current);
  const plan = await req.plan(current, target);
  const diff = diffFileBytes(target.relative, current?.bytes ?? null, plan.bytes, { encoding: plan.encoding, legacy: ctx.config.legacyEncoding });
  const capped = capDiff(diff.diff, PREVIEW_DIFF_MAX_CHARS);
  const warnings = warningsOf(current, plan, diff);
  if (capped.truncated) warnings.push(`the diff is cut to its first ${PREVIEW_DIFF_MAX_CHARS} characters; the counts are for the whole change`);
  return {
    path: target.relative,
    targetSha256: current?.sha256 ?? null,
    diff: capped.diff,
    additions: diff.additions,
    deletions: diff.deletions,
    afterBytes: plan.bytes.length,
    warnings,
  };
}

async function fenceTarget(ctx: UpdateContext, req: UpdateRequest<PlannedContent>): Promise<FencedPath> {
  ctx.note({ pathRaw: req.rawPath });
  const target = await resolveInWorkspace(ctx.workspace, req.rawPath);
  ctx.note({ pathResolved: target.absolute, target: target.relative });
  if (target.kind === "directory") throw new ToolError("is_directory", `${target.relative || "."} is a directory.`, { path: target.relative });
  if (target.kind === "other") {
    throw new ToolError("path_invalid", `${target.relative} is not a regular file.`, { reason: "not_regular_file", path: target.relative });
  }
  if (target.missingDepth > 1 && !req.createDirs) {
    throw new ToolError("not_found", `The parent directory of ${target.relative} does not exist; pass create_dirs: true to create it.`, {
      reason: "parent_missing",
      path: target.relative,
    });
  }
  return target;
}

/** Reads the target through the fence's checked open; null when it does not exist. */
async function readCurrent(ctx: UpdateContext, target: FencedPath): Promise<CurrentFile | null> {
  if (!target.exists) return null;
  const handle = await openForRead(ctx.workspace, target);
  try {
    const st = await handle.stat();
    // The writers hold the old and the new bytes in memory and diff them; past the request size
    // limit that would stall the server (a user trial froze it for 30 s with a 53 MB replace_all).
    const limit = ctx.config.maxBodyBytes;
    if (st.size > limit) {
      throw new ToolError(
        "payload_too_large",
        `${target.relative} is ${st.size} bytes; write_file, edit_file and restore_backup change files up to ${limit} bytes (AGENT_REACH_MAX_BODY_BYTES). Use run_command for a file this large.`,
        { reason: "file_too_large", size_bytes: st.size, limit_bytes: limit, path: target.relative },
      );
    }
    const bytes = await handle.readFile();
    return { bytes, sha256: sha256Hex(bytes), mode: st.mode & 0o7777, nlink: st.nlink };
  } finally {
    await handle.close();
  }
}

/** C15: the agent's `expected_sha256` must equal the content hash now (case-insensitive hex). */
function assertExpected(expected: string | undefined, current: CurrentFile | null): void {
  if (expected === undefined) return;
  const now = current?.sha256 ?? null;
  if (expected.toLowerCase() === now) return;
  throw new ToolError(
    "stale_content",
    now === null
      ? "The file does not exist any more (expected_sha256 was given). Nothing was written."
      : "The file changed since you read it (its sha256 differs from expected_sha256). Nothing was written; call read_file again and redo the change.",
    { current_sha256: now, expected_sha256: expected.toLowerCase() },
  );
}

/** An approval is of the exact queued change: the target must be as it was at queue time. */
function assertNotChangedSinceQueued(ctx: UpdateContext, current: CurrentFile | null): void {
  const queued = ctx.queuedTargetSha256;
  const now = current?.sha256 ?? null;
  if (queued === undefined || queued === now) return;
  throw new ToolError("conflict", "The file changed after this call was queued for approval; the approved write was not done.", {
    current_sha256: now,
    queued_sha256: queued,
  });
}

async function commit(ctx: UpdateContext, target: FencedPath, current: CurrentFile | null, plan: PlannedContent, createDirs: boolean): Promise<UpdateResult> {
  const diff = diffFileBytes(target.relative, current?.bytes ?? null, plan.bytes, { encoding: plan.encoding, legacy: ctx.config.legacyEncoding });
  const sha256 = sha256Hex(plan.bytes);
  const unchanged = current !== null && current.bytes.equals(plan.bytes) && (plan.mode === undefined || plan.mode === current.mode);
  let backupId: string | null = null;
  let mode = current?.mode ?? 0;
  if (!unchanged) {
    const written = await atomicWriteFile(target.absolute, plan.bytes, {
      mode: plan.mode,
      createDirs,
      dirsRoot: ctx.workspace.root,
      beforeCommit: async () => {
        if (current === null) return;
        const backup = await ctx.backups.save({ path: target.relative, bytes: current.bytes, mode: current.mode });
        backupId = backup.id;
      },
    });
    mode = written.mode;
  }
  const profile = profileFor(plan.bytes, plan.encoding, ctx.config.legacyEncoding);
  const capped = capDiff(diff.diff, ctx.config.readMaxChars);
  ctx.note({
    shaAfter: sha256,
    backupId,
    truncated: capped.truncated,
    summary: `${current === null ? "created " : ""}+${diff.additions} −${diff.deletions} ${target.relative}`,
  });
  return {
    path: target.relative,
    created: current === null,
    changed: !unchanged,
    size_bytes: plan.bytes.length,
    sha256_before: current?.sha256 ?? null,
    sha256,
    backup_id: backupId,
    diff: capped.diff,
    diff_truncated: capped.truncated,
    additions: diff.additions,
    deletions: diff.deletions,
    encoding: profile.encoding,
    encoding_confidence: Number(profile.confidence.toFixed(3)),
    eol: profile.eol,
    bom: profile.bom,
    mode: mode.toString(8).padStart(4, "0"),
    warnings: warningsOf(current, plan, diff),
    ...(current !== null && current.nlink > 1 ? { nlink_before: current.nlink } : {}),
  };
}

/** The profile of written bytes, in the writer's encoding when they decode exactly in it. */
function profileFor(bytes: Buffer, encoding: TextEncoding | undefined, legacy: string | null): TextProfile {
  if (encoding !== undefined && !bytes.includes(0) && roundTrips(bytes.subarray(detectBom(bytes)?.length ?? 0), encoding)) {
    try {
      return profileText(bytes, { requested: encoding, legacy });
    } catch {
      // A BOM that contradicts the writer's encoding: describe the bytes as they are.
    }
  }
  return profileText(bytes, { legacy });
}

function warningsOf(current: CurrentFile | null, plan: PlannedContent, diff: FileDiff): string[] {
  const warnings = [...plan.warnings, ...diff.notes];
  if (current !== null && current.nlink > 1) {
    warnings.push(
      `the file had ${current.nlink} hard links; only this name gets the new content, the other names keep the old bytes`,
    );
  }
  return warnings;
}
