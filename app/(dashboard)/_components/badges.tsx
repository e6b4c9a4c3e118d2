import { DECISION_BADGE, STATUS_BADGE } from "@/lib/dashboard/format";

/** A call's status as a coloured badge (with the error name, when given). */
export function StatusBadge({ status, error }: { status: string; error?: string | null }) {
  return (
    <span className={`inline-block whitespace-nowrap rounded px-1.5 py-0.5 text-xs font-medium ${STATUS_BADGE[status] ?? STATUS_BADGE.received}`}>
      {status}
      {error ? ` · ${error}` : ""}
    </span>
  );
}

/** A policy decision (allow / ask / deny) as a badge; "—" when there is none. */
export function DecisionBadge({ decision }: { decision: string | null | undefined }) {
  if (!decision) return <span className="text-zinc-400">—</span>;
  return <span className={`inline-block rounded px-1.5 py-0.5 text-xs font-medium ${DECISION_BADGE[decision] ?? ""}`}>{decision}</span>;
}
