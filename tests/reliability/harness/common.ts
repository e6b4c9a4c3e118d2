import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { TEMP_NAME_PATTERN } from "@/lib/workspace/temp-sweep";
import { addRule, setRuleEnabled, signInDashboard } from "@/tests/helpers/dashboard";
import { sql } from "@/tests/helpers/sql";
import type { TestServer } from "@/tests/helpers/server";

/**
 * Shared pieces of the reliability harnesses: the short forms in tests/reliability/*.test.ts
 * and the long forms in bench/reliability.ts run the same code with different counts.
 */

/** sha256 (hex) of bytes, or null for a missing file. */
export function sha256(bytes: Buffer | string | null): string | null {
  return bytes === null ? null : crypto.createHash("sha256").update(bytes).digest("hex");
}

/** A file's bytes, or null when it does not exist. */
export function readOrNull(file: string): Buffer | null {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** A small seeded PRNG (mulberry32), so a failing run can be replayed with its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [min, max] from `rand`. */
export function between(rand: () => number, min: number, max: number): number {
  return min + Math.floor(rand() * (max - min + 1));
}

/**
 * Lets `tools` run without a reviewer (the benchmark and the harnesses drive writes unattended;
 * the default policy asks), the way an operator does it on the policy page: adds an operator rule
 * that allows each tool, and switches off the default whole-tool "ask" rule of each, since among
 * matching rules ask beats allow (lib/policy/decide.ts). Path rules (.env*, .git/**, keys) still
 * ask, deny rules still deny. The server applies the change to the next call (its form drops the
 * server's rule cache).
 */
export async function allowTools(server: Pick<TestServer, "url" | "reviewerPassword" | "databaseUrl">, tools: string[]): Promise<void> {
  const dash = await signInDashboard(server);
  for (const tool of tools) {
    await addRule(dash, { tool, decision: "allow", note: `reliability harness: unattended ${tool}` });
    const asks = await sql<{ id: string }>(
      server.databaseUrl,
      `SELECT id FROM "PolicyRule" WHERE tool = $1 AND source = 'default' AND decision = 'ask' AND "pathGlob" IS NULL AND command IS NULL AND enabled = $2`,
      [tool, true],
    );
    for (const { id } of asks) await setRuleEnabled(dash, id, false);
  }
}

/** The write tools the harnesses allow. */
export const WRITE_TOOLS = ["write_file", "edit_file", "restore_backup"];

/**
 * Every file under `root` (no symlinks followed) whose name is an atomic-write temp name, or
 * ends in `.tmp` at all (so a temp file of another shape would be noticed too).
 * @returns workspace-relative paths
 */
export function findTempFiles(root: string): string[] {
  const found: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(abs);
      else if (TEMP_NAME_PATTERN.test(entry.name) || entry.name.endsWith(".tmp")) found.push(path.relative(root, abs));
    }
  }
  return found;
}

/** Status names a call ends in (lib/audit/calls.ts FINAL_STATUSES). */
const FINAL = ["succeeded", "failed", "conflict", "rejected", "expired", "denied", "interrupted"];

export interface AuditCheck {
  /** ToolCall rows looked at. */
  calls: number;
  /** Rows marked "interrupted". */
  interrupted: number;
  /** Succeeded write rows whose backup (Backup row + Blob) was checked. */
  backupsChecked: number;
  /** Human-readable problems; empty when all holds. */
  violations: string[];
}

/**
 * Audit-log invariants, read straight from the database:
 * - every call is in a final status (none left received / running / approved; pending only when
 *   `allowPending`);
 * - no call ran twice (at most one `call.running` event per call);
 * - every succeeded write that replaced bytes has shaBefore/shaAfter, a backup id, and a Backup row
 *   of the old bytes (blobSha = shaBefore) whose Blob is stored;
 * - every interrupted write that had started says which file it touched (pathResolved);
 * - the event hash chain verifies (GET /api/audit/verify).
 */
export async function checkAudit(server: TestServer, options: { allowPending?: boolean } = {}): Promise<AuditCheck> {
  const url = server.databaseUrl;
  const violations: string[] = [];
  const rows = await sql<{
    id: string;
    tool: string;
    status: string;
    pathResolved: string | null;
    shaBefore: string | null;
    shaAfter: string | null;
    backupId: string | null;
    resultJson: string | null;
  }>(url, `SELECT id, tool, status, "pathResolved", "shaBefore", "shaAfter", "backupId", "resultJson" FROM "ToolCall"`,
  );
  const allowed = new Set([...FINAL, ...(options.allowPending ? ["pending"] : [])]);
  for (const row of rows) if (!allowed.has(row.status)) violations.push(`call ${row.id} (${row.tool}) left in status ${row.status}`);
  const twice = await sql<{ callId: string; n: number }>(
    url,
    `SELECT "callId", COUNT(*) AS n FROM "Event" WHERE type = 'call.running' GROUP BY "callId" HAVING COUNT(*) > 1`,
  );
  for (const t of twice) violations.push(`call ${t.callId} ran ${t.n} times`);
  const backups = new Map(
    (await sql<{ id: string; blobSha: string; callId: string }>(url, `SELECT id, "blobSha", "callId" FROM "Backup"`)).map((b) => [b.id, b]),
  );
  const blobs = new Set((await sql<{ sha256: string }>(url, `SELECT sha256 FROM "Blob"`)).map((b) => b.sha256));
  let backupsChecked = 0;
  for (const row of rows) {
    if (row.status !== "succeeded" || !WRITE_TOOLS.includes(row.tool)) continue;
    const data = JSON.parse(row.resultJson ?? "{}").data ?? {};
    if (!row.shaAfter) violations.push(`succeeded write ${row.id} has no shaAfter`);
    if (data.changed === false || data.created === true) continue;
    backupsChecked++;
    const backup = row.backupId ? backups.get(row.backupId) : undefined;
    if (!backup) violations.push(`succeeded write ${row.id} has no backup row (backupId ${row.backupId})`);
    else if (backup.blobSha !== row.shaBefore) violations.push(`backup ${backup.id} of ${row.id} holds ${backup.blobSha}, not shaBefore ${row.shaBefore}`);
    else if (!blobs.has(backup.blobSha)) violations.push(`backup ${backup.id} of ${row.id}: blob ${backup.blobSha} missing`);
    else if (backup.callId !== row.id) violations.push(`backup ${backup.id} belongs to ${backup.callId}, not ${row.id}`);
  }
  for (const row of rows) {
    if (row.status !== "interrupted") continue;
    const started = JSON.parse(row.resultJson ?? "{}").error?.detail?.started;
    if (started && !row.pathResolved && WRITE_TOOLS.includes(row.tool)) violations.push(`interrupted write ${row.id} does not say which file it touched`);
  }
  const chain = await server.reviewer("GET", "/api/audit/verify");
  if (!chain.body.ok) violations.push(`event chain broken: ${JSON.stringify(chain.body.broken)}`);
  return { calls: rows.length, interrupted: rows.filter((r) => r.status === "interrupted").length, backupsChecked, violations };
}

/** The newest write-tool row for an absolute path (by creation), or null. */
export async function lastWriteRow(server: TestServer, absPath: string): Promise<{ id: string; status: string; shaAfter: string | null } | null> {
  const [row] = await sql<{ id: string; status: string; shaAfter: string | null }>(
    server.databaseUrl,
    `SELECT id, status, "shaAfter" FROM "ToolCall" WHERE "pathResolved" = $1 AND tool IN ('write_file', 'edit_file', 'restore_backup') ORDER BY "createdAt" DESC, id DESC LIMIT 1`,
    [absPath],
  );
  return row ?? null;
}

/**
 * Mounts a tmpfs of `sizeBytes` at a new directory `dir` (created). Needs root.
 * @throws Error with the mount error when the mount is refused
 */
export function mountTmpfs(dir: string, sizeBytes: number): void {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=0755`, "tmpfs", dir], { stdio: "pipe" });
}

/** Remounts a mount point read-only (`ro: true`) or read-write. */
export function remount(dir: string, ro: boolean): void {
  execFileSync("mount", ["-o", `remount,${ro ? "ro" : "rw"}`, dir], { stdio: "pipe" });
}

/** Unmounts `dir` (lazily, so a server that still holds files there cannot block it) and removes it. */
export function unmount(dir: string): void {
  try {
    execFileSync("umount", ["-l", dir], { stdio: "pipe" });
  } catch {
    /* not mounted */
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Free bytes of the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const st = fs.statfsSync(dir);
  return st.bavail * st.bsize;
}
