import fs from "node:fs/promises";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import type { ErrorBody } from "@/lib/errors";
import { redactText, redactValue } from "@/lib/redact";
import type { Envelope } from "@/lib/result";
import type { AuditNotes } from "@/lib/audit/types";
import { submit, type InsertCallOp } from "@/lib/audit/writer";
import type { Prisma } from "@/lib/generated/prisma/client";

/**
 * The ToolCall rows of the audit log. A row is written when a call is received (before anything
 * runs) and moves through these statuses:
 *
 *   received → running → succeeded | failed | conflict | rejected (the tool refused: stale content, no match, …)
 *   received → pending → approved → running → …            (a reviewer approved)
 *   received → pending → rejected | expired                 (a reviewer rejected / nobody decided)
 *   received → rejected                                     (bad arguments, path outside the fence)
 *   received → denied                                       (policy deny)
 *   running | approved → interrupted                        (the server stopped while it ran)
 *
 * Every transition is a conditional update (`where status in …`), so two requests can never
 * both move the same call, and every transition appends a hash-chained Event in the same
 * transaction (lib/audit/writer.ts, which also shares commits between concurrent calls).
 */

export const FINAL_STATUSES = ["succeeded", "failed", "conflict", "rejected", "expired", "denied", "interrupted"] as const;
export type CallStatus = "received" | "pending" | "approved" | "running" | (typeof FINAL_STATUSES)[number];

export function isFinal(status: string): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/** Largest stored argument or result JSON (characters); longer values are cut with a marker. */
const MAX_STORED_JSON = 1_000_000;

/**
 * The stored copy of a call's envelope: redacted, and when longer than `MAX_STORED_JSON`
 * characters still a valid envelope (same `ok` and `call_id`; the error's name and message) that
 * says it was cut: `truncated_for_storage: {original_length}`, with the first 10,000 characters of
 * the data's JSON in `data.head` (success) or the error's detail left out (failure).
 */
export function storedEnvelopeJson(envelope: Envelope): string {
  const json = JSON.stringify(redactValue(envelope) ?? null);
  if (json.length <= MAX_STORED_JSON) return json;
  const cut = { original_length: json.length };
  if (envelope.ok) {
    const data = JSON.stringify(redactValue(envelope.data) ?? null);
    return JSON.stringify({ ok: true, call_id: envelope.call_id, data: { _truncated: true, ...cut, head: data.slice(0, 10_000) }, _truncated: true, truncated_for_storage: cut });
  }
  const error = { ...envelope.error, message: envelope.error.message.slice(0, 2000), detail: { _truncated: true } };
  return JSON.stringify({ ok: false, call_id: envelope.call_id, error, _truncated: true, truncated_for_storage: cut });
}

/** JSON of `value` with secrets redacted, capped at `MAX_STORED_JSON` characters. */
export function storedJson(value: unknown): string {
  const json = JSON.stringify(redactValue(value) ?? null);
  if (json.length <= MAX_STORED_JSON) return json;
  return JSON.stringify({ _truncated: true, original_length: json.length, head: json.slice(0, 10_000) });
}

/**
 * Escapes control, bidirectional and invisible characters (`\n` → `\\n`, U+202E → `\\u202e`) so a
 * raw path stored for the log cannot forge a log line or repaint a terminal or the dashboard.
 */
export function escapeForLog(raw: string): string {
  return raw.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

export interface NewCall {
  id: string;
  sessionId: string;
  workspaceId: string;
  agentId: string | null;
  door: string;
  tool: string;
  args: unknown;
  hostId: string;
  actor: string;
  /** What the agent said the call is for (e.g. the Claude Code hook's `description`), kept in the received event. */
  description?: string;
  /** W3C trace context (`traceparent`) of the request that made the call, when it sent one. */
  traceparent?: string | null;
}

/**
 * Writes the row of a call just received (status "received") and its first event, in one
 * transaction. @returns once committed: the record is durable before anything runs.
 */
export async function recordReceived(call: NewCall): Promise<void> {
  await submit(receivedOp(call));
}

/**
 * The received record of a call, built now (its arguments redacted, its time taken) and written
 * together with the call's next status change, in the same transaction and before it: a call that
 * is decided at once costs one commit before the tool runs instead of two, and the record is still
 * durable before anything runs. Whoever makes the next status change must go through `with`;
 * `send` writes the record alone (a failure before any status change).
 */
export class Receipt {
  private sent: Promise<unknown> | null = null;
  constructor(private readonly op: InsertCallOp) {}

  /** Submits the record (once; later calls return the same promise). @returns once committed. */
  send(): Promise<unknown> {
    this.sent ??= submit(this.op);
    return this.sent;
  }

  /**
   * Runs `write` (a status change of this call) with the record submitted just before it: when
   * `write` submits in the same turn of the event loop, both commit in one transaction.
   * @returns what `write` returns, once the record is committed too. @throws the record's error first.
   */
  async with<T>(write: () => Promise<T>): Promise<T> {
    const sent = this.send();
    const result = write();
    result.catch(() => undefined); // observed below; the record's own failure is the one to report first
    await sent;
    return result;
  }
}

/** A received record to write with the call's next status change (see `Receipt`). */
export function deferReceived(call: NewCall): Receipt {
  return new Receipt(receivedOp(call));
}

function receivedOp(call: NewCall): InsertCallOp {
  const argsJson = storedJson(call.args);
  const description = call.description?.trim() ? (redactValue(call.description.trim().slice(0, 1000)) as string) : undefined;
  return {
    kind: "insert",
    row: {
      id: call.id,
      sessionId: call.sessionId,
      workspaceId: call.workspaceId,
      agentId: call.agentId,
      door: call.door,
      tool: call.tool,
      argsJson,
      bytesIn: Buffer.byteLength(argsJson),
      status: "received",
      hostId: call.hostId,
      traceparent: call.traceparent ?? null,
      createdAt: new Date(),
    },
    event: { type: "call.received", callId: call.id, actor: call.actor, data: { tool: call.tool, door: call.door, ...(description && { description }) } },
  };
}

/**
 * A raw path or command as the log keeps it: secrets masked as in the stored arguments (a command
 * line may carry a password or this server's own token), then escaped (`escapeForLog`).
 */
export function logText(raw: string): string {
  return escapeForLog(redactText(raw));
}

/** Audit notes as ToolCall columns. */
export function notesToColumns(notes: AuditNotes) {
  return {
    ...(notes.pathRaw !== undefined && { pathRaw: logText(notes.pathRaw) }),
    ...(notes.pathResolved !== undefined && { pathResolved: notes.pathResolved }),
    ...(notes.target !== undefined && { target: logText(notes.target).slice(0, 2000) }),
    ...(notes.shaBefore !== undefined && { shaBefore: notes.shaBefore }),
    ...(notes.shaAfter !== undefined && { shaAfter: notes.shaAfter }),
    ...(notes.backupId !== undefined && { backupId: notes.backupId }),
    ...(notes.bytesOut !== undefined && { bytesOut: notes.bytesOut }),
    ...(notes.truncated !== undefined && { truncated: notes.truncated }),
    ...(notes.summary !== undefined && { summary: redactText(notes.summary).slice(0, 500) }),
  };
}

/** Column values a status change may set besides the status itself. */
export type CallColumns = Omit<Prisma.ToolCallUncheckedUpdateManyInput, "status" | "id">;

/** What a transition writes: columns, the actor, the event's data, and the final envelope for waiters. */
export type TransitionData = CallColumns & {
  /** Who caused it: "agent:<id>", "reviewer:<login>", "system". */
  actor: string;
  eventData?: Record<string, unknown>;
  /** A final transition's envelope exactly as produced (handed to waiters in this process). */
  outcome?: Envelope;
};

/**
 * Moves a call from one of `from` to `to` with extra column values, and appends its event, in one
 * transaction (shared with concurrent writes by the audit writer).
 * @returns true when this caller made the move; false when the call was not in `from` any more.
 */
export async function transition(
  callId: string,
  from: CallStatus[],
  to: CallStatus,
  data: TransitionData,
): Promise<boolean> {
  const { actor, eventData, outcome, ...columns } = data;
  const { applied } = await submit({
    kind: "transition",
    callId,
    from,
    to,
    columns,
    ...(outcome && { outcome }),
    event: { type: `call.${to}`, callId, actor, data: eventData ?? {} },
  });
  return applied;
}

/**
 * Ends a call from one of `from` with its envelope: stores the (redacted) envelope, error name and
 * code, timings and notes; appends the event and the JSONL line (AGENT_REACH_LOG).
 * @returns true when this caller ended it.
 */
export async function finishCall(
  callId: string,
  from: CallStatus[],
  status: (typeof FINAL_STATUSES)[number],
  envelope: Envelope,
  options: { actor: string; notes?: AuditNotes; startedAt?: Date; extra?: CallColumns },
): Promise<boolean> {
  const finishedAt = new Date();
  const error: ErrorBody | null = envelope.ok ? null : envelope.error;
  const moved = await transition(callId, from, status, {
    // Waiters in this process get this very envelope; the stored copy is redacted and capped.
    outcome: envelope,
    actor: options.actor,
    eventData: error ? { error: error.name } : {},
    ...notesToColumns(options.notes ?? {}),
    ...options.extra,
    resultJson: storedEnvelopeJson(envelope),
    errorName: error?.name ?? null,
    errorCode: error?.code ?? null,
    execArgsJson: null,
    finishedAt,
    ...(options.startedAt && { durationMs: finishedAt.getTime() - options.startedAt.getTime() }),
  });
  if (moved) await appendJsonLine(callId);
  return moved;
}

/** Appends the finished call as one redacted JSON line to AGENT_REACH_LOG, when configured. */
async function appendJsonLine(callId: string): Promise<void> {
  const file = getConfig().logFile;
  if (!file) return;
  const row = await db().toolCall.findUnique({ where: { id: callId } });
  if (!row) return;
  const line = {
    ts: (row.finishedAt ?? row.createdAt).toISOString(),
    call_id: row.id,
    session_id: row.sessionId,
    agent_id: row.agentId,
    door: row.door,
    tool: row.tool,
    args: JSON.parse(row.argsJson),
    path_raw: row.pathRaw,
    path_resolved: row.pathResolved,
    decision: row.decision,
    status: row.status,
    error: row.errorName,
    sha256_before: row.shaBefore,
    sha256_after: row.shaAfter,
    backup_id: row.backupId,
    reviewer: row.reviewer,
    duration_ms: row.durationMs,
  };
  await fs.appendFile(file, `${JSON.stringify(line)}\n`, "utf8");
}
