import fs from "node:fs/promises";
import path from "node:path";
import type { Result } from "@/lib/result";

/**
 * Pathname expansion as bash does it by default (bash(1) "Pathname Expansion"; `dotglob`,
 * `nullglob`, `failglob`, `globstar`, `extglob`, `nocaseglob` off, `globskipdots` on), so the
 * policy checks the files a wildcard really names: `cat *` with a symlink `link -> /etc/passwd`
 * in the directory reads /etc/passwd, and `cat .e*` reads `.env`.
 *
 * - `*` matches any string, `?` one character, `[...]` one character of the set (`[!...]` and
 *   `[^...]` negate, ranges, `[:class:]`); a backslash quotes the next character. Characters
 *   that were quoted in the command arrive backslash-escaped (shell-words.ts `pattern`).
 * - A name starting with `.` matches only when the pattern's segment starts with a literal `.`;
 *   `.` and `..` never match.
 * - `**` is `*` (globstar off). Slashes are never matched by a wildcard.
 * - Only existing paths are results, sorted bytewise; no match leaves the word as written
 *   (with the quoting removed).
 * The expansion is done when the policy decides; files that appear or vanish before the command
 * runs can change it (see docs/SECURITY.md).
 */

/** Names listed per directory and matches per word before the expansion gives up (then the command asks). */
const MAX_ENTRIES = 20_000;
const MAX_MATCHES = 2_000;

/** The words a pattern becomes, or why they cannot be known. */
export type GlobResult = Result<{ words: string[]; matched: boolean }, { why: string }>;

/** True when the (escaped) pattern holds an unquoted wildcard. */
export function hasWildcard(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") i++;
    else if (c === "*" || c === "?" || (c === "[" && bracketEnd(pattern, i) !== -1)) return true;
  }
  return false;
}

/** Removes the backslash quoting of an escaped pattern. */
export function unescapePattern(pattern: string): string {
  return pattern.replace(/\\(.)/gs, "$1");
}

/**
 * Expands `pattern` (escaped as described above) from the directory `cwd`.
 * @returns the words (relative patterns give relative words), or `ok: false` when the directory
 *   listing is too large to expand before the command runs
 */
export async function expandGlob(pattern: string, cwd: string): Promise<GlobResult> {
  if (!hasWildcard(pattern)) return { ok: true, words: [unescapePattern(pattern)], matched: false };
  const absolute = pattern.startsWith("/");
  const segments = splitSegments(pattern);
  // Each candidate: the word as bash prints it, and the absolute path for lookups.
  let current: Array<{ word: string; abs: string }> = [{ word: absolute ? "/" : "", abs: absolute ? "/" : cwd }];
  const join = (word: string, name: string) => (word === "" ? name : word.endsWith("/") ? `${word}${name}` : `${word}/${name}`);
  for (let s = 0; s < segments.length; s++) {
    const seg = segments[s];
    if (seg === "") {
      // `a//b`: an empty segment keeps the slash.
      current = current.map((c) => ({ word: c.word + (c.word.endsWith("/") ? "" : "/"), abs: c.abs }));
      continue;
    }
    const last = s === segments.length - 1;
    const next: Array<{ word: string; abs: string }> = [];
    if (!hasWildcard(seg)) {
      const name = unescapePattern(seg);
      for (const c of current) {
        const abs = path.join(c.abs, name);
        const st = last ? await fs.lstat(abs).catch(() => null) : await fs.stat(abs).catch(() => null);
        if (st && (last || st.isDirectory())) next.push({ word: join(c.word, name), abs });
      }
    } else {
      const re = segmentRegex(seg);
      const explicitDot = seg.startsWith(".") || seg.startsWith("\\.");
      for (const c of current) {
        let names: string[];
        try {
          names = await fs.readdir(c.abs);
        } catch {
          continue;
        }
        if (names.length > MAX_ENTRIES) return { ok: false, why: `${c.abs} holds too many entries to expand ${unescapePattern(pattern)} before the command runs` };
        names.sort(bytewise);
        for (const name of names) {
          if (name === "." || name === "..") continue;
          if (name.startsWith(".") && !explicitDot) continue;
          if (!re.test(name)) continue;
          const abs = path.join(c.abs, name);
          if (!last && !(await fs.stat(abs).catch(() => null))?.isDirectory()) continue;
          next.push({ word: join(c.word, name), abs });
          if (next.length > MAX_MATCHES) return { ok: false, why: `${unescapePattern(pattern)} matches too many files to check before the command runs` };
        }
      }
    }
    current = next;
    if (current.length === 0) break;
  }
  if (current.length === 0) return { ok: true, words: [unescapePattern(pattern)], matched: false };
  return { ok: true, words: current.map((c) => c.word), matched: true };
}

function bytewise(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}

/** Splits at unescaped slashes (a leading slash gives a first empty segment, dropped). */
function splitSegments(pattern: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length) {
      cur += c + pattern[++i];
    } else if (c === "/") {
      out.push(cur);
      cur = "";
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return pattern.startsWith("/") ? out.slice(1) : out;
}

/** Index of the `]` closing the bracket expression opened at `start`, or -1 (then `[` is literal). */
function bracketEnd(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === "!" || p[i] === "^") i++;
  if (p[i] === "]") i++;
  for (; i < p.length; i++) {
    if (p[i] === "\\") i++;
    else if (p[i] === "[" && p[i + 1] === ":") {
      const end = p.indexOf(":]", i + 2);
      if (end !== -1) i = end + 1;
    } else if (p[i] === "]") return i;
    else if (p[i] === "/") return -1;
  }
  return -1;
}

const CLASSES: Record<string, string> = {
  alpha: "A-Za-z", digit: "0-9", alnum: "A-Za-z0-9", upper: "A-Z", lower: "a-z", space: " \\t\\n\\r\\f\\v",
  blank: " \\t", punct: "!-\\/:-@\\[-`{-~", print: " -~", graph: "!-~", cntrl: "\\x00-\\x1f\\x7f", xdigit: "0-9A-Fa-f", word: "A-Za-z0-9_",
};

const reEscape = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
const classEscape = (c: string) => c.replace(/[\\\]^[-]/g, "\\$&");

/** The regular expression for one pattern segment (whole-name match). */
function segmentRegex(seg: string): RegExp {
  let re = "";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i];
    if (c === "\\" && i + 1 < seg.length) {
      re += reEscape(seg[++i]);
    } else if (c === "*") {
      re += "[^/]*";
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[" && bracketEnd(seg, i) !== -1) {
      const end = bracketEnd(seg, i);
      let j = i + 1;
      let negate = false;
      if (seg[j] === "!" || seg[j] === "^") {
        negate = true;
        j++;
      }
      let set = "";
      for (; j < end; j++) {
        if (seg[j] === "[" && seg[j + 1] === ":") {
          const close = seg.indexOf(":]", j + 2);
          const name = seg.slice(j + 2, close);
          set += CLASSES[name] ?? "";
          j = close + 1;
        } else if (seg[j] === "\\") {
          set += classEscape(seg[++j]);
        } else if (seg[j] === "-" && set !== "" && j + 1 < end) {
          set += "-";
        } else {
          set += classEscape(seg[j]);
        }
      }
      re += set === "" ? (negate ? "[^/]" : "(?!)") : `[${negate ? "^/" : ""}${set}]`;
      i = end;
    } else {
      re += reEscape(c);
    }
  }
  return new RegExp(`^${re}$`, "su");
}
