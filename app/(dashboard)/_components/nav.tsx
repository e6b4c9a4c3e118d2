"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useLive } from "./live";

const LINKS = [
  { href: "/", label: "Overview" },
  { href: "/approvals", label: "Approvals" },
  { href: "/sessions", label: "Sessions" },
  { href: "/review", label: "Review" },
  { href: "/backups", label: "Backups" },
  { href: "/policy", label: "Policy" },
  { href: "/tokens", label: "Tokens" },
  { href: "/audit", label: "Audit" },
  { href: "/settings", label: "Settings" },
];

function isActive(pathname: string, href: string): boolean {
  if (href === "/") return pathname === "/";
  if (href === "/review") return pathname === "/review" || /^\/sessions\/[^/]+\/review/.test(pathname);
  if (href === "/sessions") return (pathname.startsWith("/sessions") && !/^\/sessions\/[^/]+\/review/.test(pathname)) || pathname.startsWith("/calls");
  return pathname === href || pathname.startsWith(`${href}/`);
}

/**
 * The dashboard's navigation: a sidebar on wide screens; at phone width every link wraps into view.
 * `unseen`: changes that applied without asking and are not reviewed yet (shown beside "Review";
 * counted by the layout on each render).
 */
export function Nav({ unseen = 0 }: { unseen?: number }) {
  const pathname = usePathname();
  const { pending, connected } = useLive();
  return (
    <nav aria-label="Main" className="-mx-1 flex flex-wrap gap-1 pb-2 md:mx-0 md:flex-col md:flex-nowrap md:pb-0">
      {LINKS.map((link) => {
        const active = isActive(pathname, link.href);
        return (
          <Link
            key={link.href}
            href={link.href}
            aria-current={active ? "page" : undefined}
            className={`flex shrink-0 items-center justify-between gap-2 rounded-md px-3 py-1.5 text-sm ${
              active ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "text-zinc-800 hover:bg-zinc-200 dark:text-zinc-200 dark:hover:bg-zinc-800"
            }`}
          >
            {link.label}
            {link.href === "/review" && unseen > 0 && (
              <span data-testid="unseen-count-nav" aria-label={`${unseen} unseen changes`} className="rounded-full bg-sky-800 px-1.5 text-xs font-semibold text-white dark:bg-sky-300 dark:text-sky-950">
                {unseen}
              </span>
            )}
            {link.href === "/approvals" && pending > 0 && (
              <span data-testid="pending-count" aria-label={`${pending} waiting`} className="rounded-full bg-amber-800 px-1.5 text-xs font-semibold text-white dark:bg-amber-300 dark:text-amber-950">
                {pending}
              </span>
            )}
          </Link>
        );
      })}
      <span className="hidden px-3 pt-3 text-xs text-zinc-700 md:block dark:text-zinc-300" data-testid="live-status">
        <span className={`mr-1 inline-block h-2 w-2 rounded-full ${connected ? "bg-emerald-500" : "bg-zinc-400"}`} />
        {connected ? "live" : "connecting…"}
      </span>
    </nav>
  );
}
