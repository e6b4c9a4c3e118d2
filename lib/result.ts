import type { ErrorBody } from "@/lib/errors";

/**
 * The envelope every door returns for a tool call :
 * success `{ok: true, call_id, data}`, failure `{ok: false, call_id, error}`.
 * `call_id` is null only when no call could be recorded (e.g. the request was not authenticated).
 */
export type Envelope<T = unknown> =
  | { ok: true; call_id: string; data: T }
  | { ok: false; call_id: string | null; error: ErrorBody };

export function success<T>(callId: string, data: T): Envelope<T> {
  return { ok: true, call_id: callId, data };
}

export function failure(callId: string | null, error: ErrorBody): Envelope<never> {
  return { ok: false, call_id: callId, error };
}
