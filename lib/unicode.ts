/**
 * Cutting JavaScript strings (UTF-16 code units) without splitting a character. Pure: no Node
 * APIs, so client components may use it too.
 */

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * `text.slice(start, end)` with both edges moved inward so that neither splits a surrogate pair:
 * a start on the second half of a pair moves one unit right, an end just after the first half of
 * a pair moves one unit left. The result is at most `end - start` code units long and never
 * begins with a low surrogate or ends with a high surrogate.
 *
 * @param start index in code units (default 0); clamped to the string.
 * @param end index in code units (default `text.length`); clamped to the string.
 */
export function sliceCodePoints(text: string, start = 0, end = text.length): string {
  let a = Math.max(0, Math.min(start, text.length));
  let b = Math.max(a, Math.min(end, text.length));
  if (a > 0 && a < b && isLowSurrogate(text.charCodeAt(a))) a++;
  if (b > a && isHighSurrogate(text.charCodeAt(b - 1))) b--;
  return text.slice(a, b);
}
