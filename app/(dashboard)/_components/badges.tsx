import { DECISION_BADGE } from "@/lib/dashboard/format";
import { callOutcome, OUTCOME_BADGE, type OutcomeInput } from "@/lib/dashboard/outcome";

/**
 * A call's outcome as a coloured badge: "succeeded" (green) only when the call and, for a
 * command, the command itself succeeded; a command that exited non-zero, timed out or hit a
 * limit reads "exit 4", "timed out", "limit memory" in red; otherwise the status with its error.
 */
export function StatusBadge({ status, error, tool = "", summary }: { status: string; error?: string | null; tool?: string; summary?: string | null }) {
  const outcome = callOutcome({ tool, status, errorName: error, summary });
  return (
    <span data-testid="status-badge" data-tone={outcome.tone} className={`inline-block whitespace-nowrap rounded px-1.5 py-0.5 text-xs font-medium ${OUTCOME_BADGE[outcome.tone]}`}>
      {outcome.label}
    </span>
  );
}

/** The outcome of a call given as its row fields. */
export function OutcomeBadge({ call }: { call: OutcomeInput }) {
  return <StatusBadge status={call.status} error={call.errorName} tool={call.tool} summary={call.summary} />;
}

/** A policy decision (allow / ask / deny) as a badge; "—" when there is none. */
export function DecisionBadge({ decision }: { decision: string | null | undefined }) {
  if (!decision) return <span className="text-zinc-600 dark:text-zinc-400">—</span>;
  return <span className={`inline-block rounded px-1.5 py-0.5 text-xs font-medium ${DECISION_BADGE[decision] ?? ""}`}>{decision}</span>;
}

/** The final decision on a call (auto-allowed, approved, rejected, expired, denied, pending). */
export function FinalDecision({ value }: { value: string }) {
  const tone =
    value === "approved" || value === "auto-allowed"
      ? "text-emerald-800 dark:text-emerald-300"
      : value === "rejected" || value === "denied"
        ? "text-rose-800 dark:text-rose-300"
        : value === "pending"
          ? "text-amber-900 dark:text-amber-200"
          : "text-zinc-700 dark:text-zinc-300";
  return (
    <span data-testid="final-decision" className={`text-xs font-medium ${tone}`}>
      {value}
    </span>
  );
}
