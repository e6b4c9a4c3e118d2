import { PRESET_NAMES } from "@/lib/policy/presets";

/**
 * A `<select name="preset">` of the supervision presets (strict, balanced, autonomous), with an
 * empty first option meaning "the workspace's" when `inherit` is set (a token without its own).
 */
export function PresetSelect({ defaultValue, inherit = false, className, testId, label }: { defaultValue: string; inherit?: boolean; className?: string; testId?: string; label?: string }) {
  return (
    <select name="preset" defaultValue={defaultValue} className={className} data-testid={testId} aria-label={label}>
      {inherit && <option value="">the workspace&apos;s</option>}
      {PRESET_NAMES.map((p) => (
        <option key={p} value={p}>
          {p}
        </option>
      ))}
    </select>
  );
}
