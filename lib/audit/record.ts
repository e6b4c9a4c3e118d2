import { z } from "zod";
import { isPresetName } from "@/lib/policy/presets";
import type { PolicyVerdict, PresetName, RuleOptions } from "@/lib/policy/types";
import { RuleOptionsInput } from "@/lib/policy/rule-match";
import type { ToolPreview } from "@/lib/audit/types";
import type { Envelope } from "@/lib/result";

/**
 * Typed codecs for the JSON columns of a ToolCall row. Each column is written with `encode` and
 * read back with `decode`, which validates the shape with zod instead of trusting a cast: a
 * column that does not parse (edited by hand, written by an older version, cut) decodes to
 * `null` — callers treat that as "not there" and never as a value of the wrong shape.
 *
 * - `decisionJson`: the policy verdict that decided the call (decision, rule, reasons, parts, the
 *   combined rule options: resource limits and `redact`);
 * - `pendingJson`: what a reviewer sees while the call waits (preview: target sha256 at queue time
 *   and the proposed diff; the verdict; `external` for a decide-only call);
 * - `execArgsJson` / `editedArgsJson`: the exact arguments that run when approved (a JSON object;
 *   the tool's own schema checks them again before running);
 * - `resultJson`: the stored envelope (redacted; possibly cut, then `truncated_for_storage`).
 */

const RuleRef = z.object({ id: z.string(), note: z.string().nullable() });

const Verdict = z.looseObject({
  decision: z.enum(["allow", "ask", "deny"]),
  rule: RuleRef.nullable(),
  reasons: z.array(z.string()),
  parts: z.array(z.looseObject({ text: z.string(), decision: z.enum(["allow", "ask", "deny"]), reason: z.string() })).optional(),
  options: RuleOptionsInput.optional(),
});

const Preview = z.looseObject({
  path: z.string().optional(),
  targetSha256: z.string().nullable().optional(),
  diff: z.string().optional(),
});

const Pending = z.object({
  preview: Preview.default({}),
  verdict: Verdict,
  external: z.boolean().optional(),
});

const Args = z.record(z.string(), z.unknown());

const ErrorBodySchema = z.looseObject({
  code: z.number(),
  name: z.string(),
  message: z.string(),
  detail: z.record(z.string(), z.unknown()),
  retryable: z.boolean(),
  retry_after_ms: z.number().nullable(),
});

const StoredEnvelope = z.union([
  z.looseObject({ ok: z.literal(true), call_id: z.string(), data: z.unknown() }),
  z.looseObject({ ok: z.literal(false), call_id: z.string().nullable(), error: ErrorBodySchema }),
]);

/** What a pending call keeps for its reviewer. */
export interface PendingDetail {
  preview: ToolPreview;
  verdict: PolicyVerdict;
  /** A decide-only call (the Claude Code hook): approving it runs nothing here. */
  external?: boolean;
}

/** A codec for one JSON column. */
export interface ColumnCodec<T> {
  encode(value: T): string;
  /** The value, or null when the column is empty or does not hold a valid value. */
  decode(json: string | null | undefined): T | null;
}

function codec<T>(schema: z.ZodType): ColumnCodec<T> {
  return {
    encode: (value) => JSON.stringify(value),
    decode(json) {
      if (json === null || json === undefined || json === "") return null;
      let raw: unknown;
      try {
        raw = JSON.parse(json);
      } catch {
        return null;
      }
      const parsed = schema.safeParse(raw);
      return parsed.success ? (parsed.data as T) : null;
    },
  };
}

/** ToolCall.decisionJson */
export const decisionColumn = codec<PolicyVerdict>(Verdict);
/** ToolCall.pendingJson */
export const pendingColumn = codec<PendingDetail>(Pending);
/** ToolCall.execArgsJson, ToolCall.editedArgsJson */
export const argsColumn = codec<Record<string, unknown>>(Args);
/** ToolCall.resultJson (the stored copy of the envelope) */
export const resultColumn = codec<Envelope & { truncated_for_storage?: { original_length: number } }>(StoredEnvelope);

/** The supervision preset recorded with a call's verdict, or null (not recorded, or not a preset's name). */
export function presetOf(decisionJson: string | null | undefined): PresetName | null {
  const preset = decisionColumn.decode(decisionJson)?.preset;
  return isPresetName(preset) ? preset : null;
}

/** The rule options recorded with a call's verdict, or null. */
export function ruleOptionsOf(decisionJson: string | null | undefined): RuleOptions | null {
  return decisionColumn.decode(decisionJson)?.options ?? null;
}

/** The target's sha256 at queue time (null: the file did not exist; undefined: not recorded). */
export function queuedTargetSha256(pendingJson: string | null | undefined): string | null | undefined {
  const preview = pendingColumn.decode(pendingJson)?.preview;
  return preview && "targetSha256" in preview ? (preview.targetSha256 ?? null) : undefined;
}
