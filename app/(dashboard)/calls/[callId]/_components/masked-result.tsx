"use client";

import { useActionState, useState } from "react";
import { BUTTON } from "../../../_components/page-parts";
import { JsonBlock, TextBlock } from "../../../_components/text-block";
import { revealOutputAction, type RevealState } from "../actions";

/** "2 generic_assignment, 1 aws_access_key" */
function kindsText(kinds: Record<string, number>): string {
  return Object.entries(kinds)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(", ");
}

/**
 * A call's stored result (`children`, secrets masked) with a "Reveal masked values" button: the
 * server action runs the call again read-only and, when the policy allows it, the unmasked output
 * replaces the stored one in place until the reviewer hides it (hidden characters still marked by
 * TextBlock). Every reveal is logged by the server; the unmasked text lives only in this
 * component's state.
 */
export function MaskedResult({ callId, masked, children }: { callId: string; masked: Record<string, number>; children: React.ReactNode }) {
  const [state, action, pending] = useActionState<RevealState, FormData>(revealOutputAction, null);
  const [hidden, setHidden] = useState(false);
  const revealed = state?.ok && !hidden ? state : null;
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-2 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm dark:border-amber-800 dark:bg-amber-950">
        {revealed ? (
          <>
            <span className="flex-1" data-testid="reveal-status">
              Showing the unmasked output ({kindsText(revealed.revealed)}). It is not stored, and the reveal is in the event log.
            </span>
            <button type="button" className={BUTTON.secondary} onClick={() => setHidden(true)}>
              Hide
            </button>
          </>
        ) : (
          <form action={action} onSubmit={() => setHidden(false)} className="flex flex-1 flex-wrap items-center gap-x-3 gap-y-2">
            <input type="hidden" name="callId" value={callId} />
            <span className="flex-1">Masked in this output: {kindsText(masked)}.</span>
            <button type="submit" className={BUTTON.secondary} disabled={pending} data-testid="reveal-output">
              {pending ? "Revealing…" : "Reveal masked values"}
            </button>
          </form>
        )}
        {state?.ok === false && (
          <p role="alert" className="basis-full text-red-700 dark:text-red-300" data-testid="reveal-error" data-error={state.error.name} data-code={state.error.code}>
            {state.error.message}
          </p>
        )}
      </div>
      {revealed ? (
        <div className="space-y-3" data-testid="revealed-output">
          {revealed.outputs.map((o) => (
            <TextBlock key={o.name} label={`${o.name} (unmasked)`} text={o.text} tall />
          ))}
          <JsonBlock label={revealed.outputs.length ? "Other fields (unmasked)" : "data (unmasked)"} value={revealed.rest} />
        </div>
      ) : (
        children
      )}
    </div>
  );
}
