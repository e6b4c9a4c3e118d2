import { hostCheckResponse } from "@/lib/http/host-check";

/**
 * Runs in front of every request Next.js serves (Next 16's `proxy.ts`, formerly middleware, on
 * the Node.js runtime): API routes, the MCP door, the event stream, dashboard pages, server
 * actions and static assets. It refuses requests whose Host or Origin does not name this gateway
 * with 403 `forbidden` (DNS rebinding protection, lib/http/host-check.ts) and lets every other
 * request through untouched.
 */
export function proxy(request: Request): Response | undefined {
  return hostCheckResponse(request) ?? undefined;
}
