import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentReviewer, safeReturnPath } from "@/lib/dashboard/auth";
import { LoginForm } from "./login-form";

export const metadata: Metadata = { title: "Sign in · Agent Reach" };

/** Reviewer sign-in. `?next=` is where to go afterwards (a dashboard path). */
export default async function LoginPage({ searchParams }: { searchParams: Promise<{ next?: string | string[] }> }) {
  const { next } = await searchParams;
  const returnTo = safeReturnPath(Array.isArray(next) ? next[0] : next);
  if (await currentReviewer()) redirect(returnTo);
  return (
    <main className="mx-auto flex min-h-screen max-w-sm flex-col justify-center px-6">
      <h1 className="mb-1 text-2xl font-semibold">Agent Reach</h1>
      <p className="mb-6 text-sm text-zinc-500">Sign in to review your agents&apos; calls.</p>
      <LoginForm next={returnTo} />
      <p className="mt-6 text-xs text-zinc-500">
        The first start prints the password of the <code>admin</code> reviewer; set AGENT_REACH_REVIEWER_PASSWORD to choose it.
      </p>
    </main>
  );
}
