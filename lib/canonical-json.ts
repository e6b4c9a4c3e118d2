/**
 * Deterministic JSON: object keys sorted (recursively), no whitespace, `undefined` members
 * dropped, Dates as ISO strings. Used where bytes are hashed (the event chain), following the
 * idea of RFC 8785 (JCS) for key order; numbers and strings use JSON.stringify's forms.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
