/**
 * Makes characters a reviewer cannot see visible: control characters, bidirectional overrides
 * and isolates (the "Trojan Source" class, CVE-2021-42574), zero-width and other invisible
 * characters, Unicode tag characters (ASCII smuggling) and unusual spaces that look like a plain
 * space but are not one to a shell. Pure and dependency-free, so both server and client
 * components use it, so invisible, bidirectional and control characters are made visible.
 *
 * Tab and line feed stay as they are: they render as whitespace a reader can see.
 */

/** Every character revealed, as one global, Unicode-aware pattern. */
export const HIDDEN_CHARACTER = new RegExp(
  [
    "[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]", // C0 (but \t \n) and C1 controls, DEL; \r included
    "[\\u00a0\\u00ad\\u034f\\u061c\\u115f\\u1160\\u1680\\u17b4\\u17b5\\u180e]", // NBSP, soft hyphen, CGJ, ALM, fillers
    "[\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f]", // odd spaces, zero-width, LRM/RLM, separators, bidi embeddings/overrides/isolates
    "[\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb]", // ideographic space, fillers, variation selectors, BOM, annotations
    "[\\u{e0000}-\\u{e007f}\\u{e0100}-\\u{e01ef}]", // tag characters, variation selectors supplement
  ].join("|"),
  "gu",
);

/** Short names of the characters reviewers most often meet; others show their code point only. */
const NAMES: Record<number, string> = {
  0x00: "NUL",
  0x07: "BEL",
  0x08: "BS",
  0x0b: "VT",
  0x0c: "FF",
  0x0d: "CR",
  0x1b: "ESC",
  0x7f: "DEL",
  0xa0: "NBSP",
  0xad: "SHY",
  0x061c: "ALM",
  0x200b: "ZWSP",
  0x200c: "ZWNJ",
  0x200d: "ZWJ",
  0x200e: "LRM",
  0x200f: "RLM",
  0x2028: "LSEP",
  0x2029: "PSEP",
  0x202a: "LRE",
  0x202b: "RLE",
  0x202c: "PDF",
  0x202d: "LRO",
  0x202e: "RLO",
  0x2060: "WJ",
  0x2066: "LRI",
  0x2067: "RLI",
  0x2068: "FSI",
  0x2069: "PDI",
  0x3000: "IDSP",
  0xfeff: "BOM",
};

/** A run of text: either shown as is, or a hidden character shown by its label. */
export type RevealPart = { kind: "text"; text: string } | { kind: "hidden"; char: string; label: string; title: string };

/** "U+202E" for a code point (at least 4 hex digits, upper case). */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * The label and tooltip of one hidden character.
 * @returns label like "RLO" (or "U+E0041" when unnamed) and a title like "U+202E RLO".
 */
export function describeHidden(char: string): { label: string; title: string } {
  const cp = char.codePointAt(0)!;
  const name = NAMES[cp];
  const code = codePointLabel(cp);
  return { label: name ?? code, title: name ? `${code} ${name}` : code };
}

/**
 * Splits `text` into visible runs and hidden characters (each hidden character is its own part).
 * Concatenating every part's text (`text` or `char`) gives back `text` exactly.
 */
export function revealParts(text: string): RevealPart[] {
  const parts: RevealPart[] = [];
  let last = 0;
  for (const match of text.matchAll(HIDDEN_CHARACTER)) {
    const index = match.index;
    if (index > last) parts.push({ kind: "text", text: text.slice(last, index) });
    parts.push({ kind: "hidden", char: match[0], ...describeHidden(match[0]) });
    last = index + match[0].length;
  }
  if (last < text.length) parts.push({ kind: "text", text: text.slice(last) });
  return parts;
}

/** `text` with every hidden character replaced by `⟨label⟩` (for plain-text places such as titles). */
export function revealPlain(text: string): string {
  return text.replace(HIDDEN_CHARACTER, (c) => `⟨${describeHidden(c).label}⟩`);
}
