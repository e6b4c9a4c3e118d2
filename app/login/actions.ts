"use server";

import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { SESSION_COOKIE, signIn } from "@/lib/auth/tokens";
import { safeReturnPath } from "@/lib/dashboard/auth";
import { errorBody, type ErrorBody } from "@/lib/errors";

/** A form field as text: "" when it is missing or a file. */
function field(form: FormData, key: string): string {
  const value = form.get(key);
  return typeof value === "string" ? value : "";
}

/**
 * Signs a reviewer in: sets the HttpOnly, SameSite=Strict session cookie and goes to `next` (a
 * dashboard path; anything else goes to "/"). A refusal is the API's error: `unauthorized` (wrong
 * login or password, or too many wrong passwords: `detail.reason` "throttled", retry after a minute).
 */
export async function signInAction(_prev: { ok: false; error: ErrorBody } | null, form: FormData): Promise<{ ok: false; error: ErrorBody }> {
  const login = field(form, "login");
  const password = field(form, "password");
  const session = await signIn(login, password);
  if (session === "throttled") {
    return { ok: false, error: errorBody("unauthorized", "Too many wrong passwords for this login. Wait a minute and try again.", { reason: "throttled" }, 60_000) };
  }
  if (!session) return { ok: false, error: errorBody("unauthorized", "Wrong login or password.") };
  const store = await cookies();
  store.set(SESSION_COOKIE, session.session, {
    httpOnly: true,
    sameSite: "strict",
    path: "/",
    expires: session.expiresAt,
  });
  redirect(safeReturnPath(field(form, "next") || "/"));
}
