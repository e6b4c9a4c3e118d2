import Link from "next/link";
import type { GrantView } from "@/lib/approvals/grants";
import { formatTime } from "@/lib/dashboard/format";
import { ActionForm } from "../../_components/action-form";
import { BUTTON, EmptyState, Mono } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { revokeGrantAction } from "../grant-actions";

/**
 * The grants made from approvals ("don't ask again"): what each allows (tool and pattern), its
 * scope, who made it from which call and when, when it expires, how many calls it has allowed
 * since, and a Revoke button while it is active. Ended grants of the last 7 days stay listed.
 */
export function GrantList({ grants }: { grants: GrantView[] }) {
  if (grants.length === 0) {
    return <EmptyState title="No grants">Approving a call with &ldquo;Don&apos;t ask again&rdquo; adds one here, scoped to its session or workspace, until it expires.</EmptyState>;
  }
  return (
    <div className="-mx-4 overflow-x-auto px-4">
      <table className="w-full min-w-[52rem] text-left text-sm" data-testid="grants">
        <thead className="text-xs text-zinc-500">
          <tr>
            <th className="py-2 pr-3 font-medium">Allows</th>
            <th className="py-2 pr-3 font-medium">Scope</th>
            <th className="py-2 pr-3 font-medium">Made by</th>
            <th className="py-2 pr-3 font-medium">Expires (UTC)</th>
            <th className="py-2 pr-3 text-right font-medium">Calls allowed</th>
            <th className="py-2 font-medium">State</th>
          </tr>
        </thead>
        <tbody>
          {grants.map((g) => (
            <tr key={g.id} className="border-t border-zinc-100 align-top dark:border-zinc-800" data-testid="grant" data-grant-id={g.id} data-state={g.state}>
              <td className="py-2 pr-3">
                <span className="font-mono text-xs">{g.tool}</span> <Mono>{g.pattern}</Mono>
                <div className="text-xs text-zinc-600 dark:text-zinc-400">{g.id}</div>
              </td>
              <td className="py-2 pr-3">
                {g.scope === "session" ? (
                  <>
                    session{" "}
                    <Link className="underline underline-offset-2" href={`/sessions/${g.sessionId}`}>
                      <RevealedText text={g.sessionName ?? g.sessionId ?? ""} />
                    </Link>
                  </>
                ) : (
                  "this workspace"
                )}
              </td>
              <td className="py-2 pr-3 text-xs">
                {g.createdBy ?? "—"} at {formatTime(g.createdAt)}
                {g.createdFromCallId && (
                  <>
                    {" "}
                    approving{" "}
                    <Link className="underline underline-offset-2" href={`/calls/${g.createdFromCallId}`}>
                      {g.createdFromCallId}
                    </Link>
                  </>
                )}
              </td>
              <td className="whitespace-nowrap py-2 pr-3 font-mono text-xs">{formatTime(g.expiresAt)}</td>
              <td className="py-2 pr-3 text-right tabular-nums" data-testid="grant-allowed">{g.allowedCalls}</td>
              <td className="py-2">
                {g.state === "active" ? (
                  <ActionForm action={revokeGrantAction} className="flex flex-wrap items-center gap-2" testId="revoke-grant" confirm={`Revoke ${g.pattern}? Calls it allowed will ask again.`}>
                    <input type="hidden" name="grantId" value={g.id} />
                    <span className="text-emerald-800 dark:text-emerald-300">active</span>
                    <button type="submit" className={BUTTON.small}>
                      Revoke
                    </button>
                  </ActionForm>
                ) : g.state === "revoked" ? (
                  <span className="text-xs">revoked by {g.revokedBy} at {formatTime(g.revokedAt)}</span>
                ) : (
                  <span className="text-xs">expired</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
