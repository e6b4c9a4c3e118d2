import { groupReasons } from "@/lib/dashboard/reasons";
import type { PolicyVerdict } from "@/lib/policy/types";
import { DecisionBadge } from "./badges";
import { RevealedText } from "./revealed-text";

/** A danger the policy named for a call (the verdict's `risks`, computed by lib/policy). */
export interface RiskLabel {
  kind: string;
  text: string;
}

/** Short headings per risk kind; an unknown kind shows its own name. */
const RISK_TITLES: Record<string, string> = {
  network_egress: "Sends data over the network",
  reads_secret: "Reads a secret",
  writes_outside_workspace: "Writes outside the workspace",
  deletes: "Deletes files",
  runs_workspace_code: "Runs code from the workspace",
  leaves_sandbox: "Leaves the sandbox",
  irreversible: "Cannot be undone",
  large_change: "Large change",
};

/** The risk labels of a verdict (empty when the policy named none or predates them). */
export function verdictRisks(verdict: PolicyVerdict | null): RiskLabel[] {
  const risks = (verdict as (PolicyVerdict & { risks?: unknown }) | null)?.risks;
  if (!Array.isArray(risks)) return [];
  return (risks as unknown[]).filter((r): r is RiskLabel => typeof (r as RiskLabel)?.kind === "string" && typeof (r as RiskLabel)?.text === "string");
}

/**
 * The dangers of a call, named first and in words: one line per risk label with its heading and
 * the policy's sentence; then the reasons the policy gave, readable as a list (many per-path
 * reasons of one kind folded into one line: lib/dashboard/reasons.ts).
 */
export function RisksAndReasons({ verdict }: { verdict: PolicyVerdict | null }) {
  const risks = verdictRisks(verdict);
  const reasons = verdict?.reasons ?? [];
  return (
    <div className="space-y-2 text-sm" data-testid="risks-and-reasons">
      {risks.length > 0 && (
        <ul className="space-y-1.5" aria-label="Risks" data-testid="risk-labels">
          {risks.map((r, i) => (
            <li key={i} data-risk={r.kind} className="rounded-md border-l-4 border-red-700 bg-red-50 px-3 py-1.5 text-red-950 dark:border-red-400 dark:bg-red-950 dark:text-red-50">
              <strong className="font-semibold">{RISK_TITLES[r.kind] ?? r.kind.replace(/_/g, " ")}</strong>
              <span className="block">
                <RevealedText text={r.text} />
              </span>
            </li>
          ))}
        </ul>
      )}
      {reasons.length > 0 && (
        <div>
          <div className="text-xs font-semibold uppercase tracking-wide text-zinc-700 dark:text-zinc-300">{verdict?.decision === "ask" ? "Why it asks" : "Why"}</div>
          <ul className="list-disc space-y-0.5 pl-5" data-testid="verdict-reasons">
            {groupReasons(reasons).map((r, i) => (
              <li key={i} {...(r.count > 1 && { "data-count": r.count })}>
                <RevealedText text={r.text} />
              </li>
            ))}
          </ul>
        </div>
      )}
      {risks.length === 0 && reasons.length === 0 && <p className="text-zinc-700 dark:text-zinc-300">The policy gave no reason.</p>}
    </div>
  );
}

/**
 * The policy's answer for a call: the decision, the rule that decided, the risks and reasons and,
 * for a shell command, every simple command with its own decision and the rule that asked.
 * `detailsOnly` leaves out the risks and reasons (shown elsewhere on the page).
 */
export function VerdictView({ verdict, detailsOnly = false }: { verdict: PolicyVerdict | null; detailsOnly?: boolean }) {
  if (!verdict) return <p className="text-sm text-zinc-700 dark:text-zinc-300">No policy verdict was recorded for this call.</p>;
  return (
    <div className="space-y-3 text-sm" data-testid="verdict">
      <div className="flex flex-wrap items-center gap-2">
        <DecisionBadge decision={verdict.decision} />
        <span className="text-zinc-600 dark:text-zinc-400">decided by</span>
        <RuleName rule={verdict.rule} />
        {verdict.preset && (
          <span className="rounded bg-zinc-100 px-1.5 text-xs text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200" data-testid="verdict-preset" data-preset={verdict.preset}>
            preset {verdict.preset}
          </span>
        )}
      </div>
      {!detailsOnly && <RisksAndReasons verdict={verdict} />}
      {verdict.parts && verdict.parts.length > 0 && (
        <div className="overflow-x-auto">
          <table className="w-full min-w-[32rem] text-left text-xs" data-testid="command-parts">
            <thead className="text-zinc-600 dark:text-zinc-400">
              <tr>
                <th className="py-1 pr-2 font-medium">#</th>
                <th className="py-1 pr-2 font-medium">Simple command</th>
                <th className="py-1 pr-2 font-medium">Decision</th>
                <th className="py-1 pr-2 font-medium">Rule</th>
                <th className="py-1 font-medium">Why</th>
              </tr>
            </thead>
            <tbody>
              {verdict.parts.map((part, i) => (
                <tr key={i} className="border-t border-zinc-200 align-top dark:border-zinc-800">
                  <td className="py-1.5 pr-2 tabular-nums text-zinc-600 dark:text-zinc-400">{i + 1}</td>
                  <td className="py-1.5 pr-2 font-mono">
                    <RevealedText text={part.text} />
                    {part.argv && (
                      <div className="mt-0.5 text-[0.7rem] text-zinc-600 dark:text-zinc-400">
                        argv: {part.argv.map((a, j) => (
                          <span key={j} className="mr-1 rounded bg-zinc-100 px-1 dark:bg-zinc-800">
                            <RevealedText text={a} />
                          </span>
                        ))}
                      </div>
                    )}
                  </td>
                  <td className="py-1.5 pr-2">
                    <DecisionBadge decision={part.decision} />
                  </td>
                  <td className="py-1.5 pr-2">
                    <RuleName rule={part.rule} />
                  </td>
                  <td className="py-1.5">
                    <RevealedText text={part.reason} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function RuleName({ rule }: { rule: PolicyVerdict["rule"] }) {
  if (!rule) return <span className="text-zinc-600 dark:text-zinc-400">built-in fallback</span>;
  return (
    <span>
      <code className="font-mono text-xs">{rule.id}</code>
      {rule.source && <span className="text-xs text-zinc-600 dark:text-zinc-400"> ({rule.source === "preset" ? "preset rule" : rule.source === "default" ? "default rule" : rule.source === "grant" ? "granted on approval" : "operator rule"})</span>}
      {rule.note && <span className="text-zinc-600 dark:text-zinc-400"> — {rule.note}</span>}
    </span>
  );
}
