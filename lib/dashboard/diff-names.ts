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
