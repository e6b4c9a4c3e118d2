import type { Metadata } from "next";
import Link from "next/link";
import "diff2html/bundles/css/diff2html.min.css";
import "./dashboard.css";
import { currentReviewer } from "@/lib/dashboard/auth";
import { countPending } from "@/lib/dashboard/approvals";
import { unseenTotal } from "@/lib/dashboard/review";
import { latestEventSeq } from "@/lib/dashboard/live";
import { sandboxStatus } from "@/lib/exec/sandbox";
import { signOutAction } from "./actions";
import { LiveProvider, NotificationToggle } from "./_components/live";
import { Nav } from "./_components/nav";

export const metadata: Metadata = {
  title: { template: "%s · Agent Reach", default: "Agent Reach" },
};

/**
 * The dashboard shell: navigation, the live connection (pending count, notifications) and the
 * signed-in reviewer. Every page and server action checks the session itself
 * (lib/dashboard/auth.ts), so a page never renders for a visitor who is not signed in; this
 * layout only renders the shell when someone is. When commands do not run in the sandbox (turned
 * off by the operator, or unavailable on this machine) a standing banner says so on every page.
 */
export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const reviewer = await currentReviewer();
  if (!reviewer) return <>{children}</>;
  const [pending, since, unseen] = await Promise.all([countPending(), latestEventSeq(), unseenTotal()]);
  return (
    <LiveProvider initialPending={pending} since={since}>
      <a href="#main" className="ar-skip-link">
        Skip to content
      </a>
      <div className="mx-auto flex min-h-screen max-w-[100rem] flex-col md:flex-row">
        <aside className="z-10 md:sticky md:top-0 border-b border-zinc-200 bg-zinc-50/95 px-3 pt-3 backdrop-blur md:h-screen md:w-52 md:shrink-0 md:border-b-0 md:border-r md:px-3 md:py-5 dark:border-zinc-800 dark:bg-zinc-950/95">
          <div className="mb-2 flex items-center justify-between md:mb-5 md:block">
            <Link href="/" className="text-base font-semibold tracking-tight">
              Agent Reach
            </Link>
            <div className="flex flex-wrap items-center gap-3 text-xs text-zinc-700 md:mt-2 dark:text-zinc-300 md:flex-col md:items-start md:gap-1">
              <span>
                signed in as <strong className="text-zinc-700 dark:text-zinc-300">{reviewer.login}</strong>
              </span>
              <form action={signOutAction}>
                <button type="submit" className="ar-touch underline underline-offset-2">
                  Sign out
                </button>
              </form>
              <NotificationToggle />
            </div>
          </div>
          <Nav unseen={unseen} />
        </aside>
        <main id="main" tabIndex={-1} className="min-w-0 flex-1 px-3 py-4 focus:outline-none sm:px-6 sm:py-6">
          <SandboxBanner />
          {children}
        </main>
      </div>
    </LiveProvider>
  );
}

/** The standing warning shown while commands run without the sandbox (lib/exec/sandbox.ts). */
function SandboxBanner() {
  const status = sandboxStatus();
  if (status.available) return null;
  const off = status.mode === "off";
  return (
    <div role="alert" data-testid="sandbox-banner" className="mb-4 rounded border border-amber-400 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-600 dark:bg-amber-950 dark:text-amber-100">
      <strong>{off ? "Sandbox off:" : "Sandbox unavailable:"}</strong>{" "}
      {off
        ? "the operator turned the command sandbox off (AGENT_REACH_SANDBOX=off); approved commands run with the gateway's own rights."
        : `${status.problems.join("; ")}. Every command asks for approval and, once approved, runs unboxed with the gateway's own rights.`}{" "}
      <span className="text-amber-800 dark:text-amber-200">Fix: {status.fix}</span>
    </div>
  );
}
