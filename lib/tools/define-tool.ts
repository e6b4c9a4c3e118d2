import type { z } from "zod";
import type { Config } from "@/lib/config";
import type { AuditNotes, ToolPreview } from "@/lib/audit/types";
import type { BackupRecord, BackupStore } from "@/lib/backups/types";
import type { PolicyRuleData, PresetName, RuleOptions, SandboxGrants, ToolRisk } from "@/lib/policy/types";
import type { Workspace } from "@/lib/workspace/types";

/**
 * The contract every tool module follows. One module = one zod input schema (`.strict()`,
 * `.describe()` on every field), one description written for a model, one risk level and one
 * `run`. The HTTP route, the MCP server, the CLI and `GET /api/tools` are generated from the
 * registry of these definitions (lib/tools/registry.ts); no door has logic of its own.
 */

// The types below belong to the layers that own them; they are re-exported here because every
// tool module needs them together with the tool contract.
export type { AuditNotes, BackupRecord, BackupStore, ToolPreview, ToolRisk, Workspace };

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
   * The supervision preset the call was judged under (its verdict's `preset`), for checks a tool
   * makes itself after running (run_command's change-set hold: lib/effects). Absent: the
   * strictest checks apply.
   */
  preset?: PresetName;
  /**
   * True when the policy allowed the call without asking anyone, and only because the default
   * rules know each of its commands as read-only (not an approval, an operator rule or a grant):
   * under `strict`, run_command then holds a change set beyond git's stat cache
   * (lib/effects/command-effects.ts).
   */
  allowedWithoutAsking?: boolean;
  /**
   * Options of the policy rules that applied to this call, as the policy recorded them when it
   * decided (run_command limits, `redact`; lib/policy/types.ts RuleOptions). Absent when none.
   */
  ruleOptions?: RuleOptions;
  /**
   * The policy rules in force (all of them, lib/policy/rule-store.ts): tools that read many files
   * (search_files) skip the files a sensitive-path rule would make read_file ask or deny for.
   * Absent in unit tests: the default rules apply.
   */
  policyRules?: readonly PolicyRuleData[];
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
  /**
   * How a successful call changes the workspace, for the views and undo paths that read it back:
   * `"file"`: one file through the write pipeline (lib/workspace/update-file.ts: the call's row
   * records the file's sha256 before and after, and a backup holds the bytes it replaced);
   * `"change_set"`: a journaled change set (lib/effects). Absent: the tool changes no file.
   */
  changes?: "file" | "change_set";
  /**
   * A grant made while approving a call of this tool may allow later calls like it: `"path"` by a
   * path glob, `"command"` by a command pattern (lib/approvals/grants.ts). Absent: no grants.
   */
  grant?: "path" | "command";
  /**
   * Running the call again with the same arguments gives the same output as long as the workspace
   * files are the same (no effects, no network, no clock): a reviewer may reveal the masked values
   * of its stored output, which is checked against a fresh run (lib/redact/reveal.ts).
   */
  reproducible?: boolean;
  /**
   * For a call that proposes one file's new text: the file's text before and after, as shown to a
   * reviewer (decoded, line endings as in the file), from the call's arguments and the file's
   * current bytes (null: no such file). The approval page uses it to show more context than the
   * queued diff. Pure: no file system, no side effects. @throws ToolError when the arguments do
   * not apply to the file (e.g. edit_file's old_string is not found)
   */
  proposedText?(args: z.infer<Schema>, current: Buffer | null): { before: string; after: string };
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
