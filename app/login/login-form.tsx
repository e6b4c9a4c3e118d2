"use client";

import { useActionState } from "react";
import { signInAction } from "./actions";

/** Login and password form; shows "wrong login or password" without reloading. */
export function LoginForm({ next }: { next: string }) {
  const [state, action, pending] = useActionState(signInAction, null);
  return (
    <form action={action} className="flex flex-col gap-3">
      <input type="hidden" name="next" value={next} />
      <label className="flex flex-col gap-1 text-sm">
        Login
        <input name="login" defaultValue="admin" autoComplete="username" required className="rounded border border-zinc-300 px-3 py-2 dark:border-zinc-700 dark:bg-zinc-900" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        Password
        <input name="password" type="password" autoComplete="current-password" required autoFocus className="rounded border border-zinc-300 px-3 py-2 dark:border-zinc-700 dark:bg-zinc-900" />
      </label>
      {state?.error && (
        <p role="alert" data-error={state.error.name} data-code={state.error.code} className="text-sm text-red-600">
          {state.error.message}
        </p>
      )}
      <button type="submit" disabled={pending} className="rounded bg-zinc-900 px-3 py-2 text-white disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900">
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
