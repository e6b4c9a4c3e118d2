import type { z } from "zod";
import type { Config } from "@/lib/config";
import type { PolicyRuleData, RuleOptions, SandboxGrants } from "@/lib/policy/types";

/**
 * The contract every tool module follows. One module = one zod input schema (`.strict()`,
 * `.describe()` on every field), one description written for a model, one risk level and one
 * `run`. The HTTP route, the MCP server, the CLI and `GET /api/tools` are generated from the
 * registry of these definitions (lib/tools/registry.ts); no door has logic of its own.
 */

/** How risky a tool is; the default policy and the MCP annotations derive from it. */
export type ToolRisk = "read" | "write" | "exec" | "network";

/** MCP tool annotations (MCP spec, "Tools → Tool annotations"): hints for clients, not guarantees. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * The annotations a risk level implies: reads change nothing and may be repeated; writes change
 * workspace files and may replace content; commands may do anything a program can (and reach the
 * network when a rule grants it); fetches read from the open web.
 */
export const RISK_ANNOTATIONS: Record<ToolRisk, ToolAnnotations> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  write: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  exec: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  network: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
};

/** A tool's annotations: those of its risk level, with the definition's own overrides on top. */
export function annotationsOf(tool: Pick<ToolDefinition, "risk" | "annotations">): ToolAnnotations {
  return { ...RISK_ANNOTATIONS[tool.risk], ...tool.annotations };
}

/** A workspace the gateway serves. */
export interface Workspace {
  id: string;
  /** Canonical root: `fs.realpath` of the configured root (a root behind a symlink is allowed). */
  root: string;
  /** The root as configured, before realpath (for messages and logs). */
  configuredRoot: string;
}

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
  /** Backups newest first, optionally of one path; `offset`/`limit` page the list. */
  list(filter: { path?: string; offset: number; limit: number }): Promise<{ items: BackupRecord[]; total: number }>;
}

/** Everything a tool's `run` may use besides its arguments. */
export interface ToolContext {
  callId: string;
  workspace: Workspace;
  config: Config;
  /** Aborted when the call must stop (server shutdown, client gone for non-mutating tools). */
  signal: AbortSignal;
  /** Records facts for the audit row (merged; later notes win). */
  note(notes: AuditNotes): void;
  backups: BackupStore;
  /**
   * Set when this run executes an approved call that was queued: the target's sha256 at queue
   * time (null when the file did not exist). A write must refuse with `conflict` (605) when the
   * target's current sha256 differs, before writing anything.
   */
  queuedTargetSha256?: string | null;
  /**
   * Options of the policy rules that applied to this call, as the policy recorded them when it
   * decided (run_command limits, `redact`; lib/policy/types.ts RuleOptions). Absent when none.
   */
  ruleOptions?: RuleOptions;
  /**
   * The policy rules in force (all of them, lib/gateway/rules.ts): tools that read many files
   * (search_files) skip the files a sensitive-path rule would make read_file ask or deny for.
   * Absent in unit tests: the default rules apply.
   */
  policyRules?: readonly PolicyRuleData[];
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

/** Read-only lookups available to `subject` (no backups are made, nothing is noted). */
export interface SubjectContext {
  workspace: Workspace;
  backups: Pick<BackupStore, "get" | "list">;
}

/** What the policy engine needs to know about a call's subject. */
export interface ToolSubject {
  /** Path arguments, raw as sent (fenced by the gateway before the policy runs). */
  paths?: string[];
  /** A shell command and its raw cwd argument. */
  command?: { command: string; cwd?: string; grants?: SandboxGrants };
  /** A URL the tool will fetch. */
  url?: string;
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType, Output = unknown> {
  /** Wire name, snake_case (`read_file`). */
  name: string;
  /** Short human title. */
  title: string;
  /** Written for a model: when to use this tool instead of the shell, and how. */
  description: string;
  input: Schema;
  /**
   * The `data` of a successful call, as a zod schema. Listed as the tool's JSON Schema
   * (`GET /api/tools` output_schema, MCP `outputSchema`), and every result validates against it.
   * Use `z.looseObject` (at every level) so a field added later does not break older clients.
   */
  output: z.ZodType;
  risk: ToolRisk;
  /** Overrides of the annotations the risk level implies (`annotationsOf`), e.g. `{ idempotentHint: true }`. */
  annotations?: Partial<ToolAnnotations>;
  /**
   * What the call is about, for fencing, policy and audit. Runs before the policy, so it must
   * not have side effects; `ctx` gives read-only lookups (e.g. the path of a backup).
   */
  subject(args: z.infer<Schema>, ctx: SubjectContext): ToolSubject | Promise<ToolSubject>;
  /**
   * A reviewer may change this argument before approving (the approval then runs the call with
   * the reviewer's value, and the log keeps both). Absent: the call is approved or rejected as is.
   */
  editable?: { field: string; label: string };
  /** For calls that may wait for approval: the proposed change, computed without side effects. */
  preview?(args: z.infer<Schema>, ctx: ToolContext): Promise<ToolPreview>;
  /**
   * Runs the call. Returns the `data` of the success envelope (JSON-serialisable). Fails by
   * throwing `ToolError` (lib/errors.ts); anything else thrown is reported as `internal`.
   */
  run(args: z.infer<Schema>, ctx: ToolContext): Promise<Output>;
}

/** Identity helper that keeps the schema's inferred type for `run`. */
export function defineTool<Schema extends z.ZodType, Output>(
  def: ToolDefinition<Schema, Output>,
): ToolDefinition<Schema, Output> {
  return def;
}
