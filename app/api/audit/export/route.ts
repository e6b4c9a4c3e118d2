import { exportJsonl } from "@/lib/dashboard/audit";
import { parseUtcInput } from "@/lib/dashboard/sessions";
import { requireReviewer } from "@/lib/http/auth";
import { errorResponse } from "@/lib/http/respond";
import { guardDoor } from "@/lib/http/door";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/audit/export?from=…&to=… — the audit log as JSON Lines (one object per line): the
 * calls created in the range (`kind: "call"`), then the events (`kind: "event"`, with their hash
 * chain links). `from`/`to` are ISO 8601 times (UTC when no offset is given); either may be left
 * out. Streamed; reviewer auth. 400 invalid_arguments for an unreadable time.
 */
export const GET = guardDoor(async function GET(req: Request): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: false });
  if (!auth.ok) return auth.response;
  const params = new URL(req.url).searchParams;
  const range: { from?: Date; to?: Date } = {};
  for (const key of ["from", "to"] as const) {
    const raw = params.get(key);
    if (!raw) continue;
    const date = parseUtcInput(raw);
    if (!date) return errorResponse("invalid_arguments", `${key} must be an ISO 8601 time, e.g. 2026-05-01T00:00:00Z.`, { [key]: raw });
    range[key] = date;
  }
  const lines = exportJsonl(range);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(body, {
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="agent-reach-audit-${stamp}.jsonl"`,
      "cache-control": "no-store",
    },
  });
});

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
