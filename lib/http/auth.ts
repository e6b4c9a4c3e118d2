import { authenticateAgent, authenticateReviewer, bearerToken, SESSION_COOKIE, type AgentIdentity, type ReviewerIdentity } from "@/lib/auth/tokens";
import { errorResponse } from "@/lib/http/respond";

/** Reads one cookie from a request's Cookie header (RFC 6265), or null. */
export function readCookie(req: Request, name: string): string | null {
  for (const part of (req.headers.get("cookie") ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return null;
}

export type AuthResult<T> = { ok: true; identity: T } | { ok: false; response: Response };

/**
 * Authenticates an agent by `Authorization: Bearer ar_agent_…` (RFC 6750).
 * @returns the agent, or a 401 `unauthorized` response. A reviewer token is not an agent token.
 */
export async function requireAgent(req: Request): Promise<AuthResult<AgentIdentity>> {
  const agent = await authenticateAgent(bearerToken(req.headers.get("authorization")));
  if (agent) return { ok: true, identity: agent };
  return { ok: false, response: errorResponse("unauthorized", "Missing or invalid agent token. Send Authorization: Bearer <agent token>.") };
}

/**
 * Authenticates a reviewer by a reviewer API token (`Authorization: Bearer ar_rev_…`) or the
 * dashboard's session cookie. For a state-changing request made with the cookie, the
 * `X-CSRF-Token` header must carry the session's CSRF token (synchronizer token pattern) and an
 * `Origin` header, when present, must match the request's host.
 * @returns the reviewer, 401 `unauthorized` (no valid credential; agent tokens never qualify) or
 *   403 `forbidden` (CSRF check failed).
 */
export async function requireReviewer(req: Request, options: { mutation: boolean }): Promise<AuthResult<ReviewerIdentity>> {
  const bearer = bearerToken(req.headers.get("authorization"));
  const reviewer = await authenticateReviewer(bearer, bearer ? null : readCookie(req, SESSION_COOKIE));
  if (!reviewer) {
    return { ok: false, response: errorResponse("unauthorized", "Reviewer authentication required (reviewer API token or dashboard session).") };
  }
  if (options.mutation && reviewer.via === "session") {
    const origin = req.headers.get("origin");
    const host = req.headers.get("host");
    const originOk = !origin || (host !== null && hostOf(origin) === host);
    if (!originOk || req.headers.get("x-csrf-token") !== reviewer.csrfToken) {
      return { ok: false, response: errorResponse("forbidden", "CSRF check failed: send the X-CSRF-Token of your session from the same origin.") };
    }
  }
  return { ok: true, identity: reviewer };
}

/** The host (with port) of an `Origin` header value, or null when it is not a URL (e.g. "null"). */
function hostOf(origin: string): string | null {
  return URL.canParse(origin) ? new URL(origin).host : null;
}

/**
 * For routes both an agent and a reviewer may call (reading a call): an agent token
 * (`Bearer ar_agent_…`) authenticates the agent, anything else a reviewer (API token or the
 * dashboard's session; the request must not change state).
 * @returns `{agent}` or `{reviewer}`, or the 401 `unauthorized` response of the kind that was tried.
 */
export async function requireAgentOrReviewer(
  req: Request,
): Promise<{ ok: true; agent: AgentIdentity; reviewer: null } | { ok: true; agent: null; reviewer: ReviewerIdentity } | { ok: false; response: Response }> {
  if (bearerToken(req.headers.get("authorization"))?.startsWith("ar_agent_")) {
    const auth = await requireAgent(req);
    return auth.ok ? { ok: true, agent: auth.identity, reviewer: null } : auth;
  }
  const auth = await requireReviewer(req, { mutation: false });
  return auth.ok ? { ok: true, agent: null, reviewer: auth.identity } : auth;
}
