"use client";

import { useActionState } from "react";
import type { ErrorBody } from "@/lib/errors";

/**
 * What a form's server action answers: ok with a message to show next to the form, or the error
 * as the API answers it (lib/errors.ts: stable name and code, a message for people). Server
 * actions return it for any bad input (a malformed field, an unknown id) and never throw for one.
 */
export type ActionState = { ok: true; message?: string } | { ok: false; error: ErrorBody } | null;

/** The text an action's answer shows beside its form ("" for none). */
export function stateMessage(state: ActionState): string {
  if (!state) return "";
  return state.ok ? (state.message ?? "") : state.error.message;
}

/**
 * An action's error shown beside its form, the same way on every page: the message, with the
 * error's stable name and code in `data-error` / `data-code` (for tests and support).
 */
export function ErrorNote({ error, className = "" }: { error: ErrorBody; className?: string }) {
  return (
    <p role="alert" data-error={error.name} data-code={error.code} className={`text-sm text-red-700 dark:text-red-300 ${className}`}>
      {error.message}
    </p>
  );
}

/**
 * A form bound to a server action with `useActionState`: shows the action's message (red when
 * not ok), disables its fieldset while the action runs, and can ask for a confirmation first.
 */
export function ActionForm({
  action,
  children,
  className = "",
  confirm,
  testId,
}: {
  action: (prev: ActionState, form: FormData) => Promise<ActionState>;
  children: React.ReactNode;
  className?: string;
  confirm?: string;
  testId?: string;
}) {
  const [state, formAction, pending] = useActionState(action, null);
  return (
    <form
      action={formAction}
      className={className}
      data-testid={testId}
      onSubmit={(e) => {
        if (confirm && !window.confirm(confirm)) e.preventDefault();
      }}
    >
      <fieldset disabled={pending} className="contents">
        {children}
      </fieldset>
      {state?.ok && state.message && (
        <p role="status" className="basis-full text-sm text-emerald-700 dark:text-emerald-300">
          {state.message}
        </p>
      )}
      {state && !state.ok && <ErrorNote error={state.error} className="basis-full" />}
    </form>
  );
}
