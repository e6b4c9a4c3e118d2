"use client";

import { useActionState } from "react";

/** What a form's server action answers: ok, or a message to show next to the form. */
export type ActionState = { ok: boolean; message?: string } | null;

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
      {state?.message && (
        <p role={state.ok ? "status" : "alert"} className={`basis-full text-sm ${state.ok ? "text-emerald-700 dark:text-emerald-300" : "text-red-700 dark:text-red-300"}`}>
          {state.message}
        </p>
      )}
    </form>
  );
}
