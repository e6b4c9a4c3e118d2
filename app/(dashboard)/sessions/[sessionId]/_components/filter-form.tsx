import Form from "next/form";
import Link from "next/link";
import type { TimelineFilters } from "@/lib/dashboard/sessions";
import { BUTTON, INPUT } from "../../../_components/page-parts";

/**
 * The timeline's filters as a GET form (next/form: a client-side navigation, and a plain GET
 * without JavaScript; the URL can be shared): tool, status, decision, path prefix, text search and a UTC time range.
 */
export function TimelineFilterForm({ action, filters, tools, statuses }: { action: string; filters: TimelineFilters; tools: string[]; statuses: string[] }) {
  const label = "flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-600 dark:text-zinc-400";
  return (
    <Form action={action} className="mb-4 grid grid-cols-2 gap-2 rounded-lg border border-zinc-200 bg-white p-3 sm:grid-cols-4 lg:grid-cols-8 dark:border-zinc-800 dark:bg-zinc-900" data-testid="timeline-filters">
      <label className={`${label} col-span-2`}>
        Search paths and commands
        <input name="q" defaultValue={filters.q ?? ""} placeholder="e.g. package.json or git push" className={INPUT} />
      </label>
      <label className={label}>
        Tool
        <select name="tool" defaultValue={filters.tool ?? ""} className={INPUT}>
          <option value="">any</option>
          {tools.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label className={label}>
        Status
        <select name="status" defaultValue={filters.status ?? ""} className={INPUT}>
          <option value="">any</option>
          {statuses.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label className={label}>
        Decision
        <select name="decision" defaultValue={filters.decision ?? ""} className={INPUT}>
          <option value="">any</option>
          <option>allow</option>
          <option>ask</option>
          <option>deny</option>
          <option value="none">none (refused before the policy)</option>
        </select>
      </label>
      <label className={label}>
        Path starts with
        <input name="path" defaultValue={filters.path ?? ""} placeholder="src/" className={INPUT} />
      </label>
      <label className={label}>
        From (UTC)
        <input type="datetime-local" step="1" name="from" defaultValue={filters.from ?? ""} className={INPUT} />
      </label>
      <label className={label}>
        To (UTC)
        <input type="datetime-local" step="1" name="to" defaultValue={filters.to ?? ""} className={INPUT} />
      </label>
      <div className="col-span-2 flex items-end gap-2 sm:col-span-4 lg:col-span-8">
        <button type="submit" className={BUTTON.primary}>
          Apply filters
        </button>
        <Link href={action} className={BUTTON.secondary}>
          Clear
        </Link>
      </div>
    </Form>
  );
}
