"use client";

import { useActionState, useState } from "react";
import type { NewAgentResult } from "@/lib/auth/agents";
import { ErrorNote } from "../../_components/action-form";
import { BUTTON, INPUT } from "../../_components/page-parts";
import { createTokenAction } from "../actions";
import { PresetSelect } from "../../_components/preset-select";

/** The create form; a new token is shown once, with a copy button and how to use it. */
export function CreateToken({ workspaces }: { workspaces: { id: string; root: string }[] }) {
  const [state, action, pending] = useActionState<NewAgentResult | null, FormData>(createTokenAction, null);
  const [copied, setCopied] = useState(false);
  const label = "flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-600 dark:text-zinc-400";
  return (
    <div className="space-y-3">
      <form action={action} className="flex flex-col gap-2 sm:flex-row sm:items-end" data-testid="create-token">
        <label className={`${label} flex-1`}>
          Name
          <input name="name" required maxLength={100} placeholder="e.g. claude-code on laptop" className={INPUT} />
        </label>
        <label className={`${label} flex-1`}>
          Workspace scope
          <select name="workspaceId" defaultValue="" className={INPUT}>
            <option value="">any workspace</option>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.root}
              </option>
            ))}
          </select>
        </label>
        <label className={label}>
          Supervision preset
          <PresetSelect defaultValue="" inherit className={INPUT} testId="token-preset" />
        </label>
        <button type="submit" className={BUTTON.primary} disabled={pending}>
          {pending ? "Creating…" : "Create token"}
        </button>
      </form>
      {state?.ok === false && <ErrorNote error={state.error} />}
      {state?.ok && (
        <div className="rounded-md border border-emerald-300 bg-emerald-50 p-3 text-sm dark:border-emerald-800 dark:bg-emerald-950" data-testid="new-token">
          <p className="font-medium">Token for “{state.name}”. Copy it now: it is shown only this once.</p>
          <div className="mt-2 flex flex-col gap-2 sm:flex-row">
            <code className="min-w-0 flex-1 break-all rounded bg-white px-2 py-1 font-mono text-xs dark:bg-zinc-900" data-testid="token-value">
              {state.token}
            </code>
            <button
              type="button"
              className={BUTTON.secondary}
              onClick={async () => {
                await navigator.clipboard.writeText(state.token);
                setCopied(true);
              }}
            >
              {copied ? "Copied" : "Copy"}
            </button>
          </div>
          <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">
            Agents send it as <code>Authorization: Bearer …</code> to <code>/api/tools/&lt;tool&gt;</code> or <code>/api/mcp</code>.
          </p>
        </div>
      )}
    </div>
  );
}
