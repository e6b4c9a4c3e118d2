import type { ErrorBody } from "@/lib/errors";

/**
 * A value or a failure, as a value: `{ok: true, ...T}` or `{ok: false, ...E}`. The members of `T`
 * and `E` sit beside `ok` (no `data` wrapper), so each use names its own fields
 * (`Result<{ plan: GrantPlan }>` is `{ok: true, plan} | {ok: false, error}`). `E` defaults to an
 * error body from the closed table in lib/errors.ts; code that reports to a person rather than to
 * an agent may carry a plain `{ message: string }` or a narrower reason instead.
 */
export type Result<T extends object = Empty, E extends object = { error: ErrorBody }> = ({ ok: true } & T) | ({ ok: false } & E);

/** No members: `Result<Empty>` is a success that carries nothing. */
export type Empty = Record<never, never>;

/**
 * The envelope every door returns for a tool call :
 * success `{ok: true, call_id, data}`, failure `{ok: false, call_id, error}`.
 * `call_id` is null only when no call could be recorded (e.g. the request was not authenticated).
 */
export type Envelope<T = unknown> = Result<{ call_id: string; data: T }, { call_id: string | null; error: ErrorBody }>;

export function success<T>(callId: string, data: T): Envelope<T> {
  return { ok: true, call_id: callId, data };
}

export function failure(callId: string | null, error: ErrorBody): Envelope<never> {
  return { ok: false, call_id: callId, error };
}
