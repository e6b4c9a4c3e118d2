/**
 * Display formatting shared by server and client components. Times are shown in UTC so the
 * server's and the browser's rendering agree (no hydration mismatch) whatever the time zones.
 */

/** "2026-05-01 12:34:56Z" for a date, an ISO string or epoch milliseconds; "—" for null. */
export function formatTime(value: Date | string | number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return "—";
  return `${date.toISOString().slice(0, 19).replace("T", " ")}Z`;
}

/** "12:34:56.789" (UTC) for a time axis or a dense table. */
export function formatClock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

/** Byte counts: "512 B", "1.5 KiB", "2.0 MiB"; "—" for null. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return "—";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Durations in milliseconds: "850 ms", "2.4 s", "3 min 5 s", "2 h 1 min"; "—" for null. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** How long ago `value` was, relative to `now` (ms): "just now", "5 min ago", "3 h ago", "2 d ago". */
export function formatAge(value: Date | string, now: number): string {
  const ms = now - new Date(value).getTime();
  if (ms < 45_000) return "just now";
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h ago`;
  return `${Math.round(ms / 86_400_000)} d ago`;
}

/** Status → Tailwind classes of its badge; the timeline uses `STATUS_HEX` for the same colours. */
export const STATUS_BADGE: Record<string, string> = {
  received: "bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-200",
  pending: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  approved: "bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100",
  running: "bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100",
  succeeded: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  failed: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
  conflict: "bg-orange-100 text-orange-900 dark:bg-orange-900 dark:text-orange-100",
  rejected: "bg-rose-100 text-rose-900 dark:bg-rose-900 dark:text-rose-100",
  denied: "bg-fuchsia-100 text-fuchsia-900 dark:bg-fuchsia-900 dark:text-fuchsia-100",
  expired: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-100",
  interrupted: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-100",
};

/** Status → bar colour of the timeline chart (same hues as `STATUS_BADGE`). */
export const STATUS_HEX: Record<string, string> = {
  received: "#a1a1aa",
  pending: "#f59e0b",
  approved: "#0ea5e9",
  running: "#0ea5e9",
  succeeded: "#10b981",
  failed: "#ef4444",
  conflict: "#f97316",
  rejected: "#e11d48",
  denied: "#c026d3",
  expired: "#71717a",
  interrupted: "#52525b",
};

/** Decision → Tailwind classes of its badge. */
export const DECISION_BADGE: Record<string, string> = {
  allow: "bg-emerald-50 text-emerald-800 ring-1 ring-emerald-200 dark:bg-emerald-950 dark:text-emerald-200 dark:ring-emerald-800",
  ask: "bg-amber-50 text-amber-900 ring-1 ring-amber-200 dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-800",
  deny: "bg-red-50 text-red-800 ring-1 ring-red-200 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
};
