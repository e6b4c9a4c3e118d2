import { z } from "zod";
import { getConfig } from "@/lib/config";
import { errorBody, toErrorBody, ToolError, type ErrorBody } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "@/lib/json-depth";
import { failure, success, type Envelope } from "@/lib/result";
import { finishCall, notesToColumns, recordReceived, transition } from "@/lib/audit/calls";
import type { PolicyVerdict } from "@/lib/policy/types";
import { getTool } from "@/lib/tools/registry";
import type { AuditNotes, ToolPreview, ToolSubject, Workspace } from "@/lib/tools/define-tool";
import { askPolicy, readOnlyContext } from "@/lib/gateway/contexts";
import { resolveInWorkspace, type FencedPath } from "@/lib/workspace/fence";
import { executeCall } from "@/lib/gateway/execute";
import { resolveSession } from "@/lib/gateway/sessions";
import { currentWorkspace } from "@/lib/gateway/workspace";
import { notifyPending, runApproved, waitForOutcome } from "@/lib/approvals/queue";

/**
 * The one pipeline every door calls (DESIGN.md "One core, three doors"):
 * 1. record the call (before anything else: every call has an audit row, even a bad one);
 * 2. parse the arguments with the tool's zod schema;
 * 3. fence every path argument (and a command's cwd) to the workspace root;
 * 4. ask the policy: allow | ask | deny;
 * 5. ask → queue for a reviewer and wait (bounded) for the outcome;
 * 6. run the tool; 7. store the outcome (and publish it).
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
  /**
   * Decide only (the Claude Code hook, door "hook"): the agent's own tool carries the call out,
   * so the pipeline records, parses, fences, decides and queues as usual but never runs the tool.
   * An allowed or approved call finishes "succeeded" with data `{executed: false, decision, …}`;
   * a failing preview becomes a warning for the reviewer instead of an answer; and a call still
   * undecided when `waitMs` ends expires at once (603), since nobody will collect it later.
   */
  external?: boolean;
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
  await recordReceived({
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
  });
  const reject = async (error: ErrorBody, notes: AuditNotes = {}, status: "rejected" | "denied" = "rejected", extra = {}) => {
    const envelope = failure(callId, error);
    await finishCall(callId, ["received"], status, envelope, { actor: "system", notes, extra });
    return envelope;
  };

  if (tooDeep) {
    return reject(errorBody("invalid_arguments", `Arguments are nested deeper than ${MAX_JSON_DEPTH} levels.`, { reason: "too_deep", max_depth: MAX_JSON_DEPTH }));
  }
  if (caller.agent?.workspaceId && caller.agent.workspaceId !== workspace.id) {
    return reject(errorBody("forbidden", "This agent token is scoped to another workspace.", { workspace_id: workspace.id }));
  }
  const tool = getTool(toolName);
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
  const verdict = await askPolicy(tool, workspace, {
    paths: fenced.paths.map((p) => p.relative),
    // The hook door only decides: the agent's own tool runs the command, outside any box of ours.
    ...(options.external && { boxed: false, externalRunner: true }),
    ...(subject.command && { command: { command: subject.command.command, cwd: fenced.cwd?.absolute } }),
    ...(subject.url !== undefined && { url: subject.url }),
  });
  const decisionColumns = { decision: verdict.decision, decisionJson: JSON.stringify(verdict) };

  if (verdict.decision === "deny") {
    return reject(
      errorBody("policy_denied", `Policy denied this call: ${verdict.reasons.join("; ") || "a deny rule matched"}.`, {
        reasons: verdict.reasons,
        rule: verdict.rule,
        parts: verdict.parts,
      }),
      notes,
      "denied",
      decisionColumns,
    );
  }

  if (verdict.decision === "ask") {
    let preview: ToolPreview = {};
    if (tool.preview) {
      try {
        preview = await tool.preview(args, readOnly);
      } catch (err) {
        // The call itself would fail the same way: answer now, nothing to approve. An external
        // call is not ours to fail: the reviewer sees why no diff could be made.
        if (!options.external) return reject(toErrorBody(err), notes);
        preview = { warnings: [`no preview: ${toErrorBody(err).message}`] };
      }
    }
    const waitMs = Math.max(0, Math.min(options.waitMs, config.approvalWaitMaxMs));
    const queueColumns = {
      ...decisionColumns,
      pathRaw: notes.pathRaw,
      pathResolved: notes.pathResolved,
      target: notes.target?.slice(0, 2000),
      pendingJson: JSON.stringify({ preview, verdict, ...(options.external && { external: true }) }),
      execArgsJson: JSON.stringify(args),
    };
    if (caller.reviewer) {
      // A reviewer's own action: approved by them on the spot, run once like any approval.
      const approved = await transition(callId, ["received"], "approved", {
        actor,
        eventData: { tool: tool.name, reasons: verdict.reasons, by_caller: true },
        ...queueColumns,
        reviewer: caller.reviewer,
        decidedAt: new Date(),
      });
      if (!approved) throw new Error(`call ${callId} left "received" unexpectedly`);
      return (await runApproved(callId)) ?? (await waitForOutcome(callId, config.approvalWaitMaxMs)) ?? pendingEnvelope(callId, verdict);
    }
    const queued = await transition(callId, ["received"], "pending", {
      actor: "system",
      eventData: { tool: tool.name, reasons: verdict.reasons },
      ...queueColumns,
      expiresAt: new Date(Date.now() + (options.external ? waitMs : config.approvalExpiryMs)),
    });
    if (!queued) throw new Error(`call ${callId} left "received" unexpectedly`);
    options.onPending?.(callId);
    void notifyPending(callId);
    const outcome = await waitForOutcome(callId, waitMs, options.signal);
    if (outcome) return outcome;
    return options.external ? expireExternal(callId, waitMs) : pendingEnvelope(callId, verdict);
  }

  if (options.external) {
    const envelope = success(callId, { executed: false, decision: "allow", reasons: verdict.reasons, rule: verdict.rule });
    await finishCall(callId, ["received"], "succeeded", envelope, { actor: "system", notes, extra: decisionColumns });
    return envelope;
  }

  // The target is stored before the tool runs, so a call a crash interrupts still says what it touched.
  const moved = await transition(callId, ["received"], "running", {
    actor: "system",
    eventData: { host: config.hostId },
    ...decisionColumns,
    ...notesToColumns(notes),
    startedAt: new Date(),
  });
  if (!moved) throw new Error(`call ${callId} left "received" unexpectedly`);
  return executeCall({ callId, tool, args, workspace, notes, actor: "system" });
}

/**
 * Ends an external call nobody decided within `waitMs` as "expired" (603). When a reviewer decided
 * in the same instant (the conditional update lost), that decision's envelope is returned instead.
 */
async function expireExternal(callId: string, waitMs: number): Promise<Envelope> {
  const envelope = failure(
    callId,
    errorBody("approval_expired", `No reviewer decided within ${Math.round(waitMs / 1000)} s; the call was not approved.`, {
      call_id: callId,
      waited_ms: waitMs,
    }),
  );
  if (await finishCall(callId, ["pending"], "expired", envelope, { actor: "system", extra: { decidedAt: new Date() } })) return envelope;
  return (await waitForOutcome(callId, 5000)) ?? envelope;
}

/** The 601 envelope: the call waits for a reviewer; poll `status_url` or call get_call. */
export function pendingEnvelope(callId: string, verdict?: PolicyVerdict): Envelope {
  const config = getConfig();
  return failure(
    callId,
    errorBody(
      "approval_pending",
      "This call waits for a reviewer's approval. Poll status_url (GET, ?wait=N seconds) or call get_call with this call_id.",
      {
        call_id: callId,
        status_url: `${config.publicUrl}/api/calls/${callId}`,
        reasons: verdict?.reasons ?? [],
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

type FenceResult = { paths: FencedPath[]; cwd: FencedPath | null } | { error: ErrorBody; notes: AuditNotes };

/** Fences every path argument and the cwd; the first refusal ends the call. */
async function fenceSubject(workspace: Workspace, paths: string[], cwd: string | undefined): Promise<FenceResult> {
  const out: FencedPath[] = [];
  for (const raw of [...paths, ...(cwd !== undefined ? [cwd] : [])]) {
    try {
      out.push(await resolveInWorkspace(workspace, raw));
    } catch (err) {
      const body = toErrorBody(err);
      if (!(err instanceof ToolError)) return { error: body, notes: { pathRaw: raw } };
      const resolved = typeof err.detail.path_resolved === "string" ? err.detail.path_resolved : undefined;
      return { error: body, notes: { pathRaw: raw, ...(resolved && { pathResolved: resolved }) } };
    }
  }
  if (cwd !== undefined) {
    const cwdPath = out.pop()!;
    if (cwdPath.kind !== "directory") {
      return {
        error: errorBody(cwdPath.exists ? "invalid_arguments" : "not_found", `cwd is not a directory: ${cwd}`, { cwd }),
        notes: { pathRaw: cwd, pathResolved: cwdPath.absolute },
      };
    }
    return { paths: out, cwd: cwdPath };
  }
  return { paths: out, cwd: null };
}
