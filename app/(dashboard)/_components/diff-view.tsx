"use client";

import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { parse } from "diff2html/lib-esm/diff2html";
import { ColorSchemeType } from "diff2html/lib-esm/types";
import { Diff2HtmlUI } from "diff2html/lib-esm/ui/js/diff2html-ui-slim";
import { describeHidden, HIDDEN_CHARACTER } from "@/lib/dashboard/reveal";
import { BUTTON } from "./page-parts";

/**
 * A unified diff drawn by diff2html with syntax colours (highlight.js through diff2html's slim
 * UI), side by side or line by line (the choice is remembered in localStorage). Long lines wrap
 * and invisible, bidirectional and control characters are marked, so nothing that will be
 * written is out of sight. Very large diffs wait for an explicit click before drawing.
 */

export type DiffFormat = "side-by-side" | "line-by-line";

const STORAGE_KEY = "agent-reach:diff-format";
/** Above this many characters the diff is drawn only on request (drawing can take seconds). */
const LARGE_DIFF_CHARS = 1_000_000;
const listeners = new Set<() => void>();
/** The stored choice; without one, line by line on a narrow screen and side by side elsewhere. */
function readFormat(): DiffFormat {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === "line-by-line" || stored === "side-by-side") return stored;
  return window.matchMedia("(max-width: 640px)").matches ? "line-by-line" : "side-by-side";
}
function writeFormat(format: DiffFormat) {
  localStorage.setItem(STORAGE_KEY, format);
  listeners.forEach((l) => l());
}
function subscribeFormat(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The reviewer's diff layout, shared by every diff on the page. */
export function useDiffFormat(): [DiffFormat, (f: DiffFormat) => void] {
  const format = useSyncExternalStore(subscribeFormat, readFormat, () => "side-by-side" as DiffFormat);
  return [format, writeFormat];
}

/**
 * Parses a unified diff for diff2html, marking a file diffed against /dev/null as added or
 * deleted (diff2html only recognises that from git's "new file mode" lines, and would otherwise
 * label a created file "renamed").
 */
function parseDiff(diff: string) {
  return parse(diff).map((file) => ({
    ...file,
    isNew: file.isNew || file.oldName === "/dev/null",
    isDeleted: file.isDeleted || file.newName === "/dev/null",
  }));
}

/**
 * Replaces every hidden character in the diff's line contents and file names by a labelled
 * <mark> (diff2html's own markup, such as the &nbsp; of a context line's prefix, is left alone).
 */
function markHiddenCharacters(root: HTMLElement): number {
  const nodes: Text[] = [];
  for (const container of root.querySelectorAll(".d2h-code-line-ctn, .d2h-file-name")) {
    const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      HIDDEN_CHARACTER.lastIndex = 0;
      if (HIDDEN_CHARACTER.test((n as Text).data)) nodes.push(n as Text);
    }
  }
  HIDDEN_CHARACTER.lastIndex = 0;
  for (const node of nodes) {
    const fragment = document.createDocumentFragment();
    let last = 0;
    for (const m of node.data.matchAll(HIDDEN_CHARACTER)) {
      if (m.index > last) fragment.append(node.data.slice(last, m.index));
      const { label, title } = describeHidden(m[0]);
      const mark = document.createElement("mark");
      mark.className = "ar-hidden-char";
      mark.title = title;
      mark.dataset.hiddenChar = title;
      mark.textContent = label;
      fragment.append(mark);
      last = m.index + m[0].length;
    }
    if (last < node.data.length) fragment.append(node.data.slice(last));
    node.replaceWith(fragment);
  }
  return nodes.length;
}

export function DiffView({ diff, title, testId = "diff" }: { diff: string; title?: React.ReactNode; testId?: string }) {
  const [format, setFormat] = useDiffFormat();
  const [forceLarge, setForceLarge] = useState(false);
  const target = useRef<HTMLDivElement>(null);
  const large = diff.length > LARGE_DIFF_CHARS && !forceLarge;
  // Side by side, a line wider than its column scrolls sideways: say so, and offer line by line.
  const [overflowing, setOverflowing] = useState(false);

  useEffect(() => {
    const el = target.current;
    if (!el || large) return;
    const ui = new Diff2HtmlUI(el, parseDiff(diff), {
      outputFormat: format,
      drawFileList: false,
      matching: "lines",
      highlight: true,
      synchronisedScroll: true,
      fileContentToggle: false,
      colorScheme: ColorSchemeType.AUTO,
      stickyFileHeaders: false,
    });
    ui.draw();
    markHiddenCharacters(el);
    setOverflowing([...el.querySelectorAll<HTMLElement>(".d2h-file-side-diff")].some((side) => side.scrollWidth > side.clientWidth + 1));
  }, [diff, format, large]);

  if (diff === "") return <p className="text-sm text-zinc-500">No changes: the content is identical.</p>;
  return (
    <div className="min-w-0" data-testid={testId}>
      <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
        <div className="min-w-0 text-sm">{title}</div>
        <div className="inline-flex overflow-hidden rounded-md border border-zinc-300 text-xs dark:border-zinc-700" role="group" aria-label="Diff layout">
          {(["side-by-side", "line-by-line"] as const).map((f) => (
            <button
              key={f}
              type="button"
              onClick={() => setFormat(f)}
              aria-pressed={format === f}
              className={`px-2.5 py-1 ${format === f ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "hover:bg-zinc-100 dark:hover:bg-zinc-800"}`}
            >
              {f === "side-by-side" ? "Side by side" : "Line by line"}
            </button>
          ))}
        </div>
      </div>
      {overflowing && format === "side-by-side" && !large && (
        <p className="mb-2 text-xs text-amber-800 dark:text-amber-200">
          Some lines are wider than their column: scroll sideways, or{" "}
          <button type="button" className="underline" onClick={() => setFormat("line-by-line")}>
            show line by line
          </button>{" "}
          to wrap them.
        </p>
      )}
      {large ? (
        <div className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm dark:border-amber-800 dark:bg-amber-950">
          This diff is {(diff.length / 1_000_000).toFixed(1)} million characters long; drawing it may take a while.{" "}
          <button type="button" className={BUTTON.small} onClick={() => setForceLarge(true)}>
            Draw it
          </button>
        </div>
      ) : (
        <div ref={target} className="ar-diff overflow-x-auto" />
      )}
    </div>
  );
}
