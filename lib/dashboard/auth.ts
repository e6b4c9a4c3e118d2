import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { authenticateReviewer, SESSION_COOKIE, type ReviewerIdentity } from "@/lib/auth/tokens";

/**
 * Sign-in guard of the dashboard's pages and server actions. Like `requireReviewerSession`
 * (lib/auth/session.ts), but the redirect to /login carries the page the reviewer asked for, so
 * a webhook link such as /approvals?call=… lands on that call after signing in.
 */

/**
 * The signed-in reviewer (browser session cookie), or a redirect to `/login?next=<returnTo>`.
 * @param returnTo the dashboard path (with query) to come back to; only same-site paths are kept.
 */
export async function requireReviewerPage(returnTo: string): Promise<ReviewerIdentity> {
  const store = await cookies();
  const reviewer = await authenticateReviewer(null, store.get(SESSION_COOKIE)?.value ?? null);
  if (!reviewer) redirect(`/login?next=${encodeURIComponent(safeReturnPath(returnTo))}`);
  return reviewer;
}

/**
 * `value` when it is a path on this site ("/…", not "//…" nor "/\…", no scheme), else "/".
 * Guards the post-login redirect against open redirects (CWE-601).
 */
export function safeReturnPath(value: string | null | undefined): string {
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  if (/[\u0000-\u001f\u007f]/.test(value)) return "/";
  return value;
}

/** Builds `path?query` from a page's search params, for `requireReviewerPage`. */
export function pathWithQuery(path: string, params: Record<string, string | string[] | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(key, v);
  }
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The signed-in reviewer, or null (for the layout, which renders around pages that redirect). */
export async function currentReviewer(): Promise<ReviewerIdentity | null> {
  const store = await cookies();
  return authenticateReviewer(null, store.get(SESSION_COOKIE)?.value ?? null);
}
