import { getConfig, type Config } from "@/lib/config";
import { errorBody, httpStatusOf, type ErrorName } from "@/lib/errors";
import { failure, type Envelope } from "@/lib/result";

/**
 * Helpers shared by the route handlers of the HTTP door. Route files stay thin: authenticate,
 * read the body, call one lib function, answer with `envelopeResponse`.
 */

/** JSON response with `no-store` caching. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

/**
 * Answers an envelope with the HTTP status its error name maps to (lib/errors.ts), 200 on success.
 * An `approval_pending` envelope gets 202 and a `Location` header pointing at the status URL.
 * `extra` members are added to the body beside the envelope's (e.g. the status route's `call`).
 */
export function envelopeResponse(envelope: Envelope, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}): Response {
  if (envelope.ok) return json({ ...envelope, ...extra }, 200, headers);
  const status = httpStatusOf(envelope.error.name, envelope.error.detail);
  const allHeaders: Record<string, string> = { ...headers };
  if (envelope.error.name === "approval_pending" && typeof envelope.error.detail.status_url === "string") {
    allHeaders.location = envelope.error.detail.status_url;
    allHeaders["retry-after"] = "1";
  }
  if (envelope.error.name === "unauthorized") allHeaders["www-authenticate"] = 'Bearer realm="agent-reach"';
  return json({ ...envelope, ...extra }, status, allHeaders);
}

/** An error envelope that belongs to no recorded call (bad token, unreadable body). */
export function errorResponse(name: ErrorName, message: string, detail: Record<string, unknown> = {}): Response {
  return envelopeResponse(failure(null, errorBody(name, message, detail)));
}

export type BodyResult = { ok: true; value: unknown } | { ok: false; response: Response };

/**
 * Reads a JSON request body of at most AGENT_REACH_MAX_BODY_BYTES bytes, streaming, so a huge
 * body is refused without being buffered. An empty body reads as `{}`.
 * @returns the parsed value, or a ready error response (413 payload_too_large, 400 invalid_arguments).
 */
export async function readJsonBody(req: Request): Promise<BodyResult> {
  const limit = getConfig().maxBodyBytes;
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  const tooLarge = () => ({
    ok: false as const,
    response: errorResponse("payload_too_large", `Request body is larger than ${limit} bytes.`, { limit_bytes: limit }),
  });
  if (Number.isFinite(declared) && declared > limit) return tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return tooLarge();
      }
      chunks.push(value);
    }
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return {
      ok: false,
      response: errorResponse("invalid_arguments", `Request body is not valid JSON: ${(err as Error).message}`),
    };
  }
}

/**
 * The `wait` preference of a `Prefer` header (RFC 7240 section 4.3), in milliseconds, or null.
 * `Prefer: wait=10` → 10000 (a decimal number of seconds is taken too). Other preferences, and a
 * `wait` whose value is not a number of seconds >= 0 (`wait=abc`, `wait=-1`, `wait=`), are ignored:
 * the first well-formed `wait` counts.
 */
export function preferWaitMs(header: string | null): number | null {
  if (!header) return null;
  for (const part of header.split(",")) {
    const m = /^\s*wait\s*=\s*"?(\d+(?:\.\d+)?)"?\s*$/i.exec(part.split(";")[0]);
    if (m) return Math.round(Number(m[1]) * 1000);
  }
  return null;
}

/**
 * How long a request waits for a reviewer, from its `Prefer: wait=N` header: N seconds, or the
 * configured default when absent, never more than the configured maximum (ms).
 *
 * A malformed `wait` (`wait=abc`) is ignored like an absent one, and the request waits the
 * default; it is not refused with a 400. RFC 7240 section 2 requires a server to ignore a
 * preference it cannot comply with and go on, since `Prefer` only states a wish and may be set
 * by a proxy or an SDK the agent does not control; a tool call failing over it would lose the
 * call itself. What the server did is stated instead: `Preference-Applied: wait=N` (section 3)
 * is answered exactly when a `wait` preference was honored, N being the seconds actually waited
 * at most (after the cap), so a client that sent one and gets no such header knows it was ignored.
 * @returns `waitMs`, and `applied`: the `Preference-Applied` header value to answer with, or null
 *   when the request stated no well-formed wait.
 */
export function approvalWait(req: Request, config: Pick<Config, "approvalWaitDefaultMs" | "approvalWaitMaxMs">): { waitMs: number; applied: string | null } {
  const preferred = preferWaitMs(req.headers.get("prefer"));
  const waitMs = Math.min(preferred ?? config.approvalWaitDefaultMs, config.approvalWaitMaxMs);
  return { waitMs, applied: preferred !== null ? `wait=${Math.round(waitMs / 1000)}` : null };
}
