import { ToolError } from "@/lib/errors";
import { applyEol, stripLeadingBom, type EditableText, type Splice } from "@/lib/workspace/text";

/**
 * Exact string replacement inside a file's text, as edit_file does it (field cases C06, C07, C08,
 * C17):
 * - `old_string` must occur exactly once, counting overlapping occurrences ("foo\nfoo\n" occurs
 *   twice in "foo\nfoo\nfoo\n"), unless `replace_all`;
 * - matching is exact; only when nothing matches exactly is a line-ending-insensitive match tried,
 *   so an LF `old_string` copied from read_file matches in a CRLF file (C08);
 * - the replacement takes the line endings of the place it goes to (CRLF in a CRLF file, no
 *   "\r\r\n"), and a U+FEFF at the start of either string is dropped in a file with a BOM (C07);
 * - the text may be a byte string (invalid UTF-8): the edit is then a byte-exact splice (C06).
 */

export interface EditRequest {
  /** Workspace-relative path, for messages. */
  path: string;
  oldString: string;
  newString: string;
  replaceAll: boolean;
}

export interface EditOutcome {
  /** The edited text (same domain as `doc.text`). */
  text: string;
  /** Number of replacements made. */
  replacements: number;
  /** 1-based line numbers where the replaced occurrences started (the first 100). */
  lines: number[];
  /** The replacements in `doc.text` coordinates, in order (for `doc.spliceBytes`). */
  splices: Splice[];
}

/** A match in the original text: [start, end) in UTF-16 units (bytes in byte mode). */
interface Span {
  start: number;
  end: number;
}

/** How many starting lines a result or an edit_ambiguous error lists at most (counts are always exact). */
const MAX_LISTED_LINES = 100;
/** Bounds of the closest-line search of edit_no_match. */
const MAX_SCANNED_LINES = 200_000;
const MAX_COMPARED_CHARS = 500;

/**
 * Applies one edit to `doc.text`.
 *
 * @throws ToolError `edit_empty_old_string` (old_string is empty, or only a BOM);
 *   `edit_no_match` with detail {path, closest_line (1-based) | null, closest_text | null};
 *   `edit_ambiguous` with detail {path, count, lines (1-based start lines, first 100)}
 */
export function applyEdit(doc: EditableText, req: EditRequest): EditOutcome {
  const oldString = doc.profile.bom ? stripLeadingBom(req.oldString) : req.oldString;
  const newString = doc.profile.bom ? stripLeadingBom(req.newString) : req.newString;
  if (oldString === "") throw emptyOldString();
  const spans = findSpans(doc.text, doc.fromAgent(oldString));
  if (spans.length === 0) throw noMatch(doc, req.path, oldString);
  const lines = startLines(doc.text, spans);
  if (spans.length > 1 && !req.replaceAll) {
    throw new ToolError(
      "edit_ambiguous",
      `old_string occurs ${spans.length} times in ${req.path} (starting on lines ${summarizeLines(lines)}). ` +
        "Include more surrounding lines in old_string so it matches exactly once, or pass replace_all: true to replace every occurrence.",
      { path: req.path, count: spans.length, lines: lines.slice(0, MAX_LISTED_LINES) },
    );
  }
  const chosen = nonOverlapping(spans);
  const replacement = doc.fromAgent(newString);
  const parts: string[] = [];
  const splices: Splice[] = [];
  let at = 0;
  for (const i of chosen) {
    const text = withLineEndingsOf(doc.text, spans[i], replacement, doc.profile.eol);
    parts.push(doc.text.slice(at, spans[i].start), text);
    splices.push({ start: spans[i].start, end: spans[i].end, text });
    at = spans[i].end;
  }
  parts.push(doc.text.slice(at));
  return { text: parts.join(""), replacements: chosen.length, lines: chosen.slice(0, MAX_LISTED_LINES).map((i) => lines[i]), splices };
}

/** @returns ToolError `edit_empty_old_string` */
export function emptyOldString(): ToolError {
  return new ToolError(
    "edit_empty_old_string",
    "old_string is empty. To insert text, include a nearby existing line in old_string and repeat it in new_string; to create or replace a whole file use write_file.",
  );
}

/**
 * Every occurrence of `needle` in `text`, overlapping ones included. Exact occurrences win; when
 * there is none and the needle spans lines, occurrences with any line ending ("\n" ⇄ "\r\n", in
 * the needle and in the text).
 */
function findSpans(text: string, needle: string): Span[] {
  const exact = occurrences(text, needle).map((start) => ({ start, end: start + needle.length }));
  const lfNeedle = applyEol(needle, "lf");
  const textHasCrlf = text.includes("\r\n");
  if (exact.length > 0 || !lfNeedle.includes("\n") || (lfNeedle === needle && !textHasCrlf)) return exact;
  const view = textHasCrlf ? lfView(text) : { text, toOriginal: (i: number) => i };
  return occurrences(view.text, lfNeedle).map((start) => ({ start: view.toOriginal(start), end: view.toOriginal(start + lfNeedle.length) }));
}

function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) found.push(i);
  return found;
}

/**
 * `text` with every "\r\n" as "\n", and the map from an index of that view back to the original
 * (an index on a "\n" that was "\r\n" maps to its "\r", so a span keeps whole line breaks).
 */
function lfView(text: string): { text: string; toOriginal(i: number): number } {
  const crlfAt: number[] = [];
  const view = text.replace(/\r\n/g, (_m, offset: number) => {
    crlfAt.push(offset - crlfAt.length);
    return "\n";
  });
  return {
    text: view,
    toOriginal(i) {
      let lo = 0;
      let hi = crlfAt.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (crlfAt[mid] < i) lo = mid + 1;
        else hi = mid;
      }
      return i + lo;
    },
  };
}

/** 1-based line of each span's start (spans sorted by start); one pass over the text. */
function startLines(text: string, spans: Span[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let nextNl = text.indexOf("\n");
  for (const span of spans) {
    while (nextNl !== -1 && nextNl < span.start) {
      line++;
      nextNl = text.indexOf("\n", nextNl + 1);
    }
    lines.push(line);
  }
  return lines;
}

/** Indexes of the leftmost-first occurrences that do not overlap (what replace_all replaces). */
function nonOverlapping(spans: Span[]): number[] {
  const chosen: number[] = [];
  let end = -1;
  spans.forEach((span, i) => {
    if (span.start >= end) {
      chosen.push(i);
      end = span.end;
    }
  });
  return chosen;
}

/**
 * The replacement's line breaks in the style of the file: CRLF or LF for a uniform file; in a
 * mixed file, the style of the replaced span, else of the line the span ends on; as given in a
 * file without line breaks.
 */
function withLineEndingsOf(text: string, span: Span, replacement: string, fileEol: string): string {
  if (!replacement.includes("\n")) return replacement;
  if (fileEol === "crlf" || fileEol === "lf") return applyEol(replacement, fileEol);
  if (fileEol === "none") return replacement;
  const replaced = text.slice(span.start, span.end);
  if (replaced.includes("\n")) return applyEol(replacement, replaced.includes("\r\n") ? "crlf" : "lf");
  const nl = text.indexOf("\n", span.end);
  if (nl === -1) return replacement;
  return applyEol(replacement, nl > 0 && text[nl - 1] === "\r" ? "crlf" : "lf");
}

function summarizeLines(lines: number[]): string {
  const shown = lines.slice(0, 10).join(", ");
  return lines.length > 10 ? `${shown}, …` : shown;
}

function noMatch(doc: EditableText, path: string, oldString: string): ToolError {
  const closest = closestLine(doc, oldString);
  let message = `old_string was not found in ${path}.`;
  if (closest) message += ` The closest line is line ${closest.line}: ${JSON.stringify(closest.text)}.`;
  message += ` Call read_file on ${path} to see its current content, then copy old_string exactly, including whitespace and indentation.`;
  if (doc.byteMode && oldString.includes("\ufffd")) {
    message +=
      " The file holds bytes that are not valid UTF-8, which read_file shows as U+FFFD; they cannot be matched, so choose an old_string that does not include them.";
  }
  return new ToolError("edit_no_match", message, { path, closest_line: closest?.line ?? null, closest_text: closest?.text ?? null });
}

/**
 * The file line most similar to the first non-blank line of `oldString` (Sørensen-Dice similarity
 * of character bigrams of the trimmed lines); null when `oldString` is blank or nothing shares a
 * bigram.
 */
function closestLine(doc: EditableText, oldString: string): { line: number; text: string } | null {
  const wanted = oldString.split("\n").map((l) => l.trim()).find((l) => l !== "");
  if (wanted === undefined) return null;
  const wantedBigrams = bigrams(wanted.slice(0, MAX_COMPARED_CHARS));
  let best: { line: number; text: string; score: number } | null = null;
  let start = 0;
  for (let n = 1; n <= MAX_SCANNED_LINES && start <= doc.text.length; n++) {
    const nl = doc.text.indexOf("\n", start);
    const end = nl === -1 ? doc.text.length : nl;
    const text = doc.toDisplay(doc.text.slice(start, Math.min(end, start + MAX_COMPARED_CHARS * 4))).replace(/\r$/, "");
    const score = dice(wantedBigrams, bigrams(text.trim().slice(0, MAX_COMPARED_CHARS)));
    if (score > (best?.score ?? 0)) best = { line: n, text: text.length > 200 ? `${text.slice(0, 200)}…` : text, score };
    if (nl === -1) break;
    start = nl + 1;
  }
  return best && { line: best.line, text: best.text };
}

function bigrams(s: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (s.length === 1) counts.set(s, 1);
  for (let i = 0; i + 1 < s.length; i++) {
    const bg = s.slice(i, i + 2);
    counts.set(bg, (counts.get(bg) ?? 0) + 1);
  }
  return counts;
}

function dice(a: Map<string, number>, b: Map<string, number>): number {
  let shared = 0;
  let total = 0;
  for (const [bg, n] of a) {
    total += n;
    shared += Math.min(n, b.get(bg) ?? 0);
  }
  for (const n of b.values()) total += n;
  return total === 0 ? 0 : (2 * shared) / total;
}
