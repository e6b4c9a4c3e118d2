"use client";

import { useState } from "react";
import type { RuleRow } from "@/lib/dashboard/policy";
import { ActionForm } from "../../_components/action-form";
import { DecisionBadge } from "../../_components/badges";
import { BUTTON } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { deleteRuleAction, moveRuleAction, toggleRuleAction, updateRuleAction } from "../actions";
import { RuleForm } from "./rule-form";

/** One rule in the ordered list: what it matches, its decision, and its controls. */
export function RuleItem({ rule, position, last, tools }: { rule: RuleRow; position: number; last: boolean; tools: string[] }) {
  const [editing, setEditing] = useState(false);
  return (
    <li className={`rounded-md border px-3 py-2 ${rule.enabled ? "border-zinc-200 dark:border-zinc-800" : "border-dashed border-zinc-300 opacity-60 dark:border-zinc-700"}`} data-testid="rule" data-rule-id={rule.id}>
      <div className="flex flex-wrap items-start gap-x-3 gap-y-2">
        <span className="w-6 pt-0.5 text-right text-xs tabular-nums text-zinc-500">{position}</span>
        <div className="min-w-0 flex-1 space-y-0.5 text-sm">
          <div className="flex flex-wrap items-center gap-2">
            <DecisionBadge decision={rule.decision} />
            <span className="font-mono text-xs">{rule.tool}</span>
            {rule.pathGlob && (
              <span className="font-mono text-xs">
                path <RevealedText text={rule.pathGlob} />
              </span>
            )}
            {rule.command && (
              <span className="font-mono text-xs">
                command <RevealedText text={rule.command} />
              </span>
            )}
            {!rule.enabled && <span className="text-xs font-medium">disabled</span>}
            <span className="text-xs text-zinc-500">{rule.source === "default" ? "default" : "operator"} · {rule.id}</span>
          </div>
          {rule.optionsSummary.length > 0 && (
            <ul className="flex flex-wrap gap-1" data-testid="rule-options" title={JSON.stringify(rule.options)}>
              {rule.optionsSummary.map((words) => (
                <li key={words} className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-[0.7rem] text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
                  {words}
                </li>
              ))}
            </ul>
          )}
          {rule.invalidOptions && (
            <p className="text-xs text-red-700 dark:text-red-300" data-testid="rule-options-invalid">
              Options ignored ({rule.invalidOptions.problem}): <RevealedText className="font-mono" text={rule.invalidOptions.text} />
            </p>
          )}
          {rule.note && <p className="text-xs text-zinc-600 dark:text-zinc-400">{rule.note}</p>}
        </div>
        <div className="flex flex-wrap items-center gap-1">
          <ActionForm action={moveRuleAction}>
            <input type="hidden" name="id" value={rule.id} />
            <input type="hidden" name="direction" value="up" />
            <button type="submit" className={BUTTON.small} disabled={position === 1} aria-label={`Move rule ${position} up`}>
              ↑
            </button>
          </ActionForm>
          <ActionForm action={moveRuleAction}>
            <input type="hidden" name="id" value={rule.id} />
            <input type="hidden" name="direction" value="down" />
            <button type="submit" className={BUTTON.small} disabled={last} aria-label={`Move rule ${position} down`}>
              ↓
            </button>
          </ActionForm>
          <ActionForm action={toggleRuleAction}>
            <input type="hidden" name="id" value={rule.id} />
            <input type="hidden" name="enabled" value={String(!rule.enabled)} />
            <button type="submit" className={BUTTON.small}>
              {rule.enabled ? "Disable" : "Enable"}
            </button>
          </ActionForm>
          <button type="button" className={BUTTON.small} onClick={() => setEditing((e) => !e)} aria-expanded={editing}>
            Edit
          </button>
          {rule.source !== "default" && (
            <ActionForm action={deleteRuleAction} confirm={`Delete rule ${rule.id}?`}>
              <input type="hidden" name="id" value={rule.id} />
              <button type="submit" className={`${BUTTON.small} text-red-700 dark:text-red-400`}>
                Delete
              </button>
            </ActionForm>
          )}
        </div>
      </div>
      {editing && (
        <div className="mt-3 border-t border-zinc-200 pt-3 dark:border-zinc-800">
          <RuleForm action={updateRuleAction} tools={tools} rule={rule} submitLabel="Save" onDone={() => setEditing(false)} />
        </div>
      )}
    </li>
  );
}
