import { liveEventStream } from "@/lib/dashboard/live";
import { requireReviewer } from "@/lib/http/auth";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/events — the dashboard's live feed (server-sent events): every audit event as it is
 * appended, the number of pending calls after call events, a heartbeat. Resumes after
 * `Last-Event-ID` (a reconnect) or `?since=<seq>` (the seq the page was rendered at). Reviewer auth (dashboard session cookie or reviewer API token).
 * See lib/dashboard/live.ts for the message types.
 */
export const GET = guardDoor(async function GET(req: Request): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: false });
  if (!auth.ok) return auth.response;
  const resumeFrom = req.headers.get("last-event-id") ?? new URL(req.url).searchParams.get("since");
  return new Response(liveEventStream(resumeFrom, req.signal), {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
