// The shapes of backups, shared by the store (lib/backups/store.ts) and every layer that makes or
// reads one (tools, effects, restore).

/** A stored backup (the bytes a file had before a write replaced them). */
export interface BackupRecord {
  id: string;
  /** Workspace-relative path, "/"-separated. */
  path: string;
  sha256: string;
  /** Size in bytes. */
  size: number;
  /** File mode bits (e.g. 0o644). */
  mode: number;
  /** The call that replaced these bytes. */
  callId: string;
  createdAt: Date;
}

/** Backups as seen by tools; implemented by lib/backups on the database. */
export interface BackupStore {
  /** Stores `bytes` (content-addressed, compressed) as a backup of `path` made by the current call. */
  save(input: { path: string; bytes: Buffer; mode: number }): Promise<BackupRecord>;
  /** One backup with its bytes, or null when the id is unknown in this workspace. */
  get(id: string): Promise<(BackupRecord & { bytes: Buffer }) | null>;
  /**
   * Removes backups this call made (by id) whose change was never applied: a change set that could
   * not be staged keeps nothing. Ids of other calls are left alone.
   */
  discard(ids: string[]): Promise<void>;
  /** Backups newest first, optionally of one path; `offset`/`limit` page the list. */
  list(filter: { path?: string; offset: number; limit: number }): Promise<{ items: BackupRecord[]; total: number }>;
}
