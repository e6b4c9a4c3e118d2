import { PRESET_NAMES, PRESETS, type PresetName } from "@/lib/policy/presets";
import { ActionForm } from "../../_components/action-form";
import { DecisionBadge } from "../../_components/badges";
import { BUTTON, INPUT } from "../../_components/page-parts";
import { setWorkspacePresetAction } from "../actions";
import { PresetSelect } from "../../_components/preset-select";

/**
 * The workspace's supervision preset: a chooser, and every preset shown as what it is, its rules
 * (on top of the table below, replacing the default rules it names) and its built-in checks.
 */
export function PresetCard({ current, agentOverrides }: { current: PresetName; agentOverrides: number }) {
  return (
    <div className="space-y-3 text-sm">
      <ActionForm action={setWorkspacePresetAction} className="flex flex-wrap items-end gap-2" testId="workspace-preset">
        <label className="flex flex-col gap-1 text-xs font-medium text-zinc-600 dark:text-zinc-400">
          This workspace&apos;s preset
          <PresetSelect defaultValue={current} className={INPUT} testId="workspace-preset-select" />
        </label>
        <button type="submit" className={BUTTON.primary}>
          Use this preset
        </button>
        {agentOverrides > 0 && (
          <span className="text-xs text-zinc-600 dark:text-zinc-400">
            {agentOverrides} token{agentOverrides === 1 ? " has" : "s have"} a preset of {agentOverrides === 1 ? "its" : "their"} own (Tokens page).
          </span>
        )}
      </ActionForm>
      <div className="grid gap-3 lg:grid-cols-3">
        {PRESET_NAMES.map((name) => {
          const spec = PRESETS[name];
          return (
            <details key={name} className={`rounded-md border p-2 ${name === current ? "border-zinc-700 dark:border-zinc-300" : "border-zinc-200 dark:border-zinc-800"}`} data-testid={`preset-${name}`}>
              <summary className="cursor-pointer">
                <strong>{name}</strong>
                {name === current && <span className="ml-1 text-xs">(in use)</span>}
                <span className="mt-1 block text-xs text-zinc-700 dark:text-zinc-300">{spec.summary}</span>
              </summary>
              {spec.replaces.length > 0 && (
                <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">
                  Replaces {spec.replaces.map((id) => <code key={id} className="mr-1 font-mono">{id}</code>)}; every other rule below applies as listed.
                </p>
              )}
              {spec.rules.length > 0 && (
                <ul className="mt-2 space-y-0.5 text-xs" aria-label={`Rules of ${name}`}>
                  {spec.rules.map((r) => (
                    <li key={r.id} className="flex flex-wrap items-baseline gap-1">
                      <DecisionBadge decision={r.decision} />
                      <code className="font-mono">{r.tool}</code>
                      {r.pathGlob && <code className="break-all font-mono">{r.pathGlob}</code>}
                      <span className="text-zinc-600 dark:text-zinc-400">— {r.note}</span>
                    </li>
                  ))}
                </ul>
              )}
              {spec.describedChecks.length > 0 && (
                <ul className="mt-2 list-disc space-y-0.5 pl-4 text-xs" aria-label={`Checks of ${name}`}>
                  {spec.describedChecks.map((c) => (
                    <li key={c.id}>
                      <code className="font-mono">preset:{name}:{c.id}</code> {c.text}
                    </li>
                  ))}
                </ul>
              )}
            </details>
          );
        })}
      </div>
    </div>
  );
}
