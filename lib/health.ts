import fs from "node:fs/promises";
import path from "node:path";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/gateway/workspace";

export interface HealthCheck {
  name: "database" | "workspace" | "disk";
  ok: boolean;
  detail: string;
}

/** Free bytes below which the disk check fails (writes keep a temp copy and a backup). */
const MIN_FREE_BYTES = 100 * 1024 * 1024;

/**
 * The self-check behind GET /api/health: database reachable, workspace root readable and
 * writable (a probe file is created and removed), free disk space on the workspace's file system.
 * @returns `{ok, checks}`; ok is true only when every check passes. Never throws.
 */
export async function checkHealth(): Promise<{ ok: boolean; checks: HealthCheck[] }> {
  const checks: HealthCheck[] = [];
  const started = Date.now();
  try {
    await db().$queryRawUnsafe("SELECT 1");
    checks.push({ name: "database", ok: true, detail: `reachable in ${Date.now() - started} ms` });
  } catch (err) {
    checks.push({ name: "database", ok: false, detail: (err as Error).message.split("\n")[0] });
  }
  try {
    const ws = await currentWorkspace();
    const probe = path.join(ws.root, `.agent-reach-health-${process.pid}-${Date.now()}`);
    await fs.readdir(ws.root);
    await fs.writeFile(probe, "ok", { flag: "wx", mode: 0o600 });
    await fs.rm(probe, { force: true });
    checks.push({ name: "workspace", ok: true, detail: `${ws.root} readable and writable` });
    const stat = await fs.statfs(ws.root);
    const free = stat.bavail * stat.bsize;
    checks.push({ name: "disk", ok: free >= MIN_FREE_BYTES, detail: `${Math.floor(free / 1024 / 1024)} MiB free` });
  } catch (err) {
    checks.push({ name: "workspace", ok: false, detail: (err as Error).message.split("\n")[0] });
  }
  return { ok: checks.every((c) => c.ok), checks };
}
