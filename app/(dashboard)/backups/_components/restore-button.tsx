"use client";

import Link from "next/link";
import { useActionState } from "react";
import { restoreAction, type RestoreState } from "../actions";
import { BUTTON } from "../../_components/page-parts";

/**
 * Restores a backup after a confirmation. The restore is an audited call that first backs up the
 * current bytes, so the result offers the new backup as the way back. It carries the sha256 of the
 * current file as the page showed it (`seenSha256`, null: no file), so a file changed since is
 * refused with the conflict instead of overwritten.
 */
export function RestoreButton({ backupId, path, seenSha256 }: { backupId: string; path: string; seenSha256: string | null }) {
  const [state, action, pending] = useActionState<RestoreState, FormData>(restoreAction, null);
  return (
    <div className="space-y-2">
      <form
        action={action}
        onSubmit={(e) => {
          if (!window.confirm(`Restore ${path} to this version? The current bytes are backed up first, so you can undo it.`)) e.preventDefault();
        }}
      >
        <input type="hidden" name="backupId" value={backupId} />
        <input type="hidden" name="expectedSha256" value={seenSha256 ?? "absent"} />
        <button type="submit" className={BUTTON.primary} disabled={pending} data-testid="restore">
          {pending ? "Restoring…" : "Restore this version"}
        </button>
      </form>
      {state?.ok === true && (
        <p role="status" data-testid="restore-result" className="rounded-md border border-emerald-300 bg-emerald-50 p-2 text-sm text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100">
          Restored. {state.callId && <Link className="underline" href={`/calls/${state.callId}`}>The restore call</Link>}
          {state.newBackupId ? (
            <>
              {" "}backed up the bytes it replaced as <Link className="font-mono underline" href={`/backups/${state.newBackupId}`}>{state.newBackupId}</Link> (restore that to undo).
            </>
          ) : (
            " The file already had these bytes; nothing was replaced."
          )}
        </p>
      )}
      {state?.ok === false && (
        <p role="alert" data-testid="restore-result" data-conflict={state.conflict ? "true" : undefined} data-error={state.error.name} data-code={state.error.code} className="rounded-md border border-red-300 bg-red-50 p-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
          Not restored: {state.conflict ? state.error.message : `${state.error.name} (${state.error.code}): ${state.error.message}`} {state.callId && <Link className="underline" href={`/calls/${state.callId}`}>Open the call</Link>}
        </p>
      )}
    </div>
  );
}
