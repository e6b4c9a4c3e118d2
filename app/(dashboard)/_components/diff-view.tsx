"use client";

import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import { parse } from "diff2html/lib-esm/diff2html";
import { ColorSchemeType } from "diff2html/lib-esm/types";
import { Diff2HtmlUI } from "diff2html/lib-esm/ui/js/diff2html-ui-slim";
import { readableDiffName, withFileHeaders } from "@/lib/dashboard/diff-names";
import { describeHidden, HIDDEN_CHARACTER } from "@/lib/dashboard/reveal";
import { BUTTON } from "./page-parts";

/**
 * A unified diff drawn by diff2html with syntax colours (highlight.js through diff2html's slim
 * UI): line by line (unified) by default, side by side on request where the screen is wide
 * enough (the choice is remembered in localStorage). Long lines wrap, file names show their real
 * (non-ASCII) spelling, and invisible, bidirectional and control characters are marked, so
 * nothing that will be written is out of sight. Very large diffs wait for a click before drawing.
 */

export type DiffFormat = "side-by-side" | "line-by-line";

const STORAGE_KEY = "agent-reach:diff-format";
/** Above this many characters the diff is drawn only on request (drawing can take seconds). */
const LARGE_DIFF_CHARS = 1_000_000;
const listeners = new Set<() => void>();
/** Narrowest window (px) where side by side is offered: below it two columns cut every line. */
export const SIDE_BY_SIDE_MIN_WIDTH = 1024;
function wideEnough(): boolean {
  return window.matchMedia(`(min-width: ${SIDE_BY_SIDE_MIN_WIDTH}px)`).matches;
}
/** The stored choice where the window is wide enough for it; line by line (unified) otherwise. */
function readFormat(): DiffFormat {
  const stored = localStorage.getItem(STORAGE_KEY);
  return stored === "side-by-side" && wideEnough() ? "side-by-side" : "line-by-line";
}
function writeFormat(format: DiffFormat) {
  localStorage.setItem(STORAGE_KEY, format);
  listeners.forEach((l) => l());
}
function subscribeFormat(listener: () => void) {
  listeners.add(listener);
  window.addEventListener("resize", listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("resize", listener);
  };
}

/** The reviewer's diff layout, shared by every diff on the page. */
export function useDiffFormat(): [DiffFormat, (f: DiffFormat) => void] {
  const format = useSyncExternalStore(subscribeFormat, readFormat, () => "line-by-line" as DiffFormat);
  return [format, writeFormat];
}

/**
 * Parses a unified diff for diff2html, marking a file diffed against /dev/null as added or
 * deleted (diff2html only recognises that from git's "new file mode" lines, and would otherwise
 * label a created file "renamed").
 */
function parseDiff(diff: string) {
  return parse(withFileHeaders(diff)).map((file) => ({
    ...file,
    oldName: readableDiffName(file.oldName),
    newName: readableDiffName(file.newName),
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

/**
 * @param created the diff is of a file that does not exist yet: an empty diff then means "creates
 *   an empty file", which is a change, never "no changes"
 */
export function DiffView({ diff, title, testId = "diff", created = false }: { diff: string; title?: React.ReactNode; testId?: string; created?: boolean }) {
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

  if (diff === "" && created)
    return (
      <p className="rounded-md border border-emerald-400 bg-emerald-50 p-2 text-sm text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-50" data-testid={testId} data-empty-file="true">
        Creates a new, empty file (0 bytes). There are no lines to show, but the file will exist afterwards.
      </p>
    );
  if (diff === "") return <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid={testId}>No changes: the content is identical.</p>;
  return (
    <div className="min-w-0" data-testid={testId}>
      <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
        <div className="min-w-0 text-sm">{title}</div>
        <div className="inline-flex overflow-hidden rounded-md border border-zinc-300 text-xs dark:border-zinc-700" role="group" aria-label="Diff layout">
          {(["line-by-line", "side-by-side"] as const).map((f) => (
            <button
              key={f}
              type="button"
              onClick={() => setFormat(f)}
              aria-pressed={format === f}
              className={`ar-diff-layout px-2.5 py-1 ${f === "side-by-side" ? "ar-wide-only" : ""} ${format === f ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "hover:bg-zinc-100 dark:hover:bg-zinc-800"}`}
            >
              {f === "side-by-side" ? "Side by side" : "Unified"}
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
