/**
 * Line endings across a browser text box. A <textarea> hands back its value with every CRLF and
 * lone CR turned into LF (HTML "API value" normalization), so a reviewer editing content that
 * uses CRLF would silently change every line ending. These helpers put CRLF back when the
 * original used it consistently and say when that is not possible. Pure (client and server).
 */

import { detectEol, type Eol } from "@/lib/workspace/line-endings";

/**
 * Line-break style of `text`: "crlf" when every break is CRLF, "lf" when every break is LF,
 * "mixed" otherwise (a lone CR counts as a break: the text box turns it into LF).
 */
export function lineBreakStyle(text: string): Eol {
  return detectEol(text, { loneCr: true });
}

/**
 * The text to submit for `edited` (a textarea value, LF only) given the `original` content:
 * CRLF line breaks when the original used only CRLF, else `edited` unchanged.
 */
export function restoreLineBreaks(original: string, edited: string): string {
  return lineBreakStyle(original) === "crlf" ? edited.replace(/\r?\n/g, "\r\n") : edited;
}

/** True when editing `original` in a text box loses carriage returns that cannot be put back. */
export function losesCarriageReturns(original: string): boolean {
  return lineBreakStyle(original) === "mixed";
}

/**
 * The first changed line (1-based, on the new side) of a unified diff, or 1 when it has none: where
 * the editor opens, so the reviewer starts at the change rather than at the top of the file.
 */
export function firstChangedLine(diff: string): number {
  let line = 0;
  let inHunk = false;
  for (const text of diff.split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (hunk) {
      line = Number(hunk[1]);
      inHunk = true;
      continue;
    }
    if (!inHunk) continue;
    if (text.startsWith("+") || text.startsWith("-")) return Math.max(1, line);
    if (text.startsWith(" ")) line++;
  }
  return 1;
}
