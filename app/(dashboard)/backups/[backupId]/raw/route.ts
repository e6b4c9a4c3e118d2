import { versionBytes } from "@/lib/dashboard/backups";
import { requireReviewer } from "@/lib/http/auth";
import { errorResponse } from "@/lib/http/respond";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /backups/{id}/raw — a backup's exact bytes as a download (any size, binary or text).
 * Reviewer auth (dashboard session or reviewer token); 404 not_found for an unknown backup.
 */
export async function GET(req: Request, { params }: { params: Promise<{ backupId: string }> }): Promise<Response> {
  const auth = await requireReviewer(req, { mutation: false });
  if (!auth.ok) return auth.response;
  const { backupId } = await params;
  const loaded = await versionBytes(backupId);
  if (!loaded) return errorResponse("not_found", `No backup ${backupId}.`, { backup_id: backupId });
  const name = loaded.version.path.split("/").pop() || "backup";
  return new Response(new Uint8Array(loaded.bytes), {
    headers: {
      "content-type": "application/octet-stream",
      "content-length": String(loaded.bytes.length),
      "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
    },
  });
}

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
