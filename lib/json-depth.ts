/** Deepest nesting of arrays and objects accepted in tool arguments (JSON levels). */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` nests arrays/objects deeper than `max` levels. Iterative, so a hostile
 * 100,000-level value cannot overflow the stack while being measured.
 */
export function nestsDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
