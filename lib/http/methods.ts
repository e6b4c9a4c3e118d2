import { errorBody } from "@/lib/errors";
import { failure } from "@/lib/result";
import { json } from "@/lib/http/respond";

/**
 * The HTTP methods a route of this app may be asked for, besides OPTIONS (which every route
 * answers with 204 and its `Allow` header, see `refuseOtherMethods`).
 */
export const ROUTE_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

type Handler = (req: Request) => Promise<Response>;

/**
 * The `Allow` header value for a route that implements `allowed` (RFC 9110 section 10.2.1):
 * HEAD is added where GET is (Next.js answers HEAD with the GET handler), OPTIONS always.
 */
export function allowHeader(allowed: readonly RouteMethod[]): string {
  const all = new Set<string>([...allowed, "OPTIONS"]);
  if (all.has("GET")) all.add("HEAD");
  return [...all].sort().join(", ");
}

/**
 * The answer to a method a route does not implement: 405 with an `Allow` header and the same
 * JSON error envelope as every other error of the HTTP door, named `method_not_allowed`, with
 * `detail.method` (what was asked) and `detail.allow` (what the route takes).
 * @param req the refused request (its method is named in the message).
 * @param allowed the methods the route implements.
 */
export function methodNotAllowedResponse(req: Request, allowed: readonly RouteMethod[]): Response {
  const allow = allowHeader(allowed);
  const path = new URL(req.url).pathname;
  const body = failure(
    null,
    errorBody("method_not_allowed", `${req.method} is not allowed on ${path}; it takes ${allow}.`, {
      method: req.method,
      allow: allow.split(", "),
    }),
  );
  return json(body, 405, { allow });
}

/** The methods `refuseOtherMethods(allowed)` answers: the others, less HEAD where GET is allowed. */
export type RefusedMethod<A extends RouteMethod> = Exclude<RouteMethod, A | ("GET" extends A ? "HEAD" : never)>;

/**
 * Route handlers for every method of `ROUTE_METHODS` that a route does not implement, each
 * answering `methodNotAllowedResponse`, so that no method gets Next.js's own bodiless 405; and
 * OPTIONS, answering 204 with the route's `Allow` header (Next.js's own OPTIONS would list every
 * exported handler, these refusals included). A route file exports them beside its own handlers:
 * `export const { GET, HEAD, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["POST"]);`
 * HEAD is left out where GET is allowed (Next.js answers HEAD with the GET handler); naming a
 * method the route implements is a type error.
 */
export function refuseOtherMethods<const A extends RouteMethod>(allowed: readonly A[]): Record<RefusedMethod<A> | "OPTIONS", Handler> {
  const taken: readonly RouteMethod[] = allowed;
  const handlers: Partial<Record<RouteMethod | "OPTIONS", Handler>> = {
    OPTIONS: async () => new Response(null, { status: 204, headers: { allow: allowHeader(allowed) } }),
  };
  for (const method of ROUTE_METHODS) {
    if (taken.includes(method) || (method === "HEAD" && taken.includes("GET"))) continue;
    handlers[method] = async (req: Request) => methodNotAllowedResponse(req, allowed);
  }
  return handlers as Record<RefusedMethod<A> | "OPTIONS", Handler>;
}
