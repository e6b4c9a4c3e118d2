import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startTestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";
import { allowTools, between, checkAudit, findTempFiles, lastWriteRow, readOrNull, rng, sha256, WRITE_TOOLS } from "@/tests/reliability/harness/common";

/**
 * Crash consistency under SIGKILL. Writers send write_file / edit_file calls (and
 * creations of new files in new directories) over the HTTP door to a real server, one call at a
 * time per file, several files at once; at random moments the whole server process group is
 * SIGKILLed. After each kill the harness checks, before and after the next start:
 * - every file holds exactly its old bytes or the new bytes of the call in flight (never a mix,
 *   a prefix or nothing), and every file no call was in flight for holds its last confirmed bytes;
 * - after the next start no temp file is left in the workspace;
 * - a call whose row says "succeeded" left the file with its shaAfter;
 * - the audit invariants of `checkAudit` (final statuses, runs once, backups, hash chain).
 */

export interface CrashOptions {
  /** Tool calls to send in all (writes + edits + creations). */
  operations: number;
  /** Files written concurrently (one writer per file group). */
  writers: number;
  /** Random delay before each kill (ms): uniform in [min, max] from the start of a round. */
  killDelayMs: [number, number];
  seed: number;
  /** Sizes of the seeded files (bytes); the mix decides how long a write takes. */
  fileSizes: number[];
  /** Progress lines (optional). */
  log?: (line: string) => void;
}

export interface CrashReport {
  seed: number;
  operations: number;
  confirmed: number;
  kills: number;
  /** Calls in flight when a kill landed (their response was lost). */
  inFlightAtKill: number;
  /** Of those, how many had taken effect (file holds the new bytes). */
  inFlightApplied: number;
  /** Temp files a kill left in the workspace (all removed by the next start). */
  tempFilesLeft: number;
  tempFilesAfterRestart: number;
  /** Files whose bytes were neither the old nor the new version (bytes lost). */
  bytesLostFiles: number;
  interruptedRows: number;
  backupsChecked: number;
  auditRows: number;
  violations: string[];
  durationMs: number;
}

interface FileModel {
  rel: string;
  /** Last known bytes (null: does not exist). */
  bytes: Buffer | null;
}

interface Op {
  tool: "write_file" | "edit_file";
  args: Record<string, unknown>;
  after: Buffer;
}

/** `n` bytes of numbered lines `L000001 <token>\n`, each line unique. */
function linesOf(rand: () => number, n: number, tag: string): Buffer {
  const out: string[] = [];
  let size = 0;
  for (let i = 1; size < n; i++) {
    const line = `L${String(i).padStart(6, "0")} ${tag} ${Math.floor(rand() * 1e9).toString(36)}\n`;
    out.push(line);
    size += line.length;
  }
  return Buffer.from(out.join(""));
}

/** Picks the next operation on a file: an edit of one unique line, a full rewrite, or a creation. */
function planOp(rand: () => number, file: FileModel, seq: number, sizes: number[]): Op {
  const current = file.bytes;
  const expected = current === null ? {} : { expected_sha256: sha256(current)! };
  if (current !== null && current.length > 0 && rand() < 0.55) {
    const text = current.toString("utf8");
    const lines = text.split("\n").filter(Boolean);
    const line = lines[between(rand, 0, lines.length - 1)];
    const replacement = `${line.slice(0, 7)} edit-${seq} ${Math.floor(rand() * 1e9).toString(36)}`;
    const after = Buffer.from(text.replace(`${line}\n`, `${replacement}\n`));
    return { tool: "edit_file", args: { path: file.rel, old_string: `${line}\n`, new_string: `${replacement}\n`, ...expected }, after };
  }
  const size = sizes[between(rand, 0, sizes.length - 1)];
  const after = linesOf(rand, between(rand, Math.floor(size * 0.8), size), `w${seq}`);
  return { tool: "write_file", args: { path: file.rel, content: after.toString("utf8"), ...expected }, after };
}

/**
 * Runs the campaign on a fresh workspace and database and returns its counts; the caller asserts
 * `violations` is empty (tests) or writes the report (bench/reliability.ts).
 */
export async function runCrashCampaign(options: CrashOptions): Promise<CrashReport> {
  const t0 = Date.now();
  const rand = rng(options.seed);
  const workspace = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "ar-crash-ws-")));
  const files: FileModel[] = [];
  options.fileSizes.forEach((size, i) => {
    const rel = `src/file-${String(i).padStart(2, "0")}.txt`;
    const bytes = linesOf(rand, size, "seed");
    fs.mkdirSync(path.join(workspace, "src"), { recursive: true });
    fs.writeFileSync(path.join(workspace, rel), bytes);
    files.push({ rel, bytes });
  });
  // Files that do not exist yet: the first call creates them (and their directories).
  for (let i = 0; i < options.writers; i++) files.push({ rel: `new/dir-${i}/deeper/created.txt`, bytes: null });

  const env = { AGENT_REACH_HOST_ID: "crash-harness" };
  let server = await startTestServer({ workspace, env });
  await allowTools(server, WRITE_TOOLS);
  const report: CrashReport = {
    seed: options.seed,
    operations: 0,
    confirmed: 0,
    kills: 0,
    inFlightAtKill: 0,
    inFlightApplied: 0,
    tempFilesLeft: 0,
    tempFilesAfterRestart: 0,
    bytesLostFiles: 0,
    interruptedRows: 0,
    backupsChecked: 0,
    auditRows: 0,
    violations: [],
    durationMs: 0,
  };
  const confirmedCalls: { callId: string; rel: string; sha: string }[] = [];

  try {
    while (report.operations < options.operations) {
      const inFlight = new Map<string, Op>();
      let killed = false;
      const writer = async (w: number) => {
        const mine = files.filter((_, i) => i % options.writers === w);
        while (!killed && report.operations < options.operations) {
          const file = mine[between(rand, 0, mine.length - 1)];
          const op = planOp(rand, file, report.operations, options.fileSizes);
          report.operations++;
          inFlight.set(file.rel, op);
          let body: any;
          try {
            const res = await server.call(op.tool, op.args);
            body = res.body;
          } catch {
            return; // the server died under this call; resolved after the kill
          }
          inFlight.delete(file.rel);
          if (!body.ok) {
            report.violations.push(`${op.tool} ${file.rel} failed without a crash: ${JSON.stringify(body.error).slice(0, 300)}`);
            return;
          }
          if (body.data.sha256 !== sha256(op.after)) report.violations.push(`${op.tool} ${file.rel} reported sha ${body.data.sha256}, expected ${sha256(op.after)}`);
          file.bytes = op.after;
          report.confirmed++;
          confirmedCalls.push({ callId: body.call_id, rel: file.rel, sha: body.data.sha256 });
        }
      };
      const writers = Array.from({ length: options.writers }, (_, w) => writer(w));
      const delay = between(rand, options.killDelayMs[0], options.killDelayMs[1]);
      const finished = Promise.all(writers).then(() => "done" as const);
      const outcome = await Promise.race([finished, new Promise<"kill">((r) => setTimeout(() => r("kill"), delay))]);
      if (outcome === "kill") {
        killed = true;
        await server.kill();
        report.kills++;
      }
      await finished;
      if (report.violations.length > 0) break;

      // Before the next start: old or new bytes, and count what the kill left behind.
      for (const file of files) {
        const actual = readOrNull(path.join(workspace, file.rel));
        const op = inFlight.get(file.rel);
        if (op) {
          report.inFlightAtKill++;
          if (actual !== null && actual.equals(op.after)) {
            report.inFlightApplied++;
            file.bytes = actual;
            continue;
          }
        }
        const same = actual === null ? file.bytes === null : file.bytes !== null && actual.equals(file.bytes);
        if (!same) {
          report.bytesLostFiles++;
          report.violations.push(`${file.rel}: ${actual?.length ?? "missing"} bytes (sha ${sha256(actual)}) are neither the old nor the new version`);
        }
      }
      report.tempFilesLeft += findTempFiles(workspace).length;
      if (outcome === "kill") {
        server = await startTestServer({ workspace, dataDir: server.dataDir, databaseUrl: server.databaseUrl, env });
        const left = findTempFiles(workspace);
        report.tempFilesAfterRestart += left.length;
        for (const rel of left) report.violations.push(`temp file left after restart: ${rel}`);
        for (const file of files) {
          const row = await lastWriteRow(server, path.join(workspace, file.rel));
          if (row?.status === "succeeded" && row.shaAfter !== sha256(file.bytes)) {
            report.violations.push(`${file.rel}: call ${row.id} says succeeded with ${row.shaAfter}, the file has ${sha256(file.bytes)}`);
          }
        }
        const audit = await checkAudit(server);
        report.violations.push(...audit.violations);
      }
      options.log?.(`round ${report.kills}: ${report.operations}/${options.operations} calls, ${report.confirmed} confirmed, ${report.inFlightAtKill} in flight at kills`);
      if (report.violations.length > 0) break;
    }

    const audit = await checkAudit(server);
    report.violations.push(...audit.violations);
    report.interruptedRows = audit.interrupted;
    report.backupsChecked = audit.backupsChecked;
    report.auditRows = audit.calls;
    for (const c of confirmedCalls) {
      const [row] = await sql<{ status: string; shaAfter: string | null }>(server.databaseUrl, `SELECT status, "shaAfter" FROM "ToolCall" WHERE id = $1`, [c.callId]);
      if (row?.status !== "succeeded" || row.shaAfter !== c.sha) report.violations.push(`confirmed call ${c.callId} on ${c.rel} has row ${JSON.stringify(row)}`);
    }
  } finally {
    await server.stop();
    if (report.violations.length === 0) {
      fs.rmSync(workspace, { recursive: true, force: true });
      fs.rmSync(server.dataDir, { recursive: true, force: true });
    } else {
      report.violations.push(`kept for inspection: workspace ${workspace}, data ${server.dataDir}`);
    }
  }
  report.durationMs = Date.now() - t0;
  return report;
}
