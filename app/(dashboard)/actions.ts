"use server";

import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { SESSION_COOKIE, signOut } from "@/lib/auth/tokens";

/** Ends the reviewer's browser session and goes to the sign-in page. */
export async function signOutAction(): Promise<void> {
  const store = await cookies();
  const session = store.get(SESSION_COOKIE)?.value;
  if (session) await signOut(session);
  store.delete(SESSION_COOKIE);
  redirect("/login");
}
