import { db } from "@/lib/db";
import { getBlob } from "@/lib/backups/blobs";
import { getConfig } from "@/lib/config";
import { diffFileBytes, diffTexts } from "@/lib/diff/unified";
import { sessionName } from "@/lib/dashboard/outcome";
import { getTool } from "@/lib/tools/registry";
import { readWorkspaceFile } from "@/lib/dashboard/files";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { markerKinds } from "@/lib/redact";
import { sha256Hex } from "@/lib/workspace/text";
import type { PolicyVerdict } from "@/lib/policy/types";
import type { Envelope } from "@/lib/result";
import type { ToolPreview } from "@/lib/audit/types";

/**
 * Reads for the call detail page: one ToolCall row with everything the audit log holds about it
 * (arguments as received and as edited, the policy verdict, the approval preview, the envelope
 * the agent got, the event history, the backup it made and the backups of its target).
 */

/** One event of a call's history (from the hash-chained Event table). */
export interface CallEvent {
  seq: number;
  type: string;
  actor: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** A backup as listed on the call page. */
export interface CallBackup {
  id: string;
  path: string;
  size: number;
  sha256: string;
  createdAt: Date;
}

/** Everything the call detail page shows. */
export interface CallDetail {
  id: string;
  tool: string;
  door: string;
  status: string;
  decision: string | null;
  session: { id: string; agentName: string | null; externalId: string };
  /** Arguments as received (secrets redacted). */
  args: unknown;
  /** Arguments as the reviewer edited them before approving, or null. */
  editedArgs: unknown;
  /**
   * The reviewer's edit as a unified diff of the edited argument (agent's proposal → reviewer's
   * value, e.g. write_file's content), or null when the call was not edited.
   */
  editDiff: { field: string; diff: string; additions: number; deletions: number } | null;
  /** What the agent said the call is for (recorded with it, e.g. the Claude Code hook's description). */
  description: string | null;
  /** The name the agent gave the session (its X-Agent-Session value). */
  sessionName: string;
  pathRaw: string | null;
  pathResolved: string | null;
  target: string | null;
  verdict: PolicyVerdict | null;
  /** What the reviewer saw while it waited (diff against `targetSha256`), or null. */
  preview: ToolPreview | null;
  envelope: Envelope | null;
  /**
   * Secret markers (`[REDACTED:<kind>:<length>]`) in a success envelope's data, by kind with
   * counts; empty when nothing was masked (the page offers "reveal" only when there are some).
   */
  masked: Record<string, number>;
  errorName: string | null;
  errorCode: number | null;
  summary: string | null;
  shaBefore: string | null;
  shaAfter: string | null;
  bytesIn: number | null;
  bytesOut: number | null;
  truncated: boolean | null;
  reviewer: string | null;
  reviewReason: string | null;
  createdAt: Date;
  decidedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  expiresAt: Date | null;
  durationMs: number | null;
  events: CallEvent[];
  /** The backup this call made of the bytes it replaced, if any. */
  backupMade: CallBackup | null;
  /** For restore_backup: the backup it restored from. */
  restoredFrom: CallBackup | null;
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One call with its history, or null when no call has this id. */
export async function getCallDetail(callId: string): Promise<CallDetail | null> {
  const row = await db().toolCall.findUnique({ where: { id: callId }, include: { session: { include: { agent: { select: { name: true } } } } } });
  if (!row) return null;
  const [events, backups] = await Promise.all([
    db().event.findMany({ where: { callId }, orderBy: { seq: "asc" } }),
    db().backup.findMany({ where: { callId }, orderBy: { createdAt: "asc" } }),
  ]);
  const pending = parseJson(row.pendingJson) as { preview?: ToolPreview; verdict?: PolicyVerdict } | null;
  const envelope = parseJson(row.resultJson) as Envelope | null;
  const args = parseJson(row.argsJson);
  const backupMade = backups.find((b) => b.id === row.backupId) ?? backups[0] ?? null;
  const restoredId = row.tool === "restore_backup" && args && typeof args === "object" ? (args as { backup_id?: unknown }).backup_id : undefined;
  const restored = typeof restoredId === "string" ? await db().backup.findUnique({ where: { id: restoredId } }) : null;
  const toBackup = (b: { id: string; path: string; size: number; blobSha: string; createdAt: Date }): CallBackup => ({
    id: b.id,
    path: b.path,
    size: b.size,
    sha256: b.blobSha,
    createdAt: b.createdAt,
  });
  return {
    id: row.id,
    tool: row.tool,
    door: row.door,
    status: row.status,
    decision: row.decision,
    session: { id: row.sessionId, agentName: row.session.agent?.name ?? null, externalId: row.session.externalId },
    sessionName: sessionName(row.session.externalId),
    editDiff: editDiffOf(row.tool, args, parseJson(row.editedArgsJson)),
    description: describedAs(events.find((e) => e.type === "call.received")?.dataJson ?? null),
    args,
    editedArgs: parseJson(row.editedArgsJson),
    pathRaw: row.pathRaw,
    pathResolved: row.pathResolved,
    target: row.target,
    verdict: (parseJson(row.decisionJson) as PolicyVerdict | null) ?? pending?.verdict ?? null,
    preview: pending?.preview ?? null,
    envelope,
    masked: envelope?.ok ? markerKinds(JSON.stringify(envelope.data)) : {},
    errorName: row.errorName,
    errorCode: row.errorCode,
    summary: row.summary,
    shaBefore: row.shaBefore,
    shaAfter: row.shaAfter,
    bytesIn: row.bytesIn,
    bytesOut: row.bytesOut,
    truncated: row.truncated,
    reviewer: row.reviewer,
    reviewReason: row.reviewReason,
    createdAt: row.createdAt,
    decidedAt: row.decidedAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    expiresAt: row.expiresAt,
    durationMs: row.durationMs,
    events: events.map((e) => ({ seq: e.seq, type: e.type, actor: e.actor, data: parseJson(e.dataJson) as Record<string, unknown>, createdAt: e.createdAt })),
    backupMade: backupMade ? toBackup(backupMade) : null,
    restoredFrom: restored ? toBackup(restored) : null,
  };
}

/**
 * Splits a success envelope's data into long text outputs (stdout, stderr, content, diff …: any
 * string member with a line break or over 200 characters) and the remaining small fields, so the
 * page can show outputs as text blocks and the rest as JSON. Nothing is dropped.
 */
export function splitOutputs(data: unknown): { outputs: { name: string; text: string }[]; rest: unknown } {
  if (!data || typeof data !== "object" || Array.isArray(data)) return { outputs: [], rest: data };
  const outputs: { name: string; text: string }[] = [];
  const rest: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(data)) {
    if (name !== "diff" && typeof value === "string" && (value.includes("\n") || value.length > 200)) outputs.push({ name, text: value });
    else if (name !== "diff") rest[name] = value;
  }
  return { outputs, rest };
}

/** The diff a call page shows, and where it came from. */
export interface CallDiff {
  diff: string;
  additions: number;
  deletions: number;
  /** "bytes": recomputed in full from the stored before/after bytes; "result": the diff in the
   * agent's result (cut when `truncated`); "preview": the diff the reviewer was shown. */
  source: "bytes" | "result" | "preview";
  truncated: boolean;
  notes: string[];
}

/**
 * The whole diff of a finished write (write_file, edit_file, restore_backup): recomputed from the
 * bytes before (its backup, or nothing for a created file) and after (a stored blob with the
 * after-sha256, or the file itself while it still has that content), because the diff in the
 * agent's result is capped. Falls back to the result's diff, then to the approval preview.
 * @returns null when the call has no diff at all.
 */
export async function callDiff(detail: CallDetail): Promise<CallDiff | null> {
  const data = detail.envelope?.ok ? (detail.envelope.data as Record<string, unknown>) : null;
  const path = typeof data?.path === "string" ? data.path : detail.preview?.path;
  if (data && path && detail.shaAfter && typeof data.diff === "string") {
    const before = detail.shaBefore === null ? null : await getBlob(detail.shaBefore);
    const after = await bytesWithSha(path, detail.shaAfter);
    if (after && (detail.shaBefore === null || before)) {
      // Decoded in the encoding the write used (legacy files show as text, the note names it).
      const encoding = typeof data.encoding === "string" ? data.encoding : null;
      const full = diffFileBytes(path, before, after, { encoding, legacy: getConfig().legacyEncoding });
      return { ...full, source: "bytes", truncated: false };
    }
  }
  if (data && typeof data.diff === "string" && data.diff !== "") {
    return {
      diff: data.diff,
      additions: Number(data.additions ?? 0),
      deletions: Number(data.deletions ?? 0),
      source: "result",
      truncated: data.diff_truncated === true,
      notes: [],
    };
  }
  if (detail.preview?.diff) {
    return {
      diff: detail.preview.diff,
      additions: detail.preview.additions ?? 0,
      deletions: detail.preview.deletions ?? 0,
      source: "preview",
      truncated: false,
      notes: detail.preview.warnings ?? [],
    };
  }
  return null;
}

/** Bytes whose sha256 is `sha`: a stored blob, or the workspace file while it still has them. */
async function bytesWithSha(relPath: string, sha: string): Promise<Buffer | null> {
  const blob = await getBlob(sha);
  if (blob) return blob;
  try {
    const current = await readWorkspaceFile(await currentWorkspace(), relPath);
    return current && sha256Hex(current) === sha ? current : null;
  } catch {
    return null;
  }
}

/** True when a call with this id exists (a cheap check before loading the whole detail). */
export async function callExists(callId: string): Promise<boolean> {
  return (await db().toolCall.count({ where: { id: callId } })) > 0;
}

/** The reviewer's edit of the tool's editable argument as a diff, or null when there is none. */
function editDiffOf(tool: string, args: unknown, edited: unknown): CallDetail["editDiff"] {
  const field = getTool(tool)?.editable?.field;
  if (!field || !edited || typeof edited !== "object" || !args || typeof args !== "object") return null;
  const before = (args as Record<string, unknown>)[field];
  const after = (edited as Record<string, unknown>)[field];
  if (typeof before !== "string" || typeof after !== "string") return null;
  return { field, ...diffTexts(`agent's ${field}`, `reviewer's ${field}`, before, after) };
}

/** The `description` in a received event's data, or null. */
function describedAs(dataJson: string | null): string | null {
  if (!dataJson) return null;
  const data = parseJson(dataJson) as { description?: unknown } | null;
  return data && typeof data.description === "string" && data.description.trim() !== "" ? data.description : null;
}
