import { db } from "@/lib/db";
import { errorBody, toErrorBody } from "@/lib/errors";
import { appendEvent } from "@/lib/audit/events";
import { askPolicy, readOnlyContext } from "@/lib/gateway/contexts";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { markerKinds, redactServerSecretsValue, redactValue } from "@/lib/redact";
import { getTool } from "@/lib/tools/registry";
import { resolveInWorkspace } from "@/lib/workspace/fence";
import type { Result } from "@/lib/result";

/**
 * Revealing a masked value to a reviewer: only after an explicit click, and the reveal is
 * logged. The dashboard shows a call's stored output, where secrets are
 * masked (`[REDACTED:<kind>:<length>]`); the audit log never holds the raw values. When a reviewer
 * clicks "reveal", the dashboard calls `revealCallOutput`, which:
 *
 * 1. refuses unless the policy relaxes masking for the call's paths today (a rule with options
 *    `{"redact": false}` matching the tool and path; lib/policy/types.ts RuleOptions);
 * 2. runs the call again with its stored arguments, read-only: only tools whose run has no
 *    effect and depends only on workspace files can (the tool definition says so: `reproducible`,
 *    e.g. read_file, search_files); run_command or fetch_url output cannot be shown again;
 * 3. checks that the new output, masked, is exactly the stored output, so the values shown are
 *    the ones behind the markers the reviewer saw (else `conflict`: the files changed since);
 * 4. appends an audit event `secret.revealed` (actor `reviewer:<login>`, with the marker kinds
 *    and counts, never the values) before returning the unmasked output.
 *
 * Nothing unmasked is stored; the returned data is for the reviewer's screen only. The gateway's
 * own credentials (lib/redact.ts `redactServerSecrets`) are never revealed.
 */

/** The unmasked output, or why not. */
export type RevealResult = Result<{
  call_id: string;
  tool: string;
  /** The call's `data` without masking. */
  data: unknown;
  /** Marker kinds that were revealed, with counts (empty when nothing was masked). */
  revealed: Record<string, number>;
}>;

/**
 * Returns the unmasked output of a finished call to a reviewer, if policy allows, and logs it.
 * @param callId the ToolCall id
 * @param reviewer the reviewer's login (the event's actor is `reviewer:<login>`)
 * @returns `ok` with the unmasked `data`; or an error: `not_found` (no such call), `invalid_arguments`
 *   (the call did not succeed, or its stored output was cut), `forbidden` (`detail.reason`:
 *   "policy_keeps_masked", "not_reproducible", "arguments_masked", "other_workspace"),
 *   `conflict` (the files changed since the call), or the tool's own error when it fails now
 *   (e.g. `not_found` for a deleted file). Never throws for a call id a reviewer can send.
 */
export async function revealCallOutput(callId: string, reviewer: string): Promise<RevealResult> {
  const row = await db().toolCall.findUnique({ where: { id: callId } });
  if (!row) return fail("not_found", `No call ${callId}.`, { call_id: callId });
  const stored = row.resultJson ? (JSON.parse(row.resultJson) as { ok?: boolean; data?: unknown; _truncated?: boolean }) : null;
  if (row.status !== "succeeded" || !stored?.ok) return fail("invalid_arguments", "Only the output of a call that succeeded can be revealed.", { call_id: callId, status: row.status });
  if (stored._truncated) return fail("invalid_arguments", "The stored output was cut (over 1,000,000 characters); it cannot be matched.", { call_id: callId });
  const revealed = markerKinds(JSON.stringify(stored.data));
  if (Object.keys(revealed).length === 0) return { ok: true, call_id: callId, tool: row.tool, data: stored.data, revealed };

  const tool = getTool(row.tool);
  if (!tool?.reproducible) {
    return fail("forbidden", `The output of ${row.tool} is not kept unmasked and cannot be produced again without running it.`, { reason: "not_reproducible" });
  }
  if (row.argsJson.includes("[REDACTED:")) return fail("forbidden", "The call's arguments were masked, so it cannot be run again.", { reason: "arguments_masked" });
  const workspace = await currentWorkspace();
  if (row.workspaceId !== workspace.id) return fail("forbidden", "The call was made in a workspace this server does not serve.", { reason: "other_workspace" });
  const args = tool.input.safeParse(JSON.parse(row.argsJson));
  if (!args.success) return fail("invalid_arguments", "The stored arguments are not valid for this tool any more.", { call_id: callId });

  const ctx = readOnlyContext(callId, workspace);
  try {
    const subject = await tool.subject(args.data, ctx);
    const paths = await Promise.all((subject.paths ?? []).map(async (p) => (await resolveInWorkspace(workspace, p)).relative));
    const verdict = await askPolicy(tool, workspace, { paths });
    if (verdict.options?.redact !== false) {
      return fail("forbidden", `No policy rule relaxes masking for ${paths.join(", ") || "this call"}; a rule with {"redact": false} for the path allows revealing.`, { reason: "policy_keeps_masked", paths });
    }
    const data = await tool.run(args.data, ctx);
    if (JSON.stringify(redactValue(data)) !== JSON.stringify(stored.data)) {
      return fail("conflict", "The files changed since the call, so the values it returned then cannot be shown.", { call_id: callId });
    }
    await appendEvent({ type: "secret.revealed", callId, actor: `reviewer:${reviewer}`, data: { tool: tool.name, paths, kinds: revealed } });
    // The gateway's own credentials stay masked even here: revealing is for workspace secrets.
    return { ok: true, call_id: callId, tool: tool.name, data: redactServerSecretsValue(data), revealed };
  } catch (err) {
    return { ok: false, error: toErrorBody(err) };
  }
}

function fail(name: Parameters<typeof errorBody>[0], message: string, detail: Record<string, unknown>): RevealResult {
  return { ok: false, error: errorBody(name, message, detail) };
}
