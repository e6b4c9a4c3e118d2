import { toErrorBody } from "@/lib/errors";
import { failure } from "@/lib/result";
import { envelopeResponse } from "@/lib/http/respond";

/**
 * Wraps a door's route handler so that whatever escapes it becomes an envelope, never a bare
 * 500 page or a driver's message: the database locked past its wait bound or unreachable answers
 * 503 `unavailable` (retryable, `Retry-After: 1`); anything else is `internal` (500, logged here).
 * @param handler a Next.js route handler (request, route context).
 * @returns the same handler, guarded.
 */
export function guardDoor<A extends unknown[]>(handler: (req: Request, ...rest: A) => Promise<Response>): (req: Request, ...rest: A) => Promise<Response> {
  return async (req, ...rest) => {
    try {
      return await handler(req, ...rest);
    } catch (err) {
      const body = toErrorBody(err);
      if (body.name === "internal") console.error(`[agent-reach] ${req.method} ${new URL(req.url).pathname} failed:`, err);
      return envelopeResponse(failure(null, body), body.name === "unavailable" ? { "retry-after": "1" } : {});
    }
  };
}
