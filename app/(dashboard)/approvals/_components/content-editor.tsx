"use client";

import { useEffect, useState } from "react";
import type { EditPreview } from "@/lib/dashboard/approvals";
import { losesCarriageReturns, restoreLineBreaks } from "@/lib/dashboard/edit-text";
import { DiffView } from "../../_components/diff-view";
import { BUTTON } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { previewEditAction } from "../actions";

/** Wait after the last keystroke before recomputing the diff (ms). */
const PREVIEW_DELAY_MS = 250;

/**
 * Edit a pending write's content before approving it. The diff below the text box is recomputed
 * by the server with the write tool's own rules (encoding, BOM, line endings) as you type, so it
 * shows exactly what approving will write.
 */
export function ContentEditor({ callId, original, onChange, onApprove, busy }: { callId: string; original: string; onChange(content: string): void; onApprove(content: string): void; busy: boolean }) {
  const [text, setText] = useState(original);
  const [preview, setPreview] = useState<EditPreview | null>(null);
  const [updating, setUpdating] = useState(false);
  const content = restoreLineBreaks(original, text);

  useEffect(() => {
    onChange(content);
    let cancelled = false;
    setUpdating(true);
    const timer = setTimeout(async () => {
      const result = await previewEditAction(callId, content);
      if (!cancelled) {
        setPreview(result);
        setUpdating(false);
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
        Content to write
      </label>
      <textarea
        id={`editor-${callId}`}
        data-testid="content-editor"
        value={text}
        onChange={(e) => setText(e.target.value)}
        spellCheck={false}
        rows={Math.min(24, Math.max(8, text.split("\n").length + 1))}
        className="w-full rounded-md border border-zinc-300 bg-white p-2 font-mono text-xs leading-relaxed dark:border-zinc-700 dark:bg-zinc-950"
      />
      {losesCarriageReturns(original) && (
        <p className="text-sm text-amber-800 dark:text-amber-200">
          The proposed content mixes line endings; a text box keeps only LF, so edited content is written with LF line breaks (the diff shows it).
        </p>
      )}
      <div className="flex flex-wrap items-center gap-2">
        <button type="button" className={BUTTON.approve} disabled={busy || updating || preview?.ok === false} onClick={() => onApprove(content)} data-testid="approve-edited">
          Approve edited content
        </button>
        <button type="button" className={BUTTON.secondary} onClick={() => setText(original)} disabled={text === original}>
          Undo my edits
        </button>
        <span className="text-xs text-zinc-500" aria-live="polite" data-testid="edit-preview-state">
          {updating ? "updating diff…" : "diff up to date"}
        </span>
      </div>
      {preview?.ok === false && (
        <p role="alert" className="rounded-md border border-red-300 bg-red-50 p-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
          {preview.message}
        </p>
      )}
      {preview?.ok && (
        <>
          {preview.preview.warnings && preview.preview.warnings.length > 0 && (
            <ul className="list-disc pl-5 text-sm text-amber-800 dark:text-amber-200">
              {preview.preview.warnings.map((w, i) => (
                <li key={i}>
                  <RevealedText text={w} />
                </li>
              ))}
            </ul>
          )}
          <DiffView
            diff={preview.preview.diff ?? ""}
            testId="edit-diff"
            title={
              <span>
                With your edits: <span className="text-emerald-700 dark:text-emerald-400">+{preview.preview.additions ?? 0}</span>{" "}
                <span className="text-red-700 dark:text-red-400">−{preview.preview.deletions ?? 0}</span> lines
              </span>
            }
          />
        </>
      )}
    </div>
  );
}
