import { requireReviewerSession } from "@/lib/auth/session";
import { listRecentCalls } from "@/lib/audit/queries";

export const dynamic = "force-dynamic";

const STATUS_COLOURS: Record<string, string> = {
  succeeded: "bg-emerald-100 text-emerald-800 dark:bg-emerald-900 dark:text-emerald-100",
  failed: "bg-red-100 text-red-800 dark:bg-red-900 dark:text-red-100",
  conflict: "bg-orange-100 text-orange-800 dark:bg-orange-900 dark:text-orange-100",
  rejected: "bg-red-100 text-red-800 dark:bg-red-900 dark:text-red-100",
  denied: "bg-red-100 text-red-800 dark:bg-red-900 dark:text-red-100",
  pending: "bg-amber-100 text-amber-800 dark:bg-amber-900 dark:text-amber-100",
  expired: "bg-zinc-200 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-200",
  interrupted: "bg-zinc-200 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-200",
};

/** Overview: the most recent tool calls from the audit log. */
export default async function RecentCallsPage() {
  await requireReviewerSession();
  const calls = await listRecentCalls(100);
  return (
    <main className="mx-auto max-w-6xl px-4 py-6">
      <h1 className="mb-4 text-xl font-semibold">Recent calls</h1>
      {calls.length === 0 ? (
        <p className="rounded border border-dashed border-zinc-300 p-6 text-center text-sm text-zinc-500 dark:border-zinc-700">
          No calls yet. Point an agent at <code>/api/tools</code> (see README) and its calls appear here.
        </p>
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm" data-testid="recent-calls">
            <thead className="text-xs uppercase text-zinc-500">
              <tr>
                <th className="py-2 pr-3">Time</th>
                <th className="py-2 pr-3">Tool</th>
                <th className="py-2 pr-3">Target</th>
                <th className="py-2 pr-3">Decision</th>
                <th className="py-2 pr-3">Status</th>
                <th className="py-2 pr-3 text-right">ms</th>
              </tr>
            </thead>
            <tbody>
              {calls.map((c) => (
                <tr key={c.id} className="border-t border-zinc-200 dark:border-zinc-800">
                  <td className="whitespace-nowrap py-2 pr-3 font-mono text-xs">{c.createdAt.toISOString().replace("T", " ").slice(0, 19)}</td>
                  <td className="py-2 pr-3 font-mono">{c.tool}</td>
                  <td className="max-w-md truncate py-2 pr-3 font-mono text-xs" title={c.target ?? ""}>{c.summary ?? c.target ?? ""}</td>
                  <td className="py-2 pr-3">{c.decision ?? "—"}</td>
                  <td className="py-2 pr-3">
                    <span className={`rounded px-2 py-0.5 text-xs ${STATUS_COLOURS[c.status] ?? "bg-zinc-100 dark:bg-zinc-800"}`}>
                      {c.status}
                      {c.errorName ? ` · ${c.errorName}` : ""}
                    </span>
                  </td>
                  <td className="py-2 pr-3 text-right tabular-nums">{c.durationMs ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </main>
  );
}
