"use server";

import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { SESSION_COOKIE, signIn } from "@/lib/auth/tokens";
import { safeReturnPath } from "@/lib/dashboard/auth";

/**
 * Signs a reviewer in: sets the HttpOnly, SameSite=Strict session cookie and goes to `next` (a
 * dashboard path; anything else goes to "/").
 */
export async function signInAction(_prev: { error: string } | null, form: FormData): Promise<{ error: string }> {
  const login = String(form.get("login") ?? "");
  const password = String(form.get("password") ?? "");
  const session = await signIn(login, password);
  if (session === "throttled") return { error: "Too many wrong passwords for this login. Wait a minute and try again." };
  if (!session) return { error: "Wrong login or password." };
  const store = await cookies();
  store.set(SESSION_COOKIE, session.session, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    expires: session.expiresAt,
  });
  redirect(safeReturnPath(String(form.get("next") ?? "/")));
}
