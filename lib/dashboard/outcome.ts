import type { Prisma } from "@/lib/generated/prisma/client";

/**
 * Honest outcomes for lists, badges and counts. A `run_command` call that ran to its end has
 * status "succeeded" (the call worked) even when the command itself failed; the command's own
 * outcome is in the call's one-line summary, written by the tool as "exit <code> after <n> ms",
 * "timed out after …", "stopped by limit <name> after …", "killed by <signal> after …" or
 * "aborted after …". Everything here reads that summary, so a command that exited 4 is shown and
 * counted as a failure while the call's status stays what the audit log says.
 */

/** How a call ended, as a reviewer reads it at a glance. */
export interface CallOutcome {
  /** Short label for a badge: "succeeded", "exit 4", "timed out", "limit memory", "failed · not_found". */
  label: string;
  /** Badge colour key into `OUTCOME_BADGE` / `OUTCOME_HEX`. */
  tone: OutcomeTone;
  /** True when the call or its command failed (counted under "with errors"). */
  failed: boolean;
}

export type OutcomeTone = "ok" | "failed" | "waiting" | "refused" | "neutral" | "running";

/** The command's own failure from a run_command summary, or null when it exited 0 (or is unknown). */
export function commandFailure(summary: string | null | undefined): string | null {
  if (!summary) return null;
  const exit = /^exit (-?\d+) after /.exec(summary);
  if (exit) return exit[1] === "0" ? null : `exit ${exit[1]}`;
  if (summary.startsWith("timed out after ")) return "timed out";
  const limit = /^stopped by limit (\S+) after /.exec(summary);
  if (limit) return `limit ${limit[1]}`;
  const killed = /^killed by (\S+) after /.exec(summary);
  if (killed) return `killed by ${killed[1]}`;
  if (summary.startsWith("aborted after ")) return "aborted";
  return null;
}

/** What a call's row says, enough to tell its outcome. */
export interface OutcomeInput {
  tool: string;
  status: string;
  errorName?: string | null;
  summary?: string | null;
}

/** The outcome of one call: the command's failure over the call's "succeeded", else the status. */
export function callOutcome(call: OutcomeInput): CallOutcome {
  if (call.status === "succeeded") {
    const failure = call.tool === "run_command" ? commandFailure(call.summary) : null;
    return failure ? { label: failure, tone: "failed", failed: true } : { label: "succeeded", tone: "ok", failed: false };
  }
  const label = call.errorName ? `${call.status} · ${call.errorName}` : call.status;
  switch (call.status) {
    case "pending":
      return { label, tone: "waiting", failed: false };
    case "received":
    case "approved":
    case "running":
      return { label, tone: "running", failed: false };
    case "rejected":
    case "denied":
      return { label, tone: "refused", failed: Boolean(call.errorName) };
    case "expired":
    case "interrupted":
      return { label, tone: "neutral", failed: Boolean(call.errorName) };
    default:
      return { label, tone: "failed", failed: Boolean(call.errorName) || call.status === "failed" || call.status === "conflict" };
  }
}

/**
 * Prisma filter of calls that failed in the sense of `callOutcome(...).failed`: an error name
 * (failures, rejections, denials, expiries) or a command that ran and did not exit 0.
 */
export const FAILED_CALL_WHERE: Prisma.ToolCallWhereInput = {
  OR: [
    { errorName: { not: null } },
    {
      tool: "run_command",
      status: "succeeded",
      OR: [
        { summary: { startsWith: "exit " }, NOT: { summary: { startsWith: "exit 0 " } } },
        { summary: { startsWith: "timed out after " } },
        { summary: { startsWith: "stopped by limit " } },
        { summary: { startsWith: "killed by " } },
        { summary: { startsWith: "aborted after " } },
      ],
    },
  ],
};

/** Badge classes per tone (text contrast ≥ 4.5:1 on its background in both schemes). */
export const OUTCOME_BADGE: Record<OutcomeTone, string> = {
  ok: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  failed: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
  waiting: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  refused: "bg-rose-100 text-rose-900 dark:bg-rose-900 dark:text-rose-100",
  neutral: "bg-zinc-200 text-zinc-800 dark:bg-zinc-700 dark:text-zinc-100",
  running: "bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100",
};

/** Bar colours of the timeline chart per tone (same hues as `OUTCOME_BADGE`). */
export const OUTCOME_HEX: Record<OutcomeTone, string> = {
  ok: "#10b981",
  failed: "#dc2626",
  waiting: "#f59e0b",
  refused: "#e11d48",
  neutral: "#71717a",
  running: "#0ea5e9",
};

/** What a row says about who decided a call, enough to name the final decision. */
export interface DecisionInput {
  decision: string | null;
  status: string;
  errorName?: string | null;
  reviewer?: string | null;
}

/**
 * The final decision on a call, as lists show it: "auto-allowed" (the policy allowed it),
 * "denied" (the policy denied it), and for a call that asked: "pending", "approved", "rejected"
 * or "expired". "—" when the policy never decided (bad arguments, a path outside the workspace).
 */
export function finalDecision(call: DecisionInput): string {
  if (call.decision === "allow") return "auto-allowed";
  if (call.decision === "deny") return "denied";
  if (call.decision !== "ask") return "—";
  if (call.status === "pending") return "pending";
  if (call.status === "expired" || call.errorName === "approval_expired") return "expired";
  if (call.errorName === "approval_rejected") return "rejected";
  if (call.reviewer || ["approved", "running", "succeeded", "failed", "conflict", "interrupted"].includes(call.status)) return "approved";
  return call.status === "rejected" ? "rejected" : "—";
}

/**
 * The name a session goes by: the agent's own session key (X-Agent-Session, the MCP session id,
 * the hook's session) without its `key:`/`mcp:`/`hook:` prefix, or "automatic session" for one
 * made per token per server start.
 */
export function sessionName(externalId: string): string {
  if (externalId.startsWith("auto:")) return "automatic session";
  const colon = externalId.indexOf(":");
  return colon > 0 && colon < 12 ? externalId.slice(colon + 1) : externalId;
}
