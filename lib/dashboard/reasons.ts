/**
 * Policy reasons for a reviewer, grouped: a command that touches 80 files gets one reason per
 * file from the policy (`write_in_workspace: src/a.json (rm; …)`); shown one by one they bury the
 * reasons that matter. Reasons of the form `label: subject (note)` that share label and note are
 * folded into one line naming the count and the first subjects; every other reason is kept as it
 * is, in its place (the first of a group holds the group's place).
 */

/** A reviewer-facing reason: the text, and how many policy reasons it stands for. */
export interface ReasonLine {
  text: string;
  count: number;
}

const SHAPED = /^([a-z_]+): (.+?)(?: \(([^()]*)\))?$/;

/**
 * Groups `reasons` (the verdict's, strongest first).
 * @param reasons the policy's reason strings
 * @param fold groups smaller than this stay as separate lines (default 4)
 * @param show how many subjects a folded line names (default 3)
 * @returns the lines in order; `count` > 1 for a folded group
 */
export function groupReasons(reasons: string[], fold = 4, show = 3): ReasonLine[] {
  const groups = new Map<string, { label: string; note: string | undefined; subjects: string[]; originals: string[] }>();
  const order: Array<string | { key: string }> = [];
  for (const reason of reasons) {
    const m = SHAPED.exec(reason);
    if (!m) {
      order.push(reason);
      continue;
    }
    const [, label, subject, note] = m;
    const key = `${label}\u0000${note ?? ""}`;
    let group = groups.get(key);
    if (!group) {
      group = { label, note, subjects: [], originals: [] };
      groups.set(key, group);
      order.push({ key });
    }
    group.subjects.push(subject);
    group.originals.push(reason);
  }
  const lines: ReasonLine[] = [];
  for (const item of order) {
    if (typeof item === "string") {
      lines.push({ text: item, count: 1 });
      continue;
    }
    const g = groups.get(item.key)!;
    if (g.subjects.length < fold) {
      for (const text of g.originals) lines.push({ text, count: 1 });
      continue;
    }
    const named = g.subjects.slice(0, show).join(", ");
    const more = g.subjects.length - show;
    lines.push({ text: `${g.label}: ${g.subjects.length} paths: ${named}${more > 0 ? ` and ${more} more` : ""}${g.note ? ` (${g.note})` : ""}`, count: g.subjects.length });
  }
  return lines;
}
