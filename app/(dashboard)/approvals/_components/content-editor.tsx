"use client";

import { useEffect, useLayoutEffect, useRef, useState } from "react";
import type { EditPreview } from "@/lib/dashboard/approvals";
import { firstChangedLine, losesCarriageReturns, restoreLineBreaks } from "@/lib/dashboard/edit-text";
import { DiffView } from "../../_components/diff-view";
import { BUTTON } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { previewEditAction } from "../actions";

/** Wait after the last keystroke before recomputing the diff (ms). */
const PREVIEW_DELAY_MS = 250;

/**
 * Edit a pending call's editable argument (write_file's content, edit_file's new_string) before
 * approving it. The text box opens at the first change. Below it: the write's diff with the edit,
 * recomputed by the server with the tool's own rules (encoding, BOM, line endings, matching) as
 * you type, and the edit itself as a diff against the agent's proposal.
 * @param onChange the edited value and whether its preview is current and valid (approvable)
 */
export function ContentEditor({
  callId,
  field,
  diff,
  onChange,
  busy,
}: {
  callId: string;
  field: { field: string; label: string; value: string };
  diff: string;
  onChange(content: string | null): void;
  busy: boolean;
}) {
  const original = field.value;
  const [text, setText] = useState(original);
  const [preview, setPreview] = useState<EditPreview | null>(null);
  const [updating, setUpdating] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  const content = restoreLineBreaks(original, text);

  // Open at the change: caret and scroll on the first changed line (write_file), else the start.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const line = field.field === "content" ? firstChangedLine(diff) : 1;
    const offset = original.split("\n").slice(0, line - 1).join("\n").length + (line > 1 ? 1 : 0);
    el.focus({ preventScroll: true });
    el.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(el).lineHeight) || 18;
    el.scrollTop = Math.max(0, (line - 3) * lineHeight);
    el.dataset.openedAtLine = String(line);
  }, []);

  useEffect(() => {
    onChange(null);
    let cancelled = false;
    setUpdating(true);
    const timer = setTimeout(async () => {
      const result = await previewEditAction(callId, content);
      if (!cancelled) {
        setPreview(result);
        setUpdating(false);
        onChange(result.ok ? content : null);
      }
    }, PREVIEW_DELAY_MS);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [callId, content, onChange]);

  return (
    <div className="space-y-3">
      <label className="block text-sm font-medium" htmlFor={`editor-${callId}`}>
        {field.label} <span className="font-normal text-zinc-700 dark:text-zinc-300">({field.field}; opened at the change)</span>
      </label>
      <textarea
        ref={box}
        id={`editor-${callId}`}
        data-testid="content-editor"
        value={text}
        onChange={(e) => setText(e.target.value)}
        spellCheck={false}
        rows={Math.min(24, Math.max(8, text.split("\n").length + 1))}
        className="w-full rounded-md border border-zinc-400 bg-white p-2 font-mono text-xs leading-relaxed dark:border-zinc-600 dark:bg-zinc-950"
      />
      {losesCarriageReturns(original) && (
        <p className="text-sm text-amber-900 dark:text-amber-200">
          The proposed content mixes line endings; a text box keeps only LF, so edited content is written with LF line breaks (the diff shows it).
        </p>
      )}
      <div className="flex flex-wrap items-center gap-2">
        <button type="button" className={BUTTON.secondary} onClick={() => setText(original)} disabled={busy || text === original}>
          Undo my edits
        </button>
        <span className="text-xs text-zinc-700 dark:text-zinc-300" aria-live="polite" data-testid="edit-preview-state">
          {updating ? "updating diff…" : "diff up to date"}
        </span>
      </div>
      {preview?.ok === false && (
        <p role="alert" data-error={preview.error.name} data-code={preview.error.code} className="rounded-md border border-red-400 bg-red-50 p-2 text-sm text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50">
          {preview.error.message}
        </p>
      )}
      {preview?.ok && (
        <>
          {preview.preview.warnings && preview.preview.warnings.length > 0 && (
            <ul className="list-disc pl-5 text-sm text-amber-900 dark:text-amber-200">
              {preview.preview.warnings.map((w, i) => (
                <li key={i}>
                  <RevealedText text={w} />
                </li>
              ))}
            </ul>
          )}
          {preview.againstProposal !== "" && (
            <DiffView
              diff={preview.againstProposal}
              testId="edit-against-proposal"
              title={<span className="font-medium">Your edit, against the agent&apos;s proposal</span>}
            />
          )}
          <DiffView
            diff={preview.preview.diff ?? ""}
            testId="edit-diff"
            created={preview.preview.targetSha256 === null}
            title={
              <span>
                What approving writes now: <span className="text-emerald-800 dark:text-emerald-400">+{preview.preview.additions ?? 0}</span>{" "}
                <span className="text-red-800 dark:text-red-400">−{preview.preview.deletions ?? 0}</span> lines
              </span>
            }
          />
        </>
      )}
    </div>
  );
}
