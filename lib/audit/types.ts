// What a tool contributes to its call's audit row: facts about the call (AuditNotes) and, for a
// call that waits for a reviewer, the preview stored with it (ToolPreview).

/** What a tool tells the audit log about itself; merged into the call's row. */
export interface AuditNotes {
  /** A path argument exactly as the agent sent it. */
  pathRaw?: string;
  /** The canonical absolute path that was checked and opened. */
  pathResolved?: string;
  /** Short free-text subject for search: a path, a command or a URL. */
  target?: string;
  /** sha256 (hex) of the target file before / after the call; null when it did not exist. */
  shaBefore?: string | null;
  shaAfter?: string | null;
  /** Backup made by this call. */
  backupId?: string | null;
  /** Bytes received from the agent / returned to it. */
  bytesIn?: number;
  bytesOut?: number;
  /** True when the result does not hold everything (capped output, clipped lines, …). */
  truncated?: boolean;
  /** One-line human summary for timelines, e.g. "+3 −1 src/app.ts". */
  summary?: string;
}

/** What the approval queue shows a reviewer before a risky call runs. */
export interface ToolPreview {
  /** Workspace-relative target, when the call is about one file. */
  path?: string;
  /** sha256 of the target now (null when it does not exist). */
  targetSha256?: string | null;
  /** Unified diff of the proposed change (writes and edits). */
  diff?: string;
  /** Added / removed line counts of the diff. */
  additions?: number;
  deletions?: number;
  /** Size of the file after the change (bytes), when the preview knows it. */
  afterBytes?: number;
  /** Anything else a reviewer should see (e.g. "file is binary", "line endings change"). */
  warnings?: string[];
}
