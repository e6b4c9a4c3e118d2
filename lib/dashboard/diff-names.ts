/**
 * File names in unified diff headers as people read them. Git (and lib/diff/unified.ts after it)
 * writes a name with bytes outside printable ASCII as a C-style quoted string of octal escapes
 * ("caf\303\251.txt" for café.txt); diff2html shows that text as is. `readableDiffName` decodes the
 * escapes back to the UTF-8 name; control characters it decodes stay for the dashboard's
 * hidden-character markers to label.
 */

const SIMPLE: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };

/**
 * Decodes git's quoted-path escapes (`\ooo` octal bytes, `\t`, `\n`, `\"`, `\\`, …) in a diff
 * header name, already stripped of its surrounding quotes or not; invalid UTF-8 shows as U+FFFD.
 * A name without a backslash is returned unchanged.
 */
export function readableDiffName(name: string): string {
  const quoted = name.length >= 2 && name.startsWith('"') && name.endsWith('"');
  const inner = quoted ? name.slice(1, -1) : name;
  if (!inner.includes("\\")) return inner;
  const bytes: number[] = [];
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === "\\" && i + 1 < inner.length) {
      const octal = /^[0-3][0-7]{2}/.exec(inner.slice(i + 1, i + 4));
      if (octal) {
        bytes.push(parseInt(octal[0], 8));
        i += 3;
        continue;
      }
      const simple = SIMPLE[inner[i + 1]];
      if (simple !== undefined) {
        bytes.push(simple);
        i += 1;
        continue;
      }
    }
    bytes.push(...new TextEncoder().encode(c));
  }
  return new TextDecoder("utf-8").decode(new Uint8Array(bytes));
}

/**
 * A multi-file unified diff with a `diff --git a/… b/…` line before every file's `---`/`+++`
 * header that lacks one. The change sets' diffs mix git-style blocks (binary files: `diff --git`
 * then "Binary files … differ", no `---` lines) with plain unified diffs (`---`, `+++`, hunks);
 * diff2html, having opened a file at `diff --git`, reads the next file's `---`/`+++` as that
 * binary file's own header and draws them as its content. Hunk line counts are followed, so a
 * removed line that reads `-- x` (`--- x` in the diff) is never taken for a header.
 */
export function withFileHeaders(diff: string): string {
  const lines = diff.split("\n");
  const out: string[] = [];
  let inHunk = { old: 0, new: 0 };
  let headerOpen = false; // a `diff --git` line whose `---`/`+++` (if any) have not come yet
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (inHunk.old > 0 || inHunk.new > 0) {
      if (line.startsWith("-")) inHunk.old--;
      else if (line.startsWith("+")) inHunk.new--;
      else if (line.startsWith(" ") || line === "") {
        inHunk.old--;
        inHunk.new--;
      }
      out.push(line);
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      inHunk = { old: hunk[1] === undefined ? 1 : Number(hunk[1]), new: hunk[2] === undefined ? 1 : Number(hunk[2]) };
      headerOpen = false;
      out.push(line);
      continue;
    }
    if (line.startsWith("diff --git ")) headerOpen = true;
    else if (line.startsWith("Binary files ")) headerOpen = false;
    else if (line.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) {
      if (!headerOpen) {
        const a = line.slice(4).split("\t")[0];
        const b = lines[i + 1].slice(4).split("\t")[0];
        const path = a.startsWith("a/") ? a.slice(2) : b.startsWith("b/") ? b.slice(2) : b === "/dev/null" ? a : b;
        out.push(`diff --git a/${path} b/${path}`);
      }
      headerOpen = false;
    }
    out.push(line);
  }
  return out.join("\n");
}
