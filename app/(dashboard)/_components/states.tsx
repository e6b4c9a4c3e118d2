"use client";

/** Loading placeholder of a page: a title bar and a few grey rows. */
export function PageSkeleton({ rows = 6 }: { rows?: number }) {
  return (
    <div className="animate-pulse" aria-busy="true" aria-live="polite" data-testid="loading">
      <span className="sr-only">Loading…</span>
      <div className="mb-5 h-6 w-48 rounded bg-zinc-200 dark:bg-zinc-800" />
      <div className="space-y-3">
        {Array.from({ length: rows }, (_, i) => (
          <div key={i} className="h-10 rounded bg-zinc-200/70 dark:bg-zinc-800/70" />
        ))}
      </div>
    </div>
  );
}

/** Error state of a page, with the error's digest (to find it in the server log) and a retry. */
export function ErrorPanel({ error, retry }: { error: unknown; retry: () => void }) {
  const digest = error instanceof Error && "digest" in error ? String((error as Error & { digest?: string }).digest ?? "") : "";
  return (
    <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-5 text-sm dark:border-red-900 dark:bg-red-950">
      <p className="font-semibold text-red-800 dark:text-red-200">This page could not be loaded.</p>
      <p className="mt-1 text-red-700 dark:text-red-300">
        The server log has the details{digest ? ` (look for digest ${digest})` : ""}. Nothing was changed.
      </p>
      <button type="button" onClick={() => retry()} className="mt-3 rounded-md bg-red-700 px-3 py-1.5 text-white hover:bg-red-800">
        Try again
      </button>
    </div>
  );
}
