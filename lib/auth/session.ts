import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { authenticateReviewer, SESSION_COOKIE, type ReviewerIdentity } from "@/lib/auth/tokens";

/**
 * For server components and server actions of the dashboard: the signed-in reviewer, or a
 * redirect to /login. Server actions are POSTs that Next.js checks against the Origin header.
 */
export async function requireReviewerSession(): Promise<ReviewerIdentity> {
  const store = await cookies();
  const reviewer = await authenticateReviewer(null, store.get(SESSION_COOKIE)?.value ?? null);
  if (!reviewer) redirect("/login");
  return reviewer;
}
