/**
 * The one line-ending detector, for file contents (lib/workspace/text.ts) and for text a browser
 * text box hands back (lib/dashboard/edit-text.ts). Pure: no Node APIs, so client components may
 * use it too.
 */

/** Line-ending style of a text. */
export type Eol = "lf" | "crlf" | "mixed" | "none";

/**
 * Line-ending style of `text`: "crlf" when every "\n" follows a "\r", "lf" when none does,
 * "mixed" when both occur, "none" without any "\n".
 *
 * @param options.loneCr count a "\r" not followed by "\n" as a line break of its own (a text box
 *   turns it into "\n"): any such break makes the style "mixed". Default false: in a file a lone
 *   "\r" is just a character.
 */
export function detectEol(text: string, options: { loneCr?: boolean } = {}): Eol {
  if (options.loneCr && hasLoneCr(text)) return "mixed";
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
    if (crlf > 0 && lf > 0) return "mixed";
  }
  if (crlf > 0) return "crlf";
  return lf > 0 ? "lf" : "none";
}

function hasLoneCr(text: string): boolean {
  for (let i = text.indexOf("\r"); i !== -1; i = text.indexOf("\r", i + 1)) {
    if (text.charCodeAt(i + 1) !== 10) return true;
  }
  return false;
}
