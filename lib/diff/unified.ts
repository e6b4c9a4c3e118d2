import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch, type StructuredPatchHunk } from "diff";
import { isUnicode, roundTrips } from "@/lib/workspace/encoding";
import { applyEol, decodeForDisplay, profileText, type Eol, type TextProfile } from "@/lib/workspace/text";

/**
 * Unified diffs of a file's bytes before and after a write, for the tool result, the audit log and
 * the approval view (a unified diff and its counts travel with the result). Built on the `diff` package
 * (jsdiff `structuredPatch` / `formatPatch`).
 *
 * Changes a line diff cannot show well are reported as notes instead of as whole-file changes
 * (C07, C08): a line-ending change between uniform styles (LF ⇄ CRLF) is diffed on normalized
 * lines plus a note, a BOM added or removed and an encoding change are notes, binary content is a
 * note, and bytes that are not valid UTF-8 are shown as U+FFFD with a note (the file keeps them).
 * Text in a legacy encoding (GBK, Shift_JIS, windows-1252, …) is diffed decoded, and a note names
 * the encoding; the bytes themselves stay in the file and in its backups.
 */

/** How to decode the two sides of a diff. */
export interface DiffEncodingOptions {
  /** The encoding the writer used: each side that decodes exactly in it is shown in it. */
  encoding?: string | null;
  /** The workspace's legacy encoding (configuration), for sides decided by detection. */
  legacy?: string | null;
}

export interface FileDiff {
  /**
   * Unified diff (`--- a/<path>`, `+++ b/<path>`, `/dev/null` for a new file, 3 lines of context);
   * "" when the text did not change. For binary content: a git-style "Binary files … differ" line.
   */
  diff: string;
  /** Added / removed lines of the diff. */
  additions: number;
  deletions: number;
  /** What the line diff does not show: line endings, BOM, encoding, binary, undecodable bytes. */
  notes: string[];
}

/** Beyond this many changed lines the diff is one hunk replacing every line (bounds CPU time). */
const MAX_EDIT_LENGTH = 1000;
const CONTEXT_LINES = 3;

/**
 * Diffs a file's old and new bytes.
 *
 * @param relPath workspace-relative path, "/"-separated (used in the file headers)
 * @param before the old bytes, or null when the file is being created
 * @param after the new bytes
 * @param opts encodings to decode with (default: each side's own detection)
 */
export function diffFileBytes(relPath: string, before: Buffer | null, after: Buffer, opts: DiffEncodingOptions = {}): FileDiff {
  const oldName = before === null ? "/dev/null" : `a/${relPath}`;
  const newName = `b/${relPath}`;
  if (before !== null && before.equals(after)) return { diff: "", additions: 0, deletions: 0, notes: [] };
  const a = before === null ? null : displayProfile(before, opts);
  const b = displayProfile(after, opts);
  if (!lineDiffable(a) || !lineDiffable(b)) return binaryDiff(relPath, oldName, newName, before, after);

  const notes = [...encodingNotes(a, b), ...decodedNotes(a, b), ...eolNotes(a, b), ...invalidUtf8Notes(a, b)];
  let oldText = before === null || a === null ? "" : decodeForDisplay(before, a);
  let newText = decodeForDisplay(after, b);
  if (uniformEol(a?.eol ?? "none") && uniformEol(b.eol)) {
    oldText = applyEol(oldText, "lf");
    newText = applyEol(newText, "lf");
  }
  return { ...diffTexts(oldName, newName, oldText, newText), notes };
}

/**
 * Line diff of two texts as a unified diff with counts. One hunk replacing every line when either
 * side is empty or more than MAX_EDIT_LENGTH lines changed (bounds CPU time on large rewrites).
 *
 * @param oldName, newName file header names (e.g. "a/src/x.ts", "b/src/x.ts", "/dev/null")
 */
export function diffTexts(oldName: string, newName: string, oldText: string, newText: string): Omit<FileDiff, "notes"> {
  if (oldText === newText) return { diff: "", additions: 0, deletions: 0 };
  const patch =
    (oldText !== "" &&
      newText !== "" &&
      structuredPatch(oldName, newName, oldText, newText, undefined, undefined, { context: CONTEXT_LINES, maxEditLength: MAX_EDIT_LENGTH })) ||
    replaceAllPatch(oldName, newName, oldText, newText);
  let additions = 0;
  let deletions = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) additions++;
      else if (line.startsWith("-")) deletions++;
    }
  }
  return { diff: formatPatch(patch, FILE_HEADERS_ONLY), additions, deletions };
}

/**
 * Cuts a diff to at most `maxChars` characters at a line boundary, for results returned to an agent
 * (the approval view keeps the whole diff).
 *
 * @returns the (possibly) shortened diff and whether anything was cut
 */
export function capDiff(diff: string, maxChars: number): { diff: string; truncated: boolean } {
  if (diff.length <= maxChars) return { diff, truncated: false };
  const cut = diff.lastIndexOf("\n", maxChars - 1);
  return { diff: diff.slice(0, cut + 1), truncated: true };
}

/**
 * The profile a side of a diff is shown with: its own when a BOM or valid UTF-8 decides it;
 * otherwise the writer's encoding when the bytes decode exactly in it; else its own detection.
 */
function displayProfile(bytes: Buffer, opts: DiffEncodingOptions): TextProfile {
  const legacy = opts.legacy ?? null;
  const own = profileText(bytes, { legacy });
  const encoding = opts.encoding ?? null;
  if (!encoding || own.binary || own.source === "bom" || own.source === "utf8" || own.encoding === encoding) return own;
  if (!roundTrips(bytes.subarray(own.bomLength), encoding)) return own;
  try {
    return profileText(bytes, { requested: encoding, legacy });
  } catch {
    return own;
  }
}

/** Names the legacy encoding the diff was decoded from (agents and reviewers see text, the file holds bytes). */
function decodedNotes(a: TextProfile | null, b: TextProfile): string[] {
  const legacy = [a, b].filter((p): p is TextProfile => p !== null && p.valid && !isUnicode(p.encoding));
  if (legacy.length === 0) return [];
  const names = [...new Set(legacy.map((p) => p.encoding))].join(" and ");
  const guessed = legacy.some((p) => !p.sure) ? ` (a guess: confidence ${Math.min(...legacy.map((p) => p.confidence)).toFixed(2)})` : "";
  return [`shown decoded from ${names}${guessed}; the file keeps its ${names} bytes`];
}

function lineDiffable(p: TextProfile | null): boolean {
  return p === null || (!p.binary && (p.valid || !isUnicode(p.encoding) || p.encoding === "utf-8"));
}

function uniformEol(eol: Eol): boolean {
  return eol !== "mixed";
}

function binaryDiff(relPath: string, oldName: string, newName: string, before: Buffer | null, after: Buffer): FileDiff {
  const size = (b: Buffer | null) => (b === null ? "none" : `${b.length} bytes`);
  return {
    diff: `diff --git a/${relPath} b/${relPath}\nBinary files ${oldName} and ${newName} differ\n`,
    additions: 0,
    deletions: 0,
    notes: [`binary or undecodable content, no line diff: ${size(before)} → ${size(after)}`],
  };
}

function encodingLabel(p: TextProfile): string {
  return p.bom ? `${p.encoding} with BOM` : p.encoding;
}

function encodingNotes(a: TextProfile | null, b: TextProfile): string[] {
  if (a === null || encodingLabel(a) === encodingLabel(b)) return [];
  if (a.encoding === b.encoding) return [b.bom ? "byte order mark (BOM) added" : "byte order mark (BOM) removed"];
  return [`encoding changes: ${encodingLabel(a)} → ${encodingLabel(b)}`];
}

function eolNotes(a: TextProfile | null, b: TextProfile): string[] {
  if (a === null || a.eol === b.eol || a.eol === "none" || b.eol === "none") return [];
  const label = (e: Eol) => (e === "mixed" ? "mixed" : e.toUpperCase());
  const notes = [`line endings change: ${label(a.eol)} → ${label(b.eol)}`];
  if (a.eol === "mixed" || b.eol === "mixed") notes.push("lines whose only change is their line ending are shown as changed");
  return notes;
}

function invalidUtf8Notes(a: TextProfile | null, b: TextProfile): string[] {
  const oldBad = a !== null && !a.valid;
  const newBad = !b.valid;
  if (!oldBad && !newBad) return [];
  const which = oldBad && newBad ? "old and new content have" : oldBad ? "old content has" : "new content has";
  return [`${which} bytes that are not valid UTF-8; this diff shows them as U+FFFD (the file holds the original bytes)`];
}

/** A patch with one hunk removing every old line and adding every new line. */
function replaceAllPatch(oldName: string, newName: string, oldText: string, newText: string): StructuredPatch {
  const oldLines = patchLines("-", oldText);
  const newLines = patchLines("+", newText);
  const count = (lines: string[]) => lines.filter((l) => !l.startsWith("\\")).length;
  const hunk: StructuredPatchHunk = {
    // jsdiff's convention: an empty range starts at 1 and is printed as "-0,0".
    oldStart: 1,
    oldLines: count(oldLines),
    newStart: 1,
    newLines: count(newLines),
    lines: [...oldLines, ...newLines],
  };
  return { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks: [hunk] };
}

function patchLines(sign: "+" | "-", text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  const endsWithNewline = lines[lines.length - 1] === "";
  if (endsWithNewline) lines.pop();
  const out = lines.map((l) => sign + l);
  if (!endsWithNewline) out.push("\\ No newline at end of file");
  return out;
}
