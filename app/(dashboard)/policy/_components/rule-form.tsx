"use client";

import type { RuleRow } from "@/lib/dashboard/policy";
import { ActionForm, type ActionState } from "../../_components/action-form";
import { BUTTON, INPUT } from "../../_components/page-parts";

const OPTIONS_EXAMPLE = '{"limits": {"memory_mb": 4096, "processes": 256, "cpu_seconds": 0, "timeout_ms": 300000}, "redact": false}';

/** The options as the editor shows them: pretty JSON, or the stored text when it does not parse. */
function optionsText(rule: RuleRow | undefined): string {
  if (!rule) return "";
  if (rule.invalidOptions) return rule.invalidOptions.text;
  return rule.options ? JSON.stringify(rule.options, null, 2) : "";
}

/** The fields of a rule (add and edit share it). */
export function RuleForm({
  action,
  tools,
  rule,
  submitLabel,
  onDone,
  testId,
}: {
  action: (prev: ActionState, form: FormData) => Promise<ActionState>;
  tools: string[];
  rule?: RuleRow;
  submitLabel: string;
  onDone?: () => void;
  testId?: string;
}) {
  const label = "flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-600 dark:text-zinc-400";
  return (
    <ActionForm action={action} className="grid grid-cols-1 gap-2 sm:grid-cols-2 lg:grid-cols-6" testId={testId}>
      {rule && <input type="hidden" name="id" value={rule.id} />}
      <label className={label}>
        Tool
        <select name="tool" defaultValue={rule?.tool ?? "*"} className={INPUT}>
          {tools.map((t) => (
            <option key={t} value={t}>
              {t === "*" ? "* (every tool)" : t}
            </option>
          ))}
        </select>
      </label>
      <label className={label}>
        Path glob
        <input name="pathGlob" defaultValue={rule?.pathGlob ?? ""} placeholder="e.g. src/**/*.ts" className={`${INPUT} font-mono`} />
      </label>
      <label className={`${label} lg:col-span-2`}>
        Command pattern
        <input name="command" defaultValue={rule?.command ?? ""} placeholder="e.g. npm test *" className={`${INPUT} font-mono`} />
      </label>
      <label className={label}>
        Decision
        <select name="decision" defaultValue={rule?.decision ?? "ask"} className={INPUT}>
          <option value="allow">allow</option>
          <option value="ask">ask</option>
          <option value="deny">deny</option>
        </select>
      </label>
      <label className="flex items-center gap-2 self-end pb-2 text-sm">
        <input type="checkbox" name="enabled" defaultChecked={rule?.enabled ?? true} /> enabled
      </label>
      <label className={`${label} sm:col-span-2 lg:col-span-5`}>
        Note (shown to reviewers and in reasons)
        <input name="note" defaultValue={rule?.note ?? ""} className={INPUT} />
      </label>
      <label className={`${label} sm:col-span-2 lg:col-span-6`}>
        <span>
          Options (JSON, optional): <code className="font-mono">limits</code> for run_command (memory_mb, processes, cpu_seconds, file_size_mb, address_space_mb, timeout_ms, output_chars; 0
          lifts a limit) and <code className="font-mono">redact</code> (false: secrets pass unmasked and reviewers may reveal masked values)
        </span>
        <textarea
          name="options"
          defaultValue={optionsText(rule)}
          placeholder={OPTIONS_EXAMPLE}
          rows={rule?.options || rule?.invalidOptions ? 5 : 2}
          spellCheck={false}
          className={`${INPUT} font-mono`}
        />
      </label>
      <div className="flex items-end gap-2">
        <button type="submit" className={BUTTON.primary}>
          {submitLabel}
        </button>
        {onDone && (
          <button type="button" className={BUTTON.secondary} onClick={onDone}>
            Close
          </button>
        )}
      </div>
    </ActionForm>
  );
}
