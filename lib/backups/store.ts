import { db } from "@/lib/db";
import { newId } from "@/lib/ids";
import type { BackupRecord, BackupStore } from "@/lib/backups/types";
import { getBlob, putBlob } from "@/lib/backups/blobs";

type BackupRow = { id: string; path: string; blobSha: string; size: number; mode: number; callId: string; createdAt: Date };

function toRecord(row: BackupRow): BackupRecord {
  return { id: row.id, path: row.path, sha256: row.blobSha, size: row.size, mode: row.mode, callId: row.callId, createdAt: row.createdAt };
}

/**
 * The database-backed `BackupStore` that tools see for one call in one workspace.
 * `save` stores the bytes as a blob and a Backup row pointing at it; `get` and `list` only see
 * backups of this workspace.
 */
export function backupStoreFor(workspaceId: string, callId: string): BackupStore {
  return {
    async save({ path, bytes, mode }) {
      const blobSha = await putBlob(bytes);
      const row = await db().backup.create({
        data: { id: newId("bak"), workspaceId, path, blobSha, size: bytes.length, mode, callId },
      });
      return toRecord(row);
    },
    async discard(ids) {
      // Only this call's rows; the blobs stay (content-addressed, possibly shared with other backups).
      if (ids.length > 0) await db().backup.deleteMany({ where: { id: { in: ids }, workspaceId, callId } });
    },
    async get(id) {
      const row = await db().backup.findFirst({ where: { id, workspaceId } });
      if (!row) return null;
      const bytes = await getBlob(row.blobSha);
      if (!bytes) return null;
      return { ...toRecord(row), bytes };
    },
    async list({ path, offset, limit }) {
      const where = { workspaceId, ...(path !== undefined ? { path } : {}) };
      const [rows, total] = await Promise.all([
        db().backup.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], skip: offset, take: limit }),
        db().backup.count({ where }),
      ]);
      return { items: rows.map(toRecord), total };
    },
  };
}
