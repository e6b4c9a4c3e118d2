"use client";

import { useActionState, useState } from "react";
import type { TryResult, TryTool } from "@/lib/dashboard/policy";
import { ErrorNote } from "../../_components/action-form";
import { BUTTON, INPUT } from "../../_components/page-parts";
import { VerdictView } from "../../_components/verdict-view";
import { tryPolicyAction } from "../actions";

/**
 * Asks the policy about a sample call: a command for run_command, a path for file tools, a URL
 * for fetch_url. Shows, under each supervision preset side by side (the workspace's outlined), the
 * decision, the deciding rule and, for commands, every parsed part.
 * Nothing runs. The fields are controlled, so what was asked stays in the box after the answer
 * (a form action would otherwise reset it) and can be tweaked and asked again.
 */
export function TryIt({ tools }: { tools: TryTool[] }) {
  const [state, action, pending] = useActionState<TryResult | null, FormData>(tryPolicyAction, null);
  const [tool, setTool] = useState("run_command");
  const [values, setValues] = useState<Record<string, string>>({});
  const label = "flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-600 dark:text-zinc-400";
  const field = tools.find((t) => t.name === tool)?.field ?? "path";
  return (
    <div className="space-y-3">
      <form action={action} className="flex flex-col gap-2 sm:flex-row sm:items-end" data-testid="try-it">
        <label className={label}>
          Tool
          <select name="tool" value={tool} onChange={(e) => setTool(e.target.value)} className={INPUT}>
            {tools.map((t) => (
              <option key={t.name}>{t.name}</option>
            ))}
          </select>
        </label>
        <label className={`${label} flex-1`}>
          {field === "command" ? "Command" : field === "url" ? "URL" : "Path"}
          <input
            key={field}
            name={field}
            value={values[field] ?? ""}
            onChange={(e) => setValues((v) => ({ ...v, [field]: e.target.value }))}
            required={field !== "path"}
            placeholder={field === "command" ? "git status && rm -rf build" : field === "url" ? "https://example.com/" : "src/app.ts"}
            className={`${INPUT} font-mono`}
          />
        </label>
        <button type="submit" className={BUTTON.primary} disabled={pending}>
          {pending ? "Asking…" : "Ask the policy"}
        </button>
      </form>
      {state?.ok === false && <ErrorNote error={state.error} />}
      {state?.ok && (
        <div className="grid gap-3 lg:grid-cols-3" data-testid="try-result">
          {state.byPreset.map(({ preset, verdict }) => (
            <section
              key={preset}
              className={`min-w-0 rounded-md border p-2 ${preset === state.preset ? "border-zinc-700 dark:border-zinc-300" : "border-zinc-200 dark:border-zinc-800"}`}
              data-testid={`try-preset-${preset}`}
              data-decision={verdict.decision}
            >
              <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-zinc-700 dark:text-zinc-300">
                {preset}
                {preset === state.preset && <span className="ml-1 font-normal normal-case">(this workspace)</span>}
              </h3>
              <VerdictView verdict={verdict} />
            </section>
          ))}
        </div>
      )}
    </div>
  );
}
