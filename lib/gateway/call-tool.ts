import { z } from "zod";
import { getConfig } from "@/lib/config";
import { errorBody, toErrorBody, ToolError, type ErrorBody } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { redactServerSecretsValue, redactValue } from "@/lib/redact";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "@/lib/json-depth";
import { failure, type Envelope } from "@/lib/result";
import { deferReceived, finishCall, logText, notesToColumns, transition, type Receipt } from "@/lib/audit/calls";
import type { PolicyVerdict } from "@/lib/policy/types";
import { getTool } from "@/lib/tools/registry";
import type { AuditNotes, ToolDefinition, ToolPreview, ToolSubject, Workspace } from "@/lib/tools/define-tool";
import { askPolicy, readOnlyContext } from "@/lib/gateway/contexts";
import { effectivePreset } from "@/lib/policy/preset-store";
import { PRESETS } from "@/lib/policy/presets";
import { sensitivePathRule } from "@/lib/policy/rule-match";
import { loadRules } from "@/lib/policy/rule-store";
import { linkNamesOf } from "@/lib/effects/link-check";
import type { FileChangeFacts } from "@/lib/policy/types";
import fs from "node:fs/promises";
import path from "node:path";
import { resolveInWorkspace, type FencedPath } from "@/lib/workspace/fence";
import { fenceSubject } from "@/lib/workspace/fence-subject";
import { executeCall } from "@/lib/gateway/execute";
import { resolveSession } from "@/lib/gateway/sessions";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { notifyPending } from "@/lib/approvals/queue";
import { waitForAnswer } from "@/lib/approvals/wait";
import { startExecutor } from "@/lib/approvals/executor";
import { argsColumn, decisionColumn, pendingColumn } from "@/lib/audit/record";

/**
 * The one pipeline every door calls (docs/ARCHITECTURE.md), split at the approval step:
 * `decideCall`
 * 1. records the call (every call has an audit row, even a bad one; durable before the tool runs,
 *    and for tools that do more than read, before the decision step: see `decideCall`);
 * 2. parses the arguments with the tool's zod schema;
 * 3. fences every path argument (and a command's cwd) to the workspace root;
 * 4. asks the policy: allow | ask | deny;
 * 5. ask → queues the call for a reviewer;
 * `runCall` (an allowed call) 6. runs the tool; 7. stores the outcome (and publishes it).
 * An approved call is run by the executor (lib/approvals/executor.ts) through the same step 6–7.
 * `callTool` is both halves plus the bounded wait for a reviewer; the Claude Code hook uses
 * `decideCall` only (lib/hooks/claude-code.ts), since Claude Code carries the call out.
 */

/** Who is calling and through which door. */
export interface Caller {
  door: "http" | "mcp" | "cli" | "hook" | "dashboard";
  /** The authenticated agent; its `workspaceId`, when set, is the only workspace it may reach. */
  agent: { id: string; name: string; workspaceId?: string | null } | null;
  /**
   * A reviewer acting in the dashboard (e.g. restoring a backup): the call is theirs, and when
   * the policy asks, their own action is the approval (recorded as such), so it is not queued.
   */
  reviewer?: string;
  /** The agent's own session key (X-Agent-Session, MCP session id), or null. */
  sessionKey: string | null;
  /** What the agent says the call is for (the Claude Code hook's `description`), recorded with it. */
  description?: string;
  /** W3C trace context of the request (`traceparent`, validated), stored with the call. */
  traceparent?: string | null;
  /**
   * Why the command's real working directory is not known (a Claude Code hook call without a
   * `cwd`, or with one outside the workspace): the policy asks instead of judging relative paths.
   */
  cwdUnknown?: string;
}

export interface CallOptions {
  /**
   * How long to wait for a reviewer when the policy asks (ms). 0 answers `approval_pending` at
   * once. Bounded by AGENT_REACH_APPROVAL_WAIT_MAX_S.
   */
  waitMs: number;
  /** Aborts waiting (not a call that already runs to completion). */
  signal?: AbortSignal;
  /** Called once when the call is queued for approval (MCP progress notifications). */
  onPending?: (callId: string) => void;
}

/** How `decideCall` is asked to decide. */
export interface DecideOptions {
  /**
   * Who carries the call out once it is allowed: "gateway" (`runCall`, every door but the hook) or
   * "agent" (the agent's own tool: the Claude Code hook). For "agent", a failing preview becomes
   * a warning for the reviewer instead of an answer, a queued call expires after `expiresInMs`
   * (nobody will collect it later), and the queued record says so (approving it runs nothing here).
   */
  carriedOutBy: "gateway" | "agent";
  /** How long a queued call stays pending (ms); default AGENT_REACH_APPROVAL_EXPIRY. */
  expiresInMs?: number;
}

/** What `decideCall` decided. Every kind has its audit record; only "allowed" still needs running. */
export type Decision =
  /** Refused before the tool (bad arguments, outside the fence, unknown tool) or denied by policy: finished. */
  | { kind: "finished"; callId: string; envelope: Envelope }
  /** Allowed by policy; the record is still "received" and the tool has not run. */
  | { kind: "allowed"; callId: string; verdict: PolicyVerdict; run: AllowedCall }
  /** Queued for a reviewer (status "pending"). */
  | { kind: "queued"; callId: string; verdict: PolicyVerdict }
  /** A reviewer's own action, approved on the spot (status "approved"); the executor runs it. */
  | { kind: "approved"; callId: string; verdict: PolicyVerdict };

/** What `runCall` needs of an allowed call. */
export interface AllowedCall {
  callId: string;
  tool: ToolDefinition;
  args: unknown;
  workspace: Workspace;
  notes: AuditNotes;
  verdict: PolicyVerdict;
  /**
   * The call's received record, not yet written: the caller's next status change of this call
   * (`runCall`'s move to "running", the hook's finish) must go through `receipt.with`.
   */
  receipt: Receipt;
}

/**
 * Runs one tool call through the whole pipeline.
 * @param caller the authenticated agent and door.
 * @param toolName wire name, e.g. "read_file".
 * @param rawArgs the arguments as received (any JSON value; validated here).
 * @returns the envelope; `approval_pending` (601) when a reviewer has not decided within `waitMs`.
 *   Never throws for anything an agent can send.
 */
export async function callTool(caller: Caller, toolName: string, rawArgs: unknown, options: CallOptions): Promise<Envelope> {
  try {
    const config = getConfig();
    const decision = await decideCall(caller, toolName, rawArgs, { carriedOutBy: "gateway" });
    switch (decision.kind) {
      case "finished":
        return decision.envelope;
      case "allowed":
        return await runCall(decision.run);
      case "approved":
        startExecutor();
        // The agent waits for the command to run: a held change set answers with the held result.
        return (await waitForAnswer(decision.callId, config.approvalWaitMaxMs)) ?? pendingEnvelope(decision.callId, decision.verdict);
      case "queued": {
        options.onPending?.(decision.callId);
        void notifyPending(decision.callId);
        const waitMs = Math.max(0, Math.min(options.waitMs, config.approvalWaitMaxMs));
        return (await waitForAnswer(decision.callId, waitMs, options.signal)) ?? pendingEnvelope(decision.callId, decision.verdict);
      }
    }
  } catch (err) {
    // The database failed under the call (locked past its wait bound, unreachable): answer
    // `unavailable` (503, retryable) rather than a bare 500 or the driver's message. A call whose
    // outcome could not be stored stays "running" and is marked interrupted at the next start.
    const body = toErrorBody(err);
    if (body.name !== "unavailable") throw err;
    return failure(null, body);
  }
}

/**
 * The first half of the pipeline, up to the approval step: record the call (durable before the
 * tool runs; for tools that do more than read, before anything else), parse its arguments, fence
 * its paths, ask the policy, and queue it for a reviewer when the policy asks. Runs no tool.
 * @returns the decision (see `Decision`). @throws only for database failures.
 */
export async function decideCall(caller: Caller, toolName: string, rawArgs: unknown, options: DecideOptions): Promise<Decision> {
  const config = getConfig();
  const workspace = await currentWorkspace();
  const sessionId = await resolveSession({
    workspaceId: workspace.id,
    agentId: caller.agent?.id ?? null,
    door: caller.door,
    sessionKey: caller.sessionKey,
  });
  const callId = newId("call");
  const actor = caller.reviewer ? `reviewer:${caller.reviewer}` : caller.agent ? `agent:${caller.agent.id}` : "agent:anonymous";
  // Arguments nested deeper than any tool needs are refused before anything walks them
  // recursively (redaction, zod): a 5,000-level array must not overflow the stack.
  const tooDeep = nestsDeeperThan(rawArgs);
  // The received record is durable before the tool runs. For a reading tool it is written with
  // the call's next status change (rejected, denied, queued or running), in the same transaction
  // (see `Receipt`): one commit fewer on the busiest path, whose decision step (fence, rules) is
  // short. For every other tool it is written now, before the decision step (a command's parse
  // included), so even a call that never gets past that step leaves its record.
  const receipt = deferReceived({
    id: callId,
    sessionId,
    workspaceId: workspace.id,
    agentId: caller.agent?.id ?? null,
    door: caller.door,
    tool: toolName,
    args: tooDeep ? { _refused: `arguments nested deeper than ${MAX_JSON_DEPTH} levels` } : rawArgs,
    hostId: config.hostId,
    actor,
    ...(caller.description !== undefined && { description: caller.description }),
    traceparent: caller.traceparent ?? null,
  });
  const tool = getTool(toolName);
  if (tooDeep || tool?.risk !== "read") await receipt.send();
  try {
    return await decideRecorded(caller, toolName, rawArgs, options, { callId, sessionId, workspace, actor, tooDeep, receipt, tool });
  } catch (err) {
    // Whatever failed (most likely the database), the call keeps its received record.
    await receipt.send();
    throw err;
  }
}

/** `decideCall` once the received record is built (written with the first status change). */
async function decideRecorded(
  caller: Caller,
  toolName: string,
  rawArgs: unknown,
  options: DecideOptions,
  call: { callId: string; sessionId: string; workspace: Workspace; actor: string; tooDeep: boolean; receipt: Receipt; tool: ToolDefinition | undefined },
): Promise<Decision> {
  const config = getConfig();
  const { callId, sessionId, workspace, actor, tooDeep, receipt, tool } = call;
  const reject = async (error: ErrorBody, notes: AuditNotes = {}, status: "rejected" | "denied" = "rejected", extra = {}): Promise<Decision> => {
    const envelope = failure(callId, error);
    await receipt.with(() => finishCall(callId, ["received"], status, envelope, { actor: "system", notes, extra }));
    return { kind: "finished", callId, envelope };
  };

  if (tooDeep) {
    return reject(errorBody("invalid_arguments", `Arguments are nested deeper than ${MAX_JSON_DEPTH} levels.`, { reason: "too_deep", max_depth: MAX_JSON_DEPTH }));
  }
  if (caller.agent?.workspaceId && caller.agent.workspaceId !== workspace.id) {
    return reject(errorBody("forbidden", "This agent token is scoped to another workspace.", { workspace_id: workspace.id }));
  }
  if (!tool) return reject(errorBody("unknown_tool", `No tool named "${toolName}". GET /api/tools lists the tools.`, { tool: toolName }));

  const parsed = tool.input.safeParse(rawArgs);
  if (!parsed.success) return reject(invalidArguments(parsed.error));
  const args = parsed.data;

  const readOnly = readOnlyContext(callId, workspace);
  let subject: ToolSubject;
  try {
    subject = await tool.subject(args, readOnly);
  } catch (err) {
    return reject(toErrorBody(err));
  }
  const fenced = await fenceSubject(workspace, subject.paths ?? [], subject.command?.cwd);
  if ("error" in fenced) return reject(fenced.error, fenced.notes);

  const notes: AuditNotes = {
    ...(subject.paths?.[0] !== undefined && { pathRaw: subject.paths[0], pathResolved: fenced.paths[0].absolute }),
    target: subject.command?.command ?? subject.url ?? fenced.paths[0]?.relative,
  };
  // At the hook door the agent carries the call out itself, without the gateway's backup, change
  // capture or sandbox: what the relaxed presets rely on is missing, so it is judged as strict.
  const preset = caller.door === "hook" ? "strict" : (await effectivePreset(workspace.id, caller.agent?.id ?? null)).preset;
  // A large deletion or rewrite asks under some presets: the planned change is measured by the
  // tool's own preview (kept for the reviewer when the call asks).
  let earlyPreview: ToolPreview | null = null;
  let change: FileChangeFacts | undefined;
  // A file the agent may not read unasked: nothing about its content may show before a reviewer
  // decides (an edit that does not match, a wrong expected_sha256, a large change would each
  // answer differently, one guess at a time).
  const contentPrivate = tool.changes === "file" && (await contentIsPrivate(workspace, fenced.paths));
  if (tool.preview && PRESETS[preset].checks.largeChange && tool.changes === "file" && fenced.paths.length === 1 && !contentPrivate) {
    earlyPreview = await tool.preview(args, readOnly).catch(() => null);
    if (earlyPreview) change = await changeFacts(fenced.paths[0], earlyPreview);
  }
  const verdict = await askPolicy(
    tool,
    workspace,
    {
      ...(await policyPaths(workspace, fenced.paths, tool.changes === "file")),
      ...(subject.command && { command: { command: subject.command.command, cwd: fenced.cwd?.absolute, grants: subject.command.grants } }),
      ...(subject.url !== undefined && { url: subject.url }),
      ...(change && { change }),
    },
    { door: caller.door, sessionId, ...(caller.cwdUnknown && { cwdUnknown: caller.cwdUnknown }), preset },
  );
  // The verdict carries the parsed command's words: stored masked like the arguments.
  const decisionColumns = () => ({ decision: verdict.decision, decisionJson: decisionColumn.encode(redactValue(verdict)) });

  if (verdict.decision === "deny") {
    return reject(
      errorBody("policy_denied", `Policy denied this call: ${verdict.reasons.join("; ") || "a deny rule matched"}.`, {
        reasons: verdict.reasons,
        rule: verdict.rule,
        parts: verdict.parts,
      }),
      notes,
      "denied",
      decisionColumns(),
    );
  }

  if (verdict.decision === "ask") {
    let preview: ToolPreview = earlyPreview ?? {};
    // A file the agent may not read unasked gets no preview before the decision: its lines would
    // sit in the pending record and on the card before anyone decided to show them.
    if (tool.preview && contentPrivate) preview = { warnings: ["no preview before the decision: this file may not be read unasked (the call's arguments show the change as given)"] };
    else if (tool.preview && !earlyPreview) {
      try {
        preview = await tool.preview(args, readOnly);
      } catch (err) {
        // The call itself would fail the same way: answer now, nothing to approve. A call the
        // agent carries out is not ours to fail, and a file the agent may not read unasked is not
        // judged by its content before a reviewer decides: the reviewer sees why no diff could be made.
        if (options.carriedOutBy === "gateway" && !contentPrivate) return reject(toErrorBody(err), notes);
        preview = { warnings: [`no preview: ${toErrorBody(err).message}`] };
      }
    }
    const queueColumns = {
      ...decisionColumns(),
      pathRaw: notes.pathRaw === undefined ? undefined : logText(notes.pathRaw),
      pathResolved: notes.pathResolved,
      target: notes.target === undefined ? undefined : logText(notes.target).slice(0, 2000),
      pendingJson: pendingColumn.encode(redactServerSecretsValue({ preview, verdict, ...(options.carriedOutBy === "agent" && { external: true }) })),
      execArgsJson: argsColumn.encode(args as Record<string, unknown>),
    };
    if (caller.reviewer) {
      // A reviewer's own action: approved by them on the spot, run once by the executor like any approval.
      startExecutor();
      const approved = await receipt.with(() =>
        transition(callId, ["received"], "approved", {
        actor,
        eventData: { tool: tool.name, reasons: verdict.reasons, by_caller: true },
        ...queueColumns,
        reviewer: caller.reviewer,
        decidedAt: new Date(),
        }),
      );
      if (!approved) throw new Error(`call ${callId} left "received" unexpectedly`);
      return { kind: "approved", callId, verdict };
    }
    const queued = await receipt.with(() =>
      transition(callId, ["received"], "pending", {
        actor: "system",
        eventData: { tool: tool.name, reasons: verdict.reasons },
        ...queueColumns,
        expiresAt: new Date(Date.now() + (options.expiresInMs ?? config.approvalExpiryMs)),
      }),
    );
    if (!queued) throw new Error(`call ${callId} left "received" unexpectedly`);
    return { kind: "queued", callId, verdict };
  }

  return { kind: "allowed", callId, verdict, run: { callId, tool, args, workspace, notes, verdict, receipt } };
}

/**
 * The second half of the pipeline for a call `decideCall` allowed: moves it to "running" (with
 * its target, so a call a crash interrupts still says what it touched), runs the tool and stores
 * the outcome. @returns the envelope the tool produced.
 */
export async function runCall(call: AllowedCall): Promise<Envelope> {
  const { callId, tool, args, workspace, notes, verdict, receipt } = call;
  const moved = await receipt.with(() =>
    transition(callId, ["received"], "running", {
      actor: "system",
      eventData: { host: getConfig().hostId },
      decision: verdict.decision,
      decisionJson: decisionColumn.encode(redactValue(verdict)), // as stored for every decision: the gateway's own secrets never in clear
      ...notesToColumns(notes),
      startedAt: new Date(),
    }),
  );
  if (!moved) throw new Error(`call ${callId} left "received" unexpectedly`);
  return executeCall({ callId, tool, args, workspace, notes, actor: "system", ruleOptions: verdict.options ?? null, ...(verdict.preset && { preset: verdict.preset }), allowedWithoutAsking: allowedAsReadOnly(verdict) });
}

/**
 * Whether the policy allowed a command only because the default rules know each of its simple
 * commands as read-only (`default:sh-*`): such a command is not expected to change files, so under
 * `strict` a change it makes is held. A command an operator rule or a reviewer's grant allows is
 * allowed with whatever it changes, as that rule says.
 */
function allowedAsReadOnly(verdict: PolicyVerdict): boolean {
  if (verdict.decision !== "allow") return false;
  const parts = verdict.parts ?? [];
  return parts.length > 0 && parts.every((p) => p.rule?.source === "default" && p.rule.id.startsWith("default:sh-"));
}

/**
 * The 601 envelope: the call waits for a reviewer; poll `status_url` or call get_call. Its detail
 * names the reasons, the supervision preset and the rule that asked.
 * @param held the call's command already ran and its file changes wait for a reviewer (the call
 *   is "pending" with held effects): the message says so and `detail.effects` is "held".
 */
export function pendingEnvelope(callId: string, verdict?: PolicyVerdict, held = false): Envelope {
  const config = getConfig();
  return failure(
    callId,
    errorBody(
      "approval_pending",
      held
        ? "This command ran; its file changes (effects held) wait for a reviewer's approval. Poll status_url (GET, ?wait=N seconds) or call get_call with this call_id to learn whether they were applied or discarded."
        : "This call waits for a reviewer's approval. Poll status_url (GET, ?wait=N seconds) or call get_call with this call_id.",
      {
        call_id: callId,
        status_url: `${config.publicUrl}/api/calls/${callId}`,
        reasons: verdict?.reasons ?? [],
        ...(verdict?.preset && { preset: verdict.preset }),
        ...(verdict?.rule && { rule: verdict.rule.id }),
        ...(held && { effects: "held" }),
      },
      1000,
    ),
  );
}

function invalidArguments(error: z.ZodError): ErrorBody {
  const issues = error.issues.slice(0, 20).map((i) => ({ path: i.path.join("."), message: i.message, code: i.code }));
  const first = issues[0];
  return errorBody(
    "invalid_arguments",
    first ? `Invalid arguments: ${first.path ? `${first.path}: ` : ""}${first.message}` : "Invalid arguments.",
    { issues },
  );
}

/**
 * True when any of the files (by canonical path or as written) is one read_file would not read
 * without asking: a sensitive-path rule matches it, or it has other names (hard links). Such a
 * file's content must not decide what the agent hears before a reviewer does.
 */
async function contentIsPrivate(workspace: Workspace, paths: FencedPath[]): Promise<boolean> {
  if (paths.length === 0) return false;
  const rules = await loadRules();
  for (const name of lexicalPaths(workspace, paths)) if (sensitivePathRule(name, rules)) return true;
  for (const p of paths) {
    const st = await fs.lstat(/*turbopackIgnore: true*/ p.absolute).catch(() => null);
    if (st?.isFile() && st.nlink > 1) return true;
  }
  return false;
}

/**
 * The workspace-relative paths the policy judges for fenced paths: each canonical path, and also
 * the path as written when it differs (a symlink named `Makefile` or `.envrc` pointing at an
 * ordinary file is still what runs later, and still asks). For a tool that changes files
 * (`writes`), also every other name a workspace link gives the canonical paths (a write of
 * `build/Makefile.in` while `Makefile` → `build/Makefile.in`: lib/effects/link-check.ts).
 * @returns all of them, and those that are not canonical paths (`otherNames`: they can only make
 *   the verdict stricter, lib/policy/types.ts PolicyInput)
 */
async function policyPaths(workspace: Workspace, paths: FencedPath[], writes: boolean): Promise<{ paths: string[]; otherNames: string[] }> {
  const out = lexicalPaths(workspace, paths);
  if (writes) {
    for (const name of await linkNamesOf(workspace.root, paths.map((p) => p.relative).filter((p) => p !== ""))) if (!out.includes(name)) out.push(name);
  }
  const canonical = new Set(paths.map((p) => p.relative));
  return { paths: out, otherNames: out.filter((p) => !canonical.has(p)) };
}

/** Each fenced path's canonical workspace-relative path, and the path as written when it differs. */
function lexicalPaths(workspace: Workspace, paths: FencedPath[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    out.push(p.relative);
    for (const root of [workspace.root, workspace.configuredRoot]) {
      if (!root) continue;
      const lexical = path.relative(root, path.resolve(root, p.raw)).split(path.sep).join("/");
      if (lexical.startsWith("..") || path.isAbsolute(lexical)) continue;
      if (lexical !== p.relative && !out.includes(lexical)) out.push(lexical);
      break;
    }
  }
  return out;
}

/** The planned change to one file as a preset's large-change check needs it (see lib/policy/presets.ts). */
async function changeFacts(target: FencedPath, preview: ToolPreview): Promise<FileChangeFacts | undefined> {
  const st = await fs.stat(target.absolute).catch(() => null);
  if (!st?.isFile()) return { path: target.relative, before: { lines: 0, bytes: 0 }, deletions: 0, afterBytes: 0 };
  // Files beyond this are not read to count their lines: the check then judges by bytes alone.
  const bytes = st.size <= 64 * 1024 * 1024 ? await fs.readFile(target.absolute).catch(() => null) : null;
  let lines = 0;
  if (bytes) for (const b of bytes) if (b === 10) lines++;
  if (bytes && bytes.length > 0 && bytes[bytes.length - 1] !== 10) lines++;
  return { path: target.relative, before: { lines, bytes: st.size }, deletions: preview.deletions ?? 0, afterBytes: preview.afterBytes ?? st.size };
}
