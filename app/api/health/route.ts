import { checkHealth } from "@/lib/health";
import { json } from "@/lib/http/respond";
import { refuseOtherMethods } from "@/lib/http/methods";

/**
 * GET /api/health — self-check: database, workspace (read/write probe), disk space.
 * Public (it reveals no content). 200 `{ok: true, failed: [], checks}` when healthy, 503 otherwise
 * with `failed` naming the checks that failed (e.g. `["disk"]`) and each check's `detail` saying why.
 */
export async function GET(): Promise<Response> {
  const health = await checkHealth();
  return json(health, health.ok ? 200 : 503);
}

/** Every other method answers 405 `method_not_allowed` with an `Allow` header; OPTIONS names the methods (lib/http/methods.ts). */
export const { POST, PUT, DELETE, PATCH, OPTIONS } = refuseOtherMethods(["GET"]);
