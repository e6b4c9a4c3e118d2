import { z } from "zod";
import { db } from "@/lib/db";
import { errorBody, toErrorBody, type ErrorBody } from "@/lib/errors";
import { newId } from "@/lib/ids";
import type { Result } from "@/lib/result";
import { appendEvent } from "@/lib/audit/events";
import { askPolicy, readOnlyContext } from "@/lib/gateway/contexts";
import { fenceSubject } from "@/lib/workspace/fence-subject";
import { dueGrantRows, endGrantRow, findGrantRow, grantRowsFromCall, insertGrantRule, listGrantRows, loadRules, revokeGrantRow } from "@/lib/policy/rule-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import {
  commandGrantProblem,
  GRANT_MAX_S,
  GRANT_MIN_S,
  GRANT_PRIORITY,
  pathGrantProblem,
  patternMatchesPart,
  suggestCommandPattern,
  suggestPathGlobs,
} from "@/lib/policy/grants";
import { globMatches } from "@/lib/policy/rule-match";
import type { PolicyRuleData, PolicyVerdict } from "@/lib/policy/types";
import { getTool, grantToolNames } from "@/lib/tools/registry";

/**
 * Grants made while approving ("don't ask again"): checked against the call being approved before
 * anything is saved, stored as PolicyRule rows (source "grant", scoped, expiring), listed, revoked,
 * and ended when they expire, each step an audited event. The engine side is lib/policy/grants.ts;
 * the rows are kept by lib/policy/rule-store.ts, which owns the rule table.
 */

/** What a reviewer asks for when approving with a grant (the approve API's `grant` field). */
export const GrantRequest = z
  .object({
    scope: z.enum(["session", "workspace"]).describe("session: only this call's session; workspace: every session of this workspace."),
    expires_in_s: z.number().int().min(GRANT_MIN_S).max(GRANT_MAX_S).describe(`Seconds until the grant ends (${GRANT_MIN_S} to ${GRANT_MAX_S}).`),
    patterns: z.array(z.string().trim().min(1).max(500)).min(1).max(10).optional().describe("run_command: command patterns (command-pattern.ts), one per simple command to allow."),
    path_glob: z.string().trim().min(1).max(500).optional().describe("write_file, edit_file: the workspace-relative glob to allow."),
  })
  .strict();
export type GrantRequest = z.infer<typeof GrantRequest>;

/** A checked grant, ready to save with the approval. */
export interface GrantPlan {
  rules: Array<PolicyRuleData & { expiresAt: number; workspaceId: string; sessionId: string | null }>;
  callId: string;
  scope: "session" | "workspace";
}

type Row = { id: string; tool: string; status: string; sessionId: string; workspaceId: string; door: string; agentId: string | null };

function refused(message: string, detail: Record<string, unknown> = {}): { ok: false; error: ErrorBody } {
  return { ok: false, error: errorBody("invalid_arguments", `Grant refused: ${message}`, { reason: "grant_refused", ...detail }) };
}

/**
 * Checks a grant for the pending call `row` with the arguments it will run with: the tool must be
 * one a grant can name, the pattern must fit it, must cover the call itself, and deciding the call
 * again with the grant added must allow what the grant names. A grant that would reach a path or
 * command some rule asks or denies for, or a check the policy makes before any rule (the network,
 * leaving the sandbox, sensitive files), is refused with the reason.
 * @returns the plan, or `invalid_arguments` with `detail.reason` "grant_refused" and the message
 */
export async function planGrant(row: Row, args: unknown, request: GrantRequest, reviewer: string, now = Date.now()): Promise<{ ok: true; plan: GrantPlan } | { ok: false; error: ErrorBody }> {
  const kind = getTool(row.tool)?.grant;
  if (!kind) return refused(`a ${row.tool} call cannot be allowed by a grant (grants name writes, edits and commands: ${grantToolNames().join(", ")}).`);
  if (kind === "path" && (!request.path_glob || request.patterns)) return refused(`a ${row.tool} grant names a path_glob (and no patterns).`);
  if (kind === "command" && (!request.patterns || request.path_glob)) return refused("a run_command grant names patterns (and no path_glob).");
  const tool = getTool(row.tool)!;
  const workspace = await currentWorkspace();
  if (row.workspaceId !== workspace.id) return refused("the call belongs to another workspace than the one this server serves.");
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) return refused("the call's arguments cannot be read back.");
  const expiresAt = now + request.expires_in_s * 1000;
  const base = {
    priority: GRANT_PRIORITY,
    tool: row.tool,
    decision: "allow" as const,
    enabled: true,
    source: "grant",
    workspaceId: row.workspaceId,
    sessionId: request.scope === "session" ? row.sessionId : null,
    expiresAt,
    note: `${request.scope === "session" ? "this session" : "this workspace"}, granted by ${reviewer} approving ${row.id}`,
  };
  const rules =
    kind === "path"
      ? [{ ...base, id: newId("grant"), pathGlob: request.path_glob!, command: null }]
      : [...new Set(request.patterns!)].map((p) => ({ ...base, id: newId("grant"), pathGlob: null, command: p.replace(/\s+/g, " ") }));

  const stored = await loadRules();
  for (const rule of rules) {
    const problem = rule.command !== null ? commandGrantProblem(rule.command, stored) : pathGrantProblem(rule.pathGlob!, row.tool, stored);
    if (problem) return refused(problem, { pattern: rule.command ?? rule.pathGlob });
  }

  // Decide the call again, as the gateway would, with the grant added.
  let verdict: PolicyVerdict;
  let paths: string[];
  try {
    const subject = await tool.subject(parsed.data, readOnlyContext(row.id, workspace));
    const fenced = await fenceSubject(workspace, subject.paths ?? [], subject.command?.cwd);
    if ("error" in fenced) return refused(fenced.error.message);
    paths = fenced.paths.map((p) => p.relative);
    verdict = await askPolicy(
      tool,
      workspace,
      {
        paths,
        ...(subject.command && { command: { command: subject.command.command, cwd: fenced.cwd?.absolute, grants: subject.command.grants } }),
      },
      { door: row.door as "http", sessionId: row.sessionId, agentId: row.agentId, extraRules: rules },
    );
  } catch (err) {
    return refused(toErrorBody(err).message);
  }

  if (kind === "path") {
    const glob = rules[0].pathGlob!;
    const uncovered = paths.find((p) => !globMatches(glob, p));
    if (uncovered !== undefined) return refused(`the glob ${glob} does not cover this call's path ${uncovered}.`, { pattern: glob });
    if (verdict.decision !== "allow" || verdict.rule?.id !== rules[0].id) {
      return refused(`this call would still ${verdict.decision} with the grant: ${verdict.reasons.join("; ")}. A grant only allows what would otherwise ask for every write.`, { pattern: glob, reasons: verdict.reasons });
    }
  } else {
    const parts = verdict.parts ?? [];
    for (const rule of rules) {
      const matched = parts.filter((p) => patternMatchesPart(rule.command!, p));
      if (matched.length === 0) return refused(`the pattern ${rule.command} matches no command of this call (${parts.map((p) => p.text).join(" ; ")}).`, { pattern: rule.command });
      const stuck = matched.find((p) => p.decision !== "allow");
      if (stuck) return refused(`"${stuck.text}" would still ${stuck.decision} with the grant: ${stuck.reason}. A grant does not lift that check.`, { pattern: rule.command, reasons: [stuck.reason] });
    }
    if (verdict.decision !== "allow" && parts.every((p) => p.decision === "allow")) {
      return refused(`this command would still ${verdict.decision} with the grant: ${verdict.reasons.join("; ")}.`, { reasons: verdict.reasons });
    }
  }
  return { ok: true, plan: { rules, callId: row.id, scope: request.scope } };
}

/** The grant as its audit events record it. */
function grantFacts(rule: { id: string; tool: string; pathGlob: string | null; command: string | null; workspaceId: string | null; sessionId: string | null; expiresAt: number | Date | null }) {
  const expires = rule.expiresAt === null ? null : new Date(rule.expiresAt).toISOString();
  return { id: rule.id, tool: rule.tool, pattern: rule.command ?? rule.pathGlob, scope: rule.sessionId ? "session" : "workspace", workspace_id: rule.workspaceId, session_id: rule.sessionId, expires_at: expires };
}

/** The facts of a plan's rules, for the approval's event (which rules the approval creates). */
export function planFacts(plan: GrantPlan): Array<ReturnType<typeof grantFacts>> {
  return plan.rules.map(grantFacts);
}

/**
 * Saves a checked grant after its call was approved: one PolicyRule row per pattern and a
 * `policy.grant_created` event each (on the approved call), then drops the rule cache.
 */
export async function saveGrant(plan: GrantPlan, reviewer: string): Promise<string[]> {
  for (const r of plan.rules) {
    await insertGrantRule({
      id: r.id,
      priority: r.priority,
      tool: r.tool,
      pathGlob: r.pathGlob,
      command: r.command,
      decision: r.decision,
      note: r.note,
      workspaceId: r.workspaceId,
      sessionId: r.sessionId,
      expiresAt: r.expiresAt,
      createdFromCallId: plan.callId,
      createdBy: reviewer,
    });
    await appendEvent({ type: "policy.grant_created", actor: `reviewer:${reviewer}`, callId: plan.callId, data: grantFacts(r) });
  }
  return plan.rules.map((r) => r.id);
}

/** A grant as the policy page and the API list it. */
export interface GrantView {
  id: string;
  tool: string;
  /** The command pattern or path glob. */
  pattern: string;
  kind: "command" | "path";
  scope: "session" | "workspace";
  workspaceId: string | null;
  sessionId: string | null;
  sessionName: string | null;
  createdBy: string | null;
  createdAt: Date;
  createdFromCallId: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  revokedBy: string | null;
  /** "active", "expired" or "revoked". */
  state: "active" | "expired" | "revoked";
  /** Calls this grant decided (allowed) since it was made. */
  allowedCalls: number;
}

/**
 * Ends the grants whose expiry has passed and that are not marked ended yet: each is disabled and a
 * `policy.grant_expired` event (actor "system") is appended, and the rule cache is dropped. The
 * policy already ignores an expired grant at decision time; this makes the end visible and audited.
 * @returns how many ended
 */
export async function expireGrants(now = new Date()): Promise<number> {
  const due = await dueGrantRows(now);
  let count = 0;
  for (const g of due) {
    if (!(await endGrantRow(g.id))) continue;
    count++;
    await appendEvent({ type: "policy.grant_expired", actor: "system", callId: g.createdFromCallId, data: grantFacts(g) });
  }
  return count;
}

/**
 * Grants, newest first (active ones, then ended ones of the last 7 days), after ending the
 * expired ones. `allowedCalls` counts the calls whose stored decision names the grant as the
 * deciding rule (or the deciding rule of one of its parts).
 */
export async function listGrants(now = new Date()): Promise<GrantView[]> {
  await expireGrants(now);
  const since = new Date(now.getTime() - 7 * 86_400_000);
  const rows = await listGrantRows(since);
  const sessions = await db().session.findMany({ where: { id: { in: rows.map((r) => r.sessionId).filter((s): s is string => !!s) } }, select: { id: true, externalId: true } });
  const names = new Map(sessions.map((s) => [s.id, s.externalId]));
  return Promise.all(
    rows.map(async (r): Promise<GrantView> => ({
      id: r.id,
      tool: r.tool,
      pattern: r.command ?? r.pathGlob ?? "",
      kind: r.command ? "command" : "path",
      scope: r.sessionId ? "session" : "workspace",
      workspaceId: r.workspaceId,
      sessionId: r.sessionId,
      sessionName: r.sessionId ? (names.get(r.sessionId) ?? r.sessionId) : null,
      createdBy: r.createdBy,
      createdAt: r.createdAt,
      createdFromCallId: r.createdFromCallId,
      expiresAt: r.expiresAt,
      revokedAt: r.revokedAt,
      revokedBy: r.revokedBy,
      state: r.revokedAt ? "revoked" : !r.enabled || (r.expiresAt && r.expiresAt <= now) ? "expired" : "active",
      allowedCalls: await db().toolCall.count({ where: { decision: "allow", createdAt: { gte: r.createdAt }, decisionJson: { contains: `"id":"${r.id}"` } } }),
    })),
  );
}

/**
 * Revokes a grant as reviewer `login`: it stops applying at once (the rule cache is dropped) and a
 * `policy.grant_revoked` event is appended. Revoking an ended grant is refused.
 * @returns ok, or `not_found` / `conflict` (detail.reason "already_ended")
 */
export async function revokeGrant(id: string, login: string): Promise<Result> {
  const row = await findGrantRow(id);
  if (!row) return { ok: false, error: errorBody("not_found", `No grant ${id}.`, { grant_id: id }) };
  if (!(await revokeGrantRow(id, login))) return { ok: false, error: errorBody("conflict", `Grant ${id} has already ended (revoked or expired).`, { reason: "already_ended", grant_id: id }) };
  await appendEvent({ type: "policy.grant_revoked", actor: `reviewer:${login}`, callId: row.createdFromCallId, data: grantFacts(row) });
  return { ok: true };
}

/** The grants an approval created (PolicyRule rows made from call `callId`). */
export async function grantsFromCall(callId: string): Promise<Array<{ id: string; pattern: string; scope: "session" | "workspace"; expiresAt: Date | null; revokedAt: Date | null }>> {
  const rows = await grantRowsFromCall(callId);
  return rows.map((r) => ({ id: r.id, pattern: r.command ?? r.pathGlob ?? "", scope: r.sessionId ? "session" : "workspace", expiresAt: r.expiresAt, revokedAt: r.revokedAt }));
}

/**
 * What the approval card offers for a pending call: the kind of grant and suggested patterns
 * (one command pattern per simple command of the line, or path globs broadest first), or null
 * when no grant can be made for this tool.
 */
export function grantSuggestions(tool: string, verdict: PolicyVerdict | null, path: string | null): { kind: "command" | "path"; suggestions: string[] } | null {
  const kind = getTool(tool)?.grant;
  if (!kind) return null;
  if (kind === "path") return path ? { kind, suggestions: suggestPathGlobs(path) } : null;
  const patterns = (verdict?.parts ?? [])
    .filter((p) => p.decision === "ask")
    .map((p) => suggestCommandPattern(p.argv))
    .filter((p): p is string => p !== null && commandGrantProblem(p) === null);
  return { kind, suggestions: [...new Set(patterns)] };
}
