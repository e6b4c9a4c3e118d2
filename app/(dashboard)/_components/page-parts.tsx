import Link from "next/link";

/** Page title with an optional description and actions on the right (stacks at small widths). */
export function PageHeader({ title, description, children }: { title: React.ReactNode; description?: React.ReactNode; children?: React.ReactNode }) {
  return (
    <header className="mb-4 flex flex-col gap-2 sm:flex-row sm:items-end sm:justify-between">
      <div className="min-w-0">
        <h1 className="text-xl font-semibold tracking-tight">{title}</h1>
        {description && <div className="mt-1 text-sm text-zinc-700 dark:text-zinc-300">{description}</div>}
      </div>
      {children && <div className="flex flex-wrap items-center gap-2">{children}</div>}
    </header>
  );
}

/** A bordered panel. */
export function Card({ title, children, className = "", actions }: { title?: React.ReactNode; children: React.ReactNode; className?: string; actions?: React.ReactNode }) {
  return (
    <section className={`min-w-0 rounded-lg border border-zinc-200 bg-white p-4 shadow-sm dark:border-zinc-800 dark:bg-zinc-900 ${className}`}>
      {(title || actions) && (
        <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
          {title && <h2 className="text-sm font-semibold uppercase tracking-wide text-zinc-700 dark:text-zinc-300">{title}</h2>}
          {actions}
        </div>
      )}
      {children}
    </section>
  );
}

/** What a page shows when it has nothing to list. */
export function EmptyState({ title, children }: { title: string; children?: React.ReactNode }) {
  return (
    <div data-testid="empty-state" className="rounded-lg border border-dashed border-zinc-300 px-6 py-10 text-center dark:border-zinc-700">
      <p className="font-medium">{title}</p>
      {children && <div className="mt-2 text-sm text-zinc-500 dark:text-zinc-400">{children}</div>}
    </div>
  );
}

/** A label/value list that stacks at small widths. */
export function Facts({ items }: { items: [React.ReactNode, React.ReactNode][] }) {
  return (
    <dl className="grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]">
      {items.map(([label, value], i) => (
        <div key={i} className="contents">
          <dt className="text-zinc-700 dark:text-zinc-300">{label}</dt>
          <dd className="mb-1 min-w-0 break-words sm:mb-0">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Previous / next links for a paged list. */
export function Pager({ page, pageSize, total, href }: { page: number; pageSize: number; total: number; href: (page: number) => string }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  const link = "rounded border border-zinc-300 px-3 py-1 text-sm hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800";
  return (
    <nav className="mt-4 flex items-center gap-3 text-sm" aria-label="Pages">
      {page > 1 ? <Link className={link} href={href(page - 1)}>← Newer</Link> : null}
      <span className="text-zinc-500">
        page {page} of {pages} ({total})
      </span>
      {page < pages ? <Link className={link} href={href(page + 1)}>Older →</Link> : null}
    </nav>
  );
}

/** Monospace, wrapping block for short machine values (ids, hashes, paths). */
export function Mono({ children, className = "" }: { children: React.ReactNode; className?: string }) {
  return <code className={`break-all font-mono text-[0.8rem] ${className}`}>{children}</code>;
}

/** Shared button styles. */
export const BUTTON = {
  primary: "inline-flex items-center justify-center gap-1 rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-zinc-700 disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900 dark:hover:bg-zinc-300",
  approve: "inline-flex items-center justify-center gap-1 rounded-md bg-emerald-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-emerald-800 disabled:opacity-50",
  danger: "inline-flex items-center justify-center gap-1 rounded-md bg-red-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-red-800 disabled:opacity-50",
  secondary: "inline-flex items-center justify-center gap-1 rounded-md border border-zinc-400 bg-white px-3 py-1.5 text-sm font-medium hover:bg-zinc-50 disabled:opacity-50 dark:border-zinc-700 dark:bg-zinc-900 dark:hover:bg-zinc-800",
  small: "inline-flex items-center justify-center rounded border border-zinc-400 px-2 py-0.5 text-xs hover:bg-zinc-100 disabled:opacity-40 dark:border-zinc-700 dark:hover:bg-zinc-800",
};

/** Shared input styles. */
export const INPUT = "w-full min-w-0 rounded-md border border-zinc-400 bg-white px-2.5 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950";
