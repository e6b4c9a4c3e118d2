import type { PolicyVerdict } from "@/lib/policy/types";
import { DecisionBadge } from "./badges";
import { RevealedText } from "./revealed-text";

/**
 * The policy's answer for a call: the decision, the rule that decided, the reasons and, for a
 * shell command, every simple command with its own decision and the rule that asked.
 */
export function VerdictView({ verdict }: { verdict: PolicyVerdict | null }) {
  if (!verdict) return <p className="text-sm text-zinc-500">No policy verdict was recorded for this call.</p>;
  return (
    <div className="space-y-3 text-sm" data-testid="verdict">
      <div className="flex flex-wrap items-center gap-2">
        <DecisionBadge decision={verdict.decision} />
        <span className="text-zinc-500">decided by</span>
        <RuleName rule={verdict.rule} />
      </div>
      {verdict.reasons.length > 0 && (
        <ul className="list-disc space-y-0.5 pl-5">
          {verdict.reasons.map((r, i) => (
            <li key={i}>
              <RevealedText text={r} />
            </li>
          ))}
        </ul>
      )}
      {verdict.parts && verdict.parts.length > 0 && (
        <div className="overflow-x-auto">
          <table className="w-full min-w-[32rem] text-left text-xs" data-testid="command-parts">
            <thead className="text-zinc-500">
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
                  <td className="py-1.5 pr-2 tabular-nums text-zinc-500">{i + 1}</td>
                  <td className="py-1.5 pr-2 font-mono">
                    <RevealedText text={part.text} />
                    {part.argv && (
                      <div className="mt-0.5 text-[0.7rem] text-zinc-500">
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
  if (!rule) return <span className="text-zinc-500">built-in fallback</span>;
  return (
    <span>
      <code className="font-mono text-xs">{rule.id}</code>
      {rule.note && <span className="text-zinc-500"> — {rule.note}</span>}
    </span>
  );
}
