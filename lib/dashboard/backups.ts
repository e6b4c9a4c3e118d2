import { sha256Hex } from "@/lib/workspace/text";
import { db } from "@/lib/db";
import { toErrorBody } from "@/lib/errors";
import { getBlob } from "@/lib/backups/blobs";
import { getConfig } from "@/lib/config";
import { diffFileBytes, type FileDiff } from "@/lib/diff/unified";
import { readWorkspaceFile } from "@/lib/dashboard/files";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { decodeForDisplay, profileText } from "@/lib/workspace/text";

/**
 * Reads for the backups pages: files that have backups (searchable), each file's versions with
 * the call that replaced them, a version's content, and diffs against the current file or another
 * version. Only backups of the workspace this process serves are listed.
 */

/** Files per page of the file list. */
export const FILES_PAGE_SIZE = 100;

/** A file with backups. */
export interface BackedUpFile {
  path: string;
  versions: number;
  latestAt: Date;
  /** Sum of the versions' sizes (bytes, before deduplication). */
  totalBytes: number;
}

/**
 * Files that have backups, most recently backed up first.
 * @param query substring of the path to look for ("" for all)
 * @param page 1-based
 */
export async function listBackedUpFiles(query: string, page: number): Promise<{ items: BackedUpFile[]; total: number }> {
  const workspace = await currentWorkspace();
  const where = { workspaceId: workspace.id, ...(query ? { path: { contains: query } } : {}) };
  const [groups, all] = await Promise.all([
    db().backup.groupBy({
      by: ["path"],
      where,
      _count: { _all: true },
      _max: { createdAt: true },
      _sum: { size: true },
      orderBy: { _max: { createdAt: "desc" } },
      skip: (Math.max(1, page) - 1) * FILES_PAGE_SIZE,
      take: FILES_PAGE_SIZE,
    }),
    db().backup.groupBy({ by: ["path"], where }),
  ]);
  return {
    total: all.length,
    items: groups.map((g) => ({ path: g.path, versions: g._count._all, latestAt: g._max.createdAt!, totalBytes: g._sum.size ?? 0 })),
  };
}

/** One stored version of a file. */
export interface BackupVersion {
  id: string;
  path: string;
  createdAt: Date;
  size: number;
  sha256: string;
  /** File mode as 4 octal digits ("0644"). */
  mode: string;
  /** The call that replaced these bytes (it made this backup). */
  call: { id: string; tool: string; status: string; reviewer: string | null } | null;
}

/** The versions of one file, newest first (every one of them; a file rarely has thousands). */
export async function listVersions(path: string): Promise<BackupVersion[]> {
  const workspace = await currentWorkspace();
  const rows = await db().backup.findMany({ where: { workspaceId: workspace.id, path }, orderBy: [{ createdAt: "desc" }, { id: "desc" }] });
  return withCalls(rows);
}

type BackupRow = { id: string; path: string; createdAt: Date; size: number; blobSha: string; mode: number; callId: string };

async function withCalls(rows: BackupRow[]): Promise<BackupVersion[]> {
  const calls = await db().toolCall.findMany({
    where: { id: { in: rows.map((r) => r.callId) } },
    select: { id: true, tool: true, status: true, reviewer: true },
  });
  const byId = new Map(calls.map((c) => [c.id, c]));
  return rows.map((r) => ({
    id: r.id,
    path: r.path,
    createdAt: r.createdAt,
    size: r.size,
    sha256: r.blobSha,
    mode: r.mode.toString(8).padStart(4, "0"),
    call: byId.get(r.callId) ?? null,
  }));
}

/** One version (null when unknown in this workspace). */
export async function getVersion(backupId: string): Promise<BackupVersion | null> {
  const workspace = await currentWorkspace();
  const row = await db().backup.findFirst({ where: { id: backupId, workspaceId: workspace.id } });
  return row ? (await withCalls([row]))[0] : null;
}

/** A version's bytes (null when the backup or its blob is unknown). */
export async function versionBytes(backupId: string): Promise<{ version: BackupVersion; bytes: Buffer } | null> {
  const version = await getVersion(backupId);
  if (!version) return null;
  const bytes = await getBlob(version.sha256);
  return bytes ? { version, bytes } : null;
}

/** Content as a page shows it: decoded text, or a note for binary bytes. */
export type ShownContent = { kind: "text"; text: string; encoding: string; eol: string; bom: boolean } | { kind: "binary"; size: number };

/** Decodes bytes for display in their own encoding (bytes that do not decode show as U+FFFD); binary content is not decoded. */
export function showContent(bytes: Buffer): ShownContent {
  const profile = profileText(bytes, { legacy: getConfig().legacyEncoding });
  if (profile.binary) return { kind: "binary", size: bytes.length };
  return { kind: "text", text: decodeForDisplay(bytes, profile), encoding: profile.valid ? profile.encoding : `${profile.encoding} (with invalid bytes shown as U+FFFD)`, eol: profile.eol, bom: profile.bom };
}

/** What a version is compared with. */
export type DiffTarget = { kind: "current" } | { kind: "version"; backupId: string };

/** A diff between a version and the current file or another version. */
export interface VersionDiff extends FileDiff {
  /** Labels of the two sides, old first. */
  oldLabel: string;
  newLabel: string;
  /** Set when the other side could not be read (e.g. the path now leaves the workspace). */
  error: string | null;
  /**
   * Against the current file: its sha256 as diffed (null when there is no file); the restore
   * passes it on so a file changed since is refused. Undefined against another version.
   */
  currentSha256?: string | null;
}

/**
 * Diffs a version against the current file ("what restoring would change": current → version)
 * or against another version of the same file (older → newer).
 * @returns null when either backup is unknown.
 */
export async function diffVersion(backupId: string, against: DiffTarget): Promise<VersionDiff | null> {
  const base = await versionBytes(backupId);
  if (!base) return null;
  const { version, bytes } = base;
  const label = (v: BackupVersion) => `backup ${v.id} (${v.createdAt.toISOString()})`;
  if (against.kind === "current") {
    try {
      const current = await readWorkspaceFile(await currentWorkspace(), version.path);
      return {
        ...diffFileBytes(version.path, current, bytes, { legacy: getConfig().legacyEncoding }),
        oldLabel: current === null ? "current file (missing)" : "current file",
        newLabel: label(version),
        error: null,
        currentSha256: current === null ? null : sha256Hex(current),
      };
    } catch (err) {
      return { diff: "", additions: 0, deletions: 0, notes: [], oldLabel: "current file", newLabel: label(version), error: toErrorBody(err).message };
    }
  }
  const other = await versionBytes(against.backupId);
  if (!other || other.version.path !== version.path) return null;
  const [older, newer] = other.version.createdAt <= version.createdAt ? [other, base] : [base, other];
  return { ...diffFileBytes(version.path, older.bytes, newer.bytes, { legacy: getConfig().legacyEncoding }), oldLabel: label(older.version), newLabel: label(newer.version), error: null };
}
