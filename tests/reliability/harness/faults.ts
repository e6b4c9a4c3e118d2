import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { freePort, startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";
import { allowTools, findTempFiles, freeBytes, mountTmpfs, readOrNull, remount, sha256, unmount, WRITE_TOOLS } from "@/tests/reliability/harness/common";
import { httpDoor, mcpDoor, type Door, type DoorAnswer } from "@/tests/reliability/harness/doors";

/**
 * File-system and database faults under the real server: a full disk (tmpfs
 * workspace), a read-only workspace (tmpfs remounted read-only), a locked SQLite database (another
 * connection holds its write lock past the busy timeout) and an unavailable database (PostgreSQL
 * stopped under the server). Every scenario sends write_file / edit_file calls through both
 * agent doors and then checks that nothing was lost: each target keeps its bytes, no temp file or
 * created directory is left, no backup was saved for a write that did not happen, and no file
 * changed without its audit row. Mounting needs root (Linux), as here and in CI.
 */

export interface FaultReport {
  scenario: string;
  /** Rounds run (each round sends every call of the scenario once per door). */
  runs: number;
  /** Calls that met the fault (and had to fail). */
  faultsInjected: number;
  /** Calls after the fault was lifted that had to succeed (recovery). */
  recoveries: number;
  /** Files whose bytes changed although their write failed. */
  bytesLostFiles: number;
  violations: string[];
  /** How the doors answered the faulted calls, e.g. {"http 507 write_failed/enospc": 6}. */
  answers: Record<string, number>;
  /** The error bodies of the faulted calls (first few). */
  samples: Array<{ name: string; message: string; retryable: boolean; detail: Record<string, unknown> }>;
}

function newReport(scenario: string): FaultReport {
  return { scenario, runs: 0, faultsInjected: 0, recoveries: 0, bytesLostFiles: 0, violations: [], answers: {}, samples: [] };
}

function describeAnswer(a: DoorAnswer): string {
  if (!a.body) return `${a.door} ${a.status} (${a.failure ?? "no envelope"})`.replace(/call_[0-9a-z]+/g, "call_…");
  if (a.body.ok) return `${a.door} ${a.status} ok`;
  const reason = a.body.error?.detail?.reason;
  return `${a.door} ${a.status} ${a.body.error?.name}${reason ? `/${reason}` : ""}`;
}

/** Workspace-relative paths → sha256 of every regular file (no symlinks followed). */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        out.set(`${path.relative(root, abs)}/`, "dir");
        stack.push(abs);
      } else if (entry.isFile()) out.set(path.relative(root, abs), sha256(fs.readFileSync(abs))!);
    }
  }
  return out;
}

/** Differences between two snapshots, as lines. */
function diffSnapshots(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of before) if (after.get(k) !== v) out.push(`${k}: ${after.has(k) ? "changed" : "gone"}`);
  for (const k of after.keys()) if (!before.has(k)) out.push(`${k}: appeared`);
  return out;
}

/** The calls every scenario sends: replace, edit, create in new directories. */
function faultCalls(big: string, round: number): Array<{ tool: string; args: Record<string, unknown> }> {
  return [
    { tool: "write_file", args: { path: "keep.txt", content: big } },
    { tool: "edit_file", args: { path: "keep.txt", old_string: "line 000010\n", new_string: `${big}\n` } },
    { tool: "write_file", args: { path: `new-${round}/deeper/created.txt`, content: big } },
  ];
}

/** The Backup rows and the ToolCall rows that changed a file, made since `since`. */
async function writesSince(server: TestServer, since: string): Promise<{ backups: number; succeeded: number }> {
  const [b] = await sql<{ n: number }>(server.databaseUrl, `SELECT COUNT(*) AS n FROM "Backup" WHERE "createdAt" > $1`, [since]);
  const [c] = await sql<{ n: number }>(
    server.databaseUrl,
    `SELECT COUNT(*) AS n FROM "ToolCall" WHERE "createdAt" > $1 AND status = 'succeeded' AND tool IN ('write_file', 'edit_file')`,
    [since],
  );
  return { backups: Number(b.n), succeeded: Number(c.n) };
}

/** The newest createdAt in ToolCall as stored (a watermark for `writesSince`). */
async function watermark(server: TestServer): Promise<string> {
  const [row] = await sql<{ t: string | null }>(server.databaseUrl, `SELECT MAX("createdAt") AS t FROM "ToolCall"`);
  const [b] = await sql<{ t: string | null }>(server.databaseUrl, `SELECT MAX("createdAt") AS t FROM "Backup"`);
  return [row.t ?? "", b.t ?? ""].sort().at(-1)!;
}

function keepText(): string {
  return Array.from({ length: 2000 }, (_, i) => `line ${String(i).padStart(6, "0")}\n`).join("");
}

/**
 * Sends the fault calls through both doors, expecting each to fail with `expect` (an error name
 * and reason), and checks the workspace did not change and no write or backup was recorded.
 */
async function faultRound(server: TestServer, doors: Door[], report: FaultReport, round: number, big: string, expect: (a: DoorAnswer) => boolean): Promise<void> {
  const before = snapshot(server.workspace);
  const mark = await watermark(server);
  for (const door of doors) {
    for (const { tool, args } of faultCalls(big, round)) {
      const answer = await door.call(tool, args);
      report.faultsInjected++;
      const key = describeAnswer(answer);
      report.answers[key] = (report.answers[key] ?? 0) + 1;
      if (answer.body?.error && report.samples.length < 10) report.samples.push(answer.body.error);
      if (!expect(answer)) report.violations.push(`${door.name} ${tool} ${String(args.path)}: unexpected answer ${key}`);
    }
  }
  const changes = diffSnapshots(before, snapshot(server.workspace));
  report.bytesLostFiles += changes.filter((c) => !c.endsWith("appeared")).length;
  for (const c of changes) report.violations.push(`round ${round}: ${c}`);
  const recorded = await writesSince(server, mark);
  if (recorded.backups > 0 || recorded.succeeded > 0) report.violations.push(`round ${round}: ${recorded.succeeded} write(s) and ${recorded.backups} backup(s) recorded for failed calls`);
  for (const t of findTempFiles(server.workspace)) report.violations.push(`round ${round}: temp file left: ${t}`);
}

/** After the fault is lifted: a small write through each door succeeds and is backed up. */
async function recoveryRound(server: TestServer, doors: Door[], report: FaultReport, round: number): Promise<void> {
  for (const door of doors) {
    const file = path.join(server.workspace, "keep.txt");
    const old = readOrNull(file);
    const content = `recovered ${door.name} ${round}\n${keepText()}`;
    const answer = await door.call("write_file", { path: "keep.txt", content });
    report.recoveries++;
    if (!answer.body?.ok) {
      report.violations.push(`recovery write through ${door.name} failed: ${describeAnswer(answer)}`);
      continue;
    }
    if (!readOrNull(file)!.equals(Buffer.from(content))) report.violations.push(`recovery write through ${door.name} did not land`);
    if (old && !answer.body.data.backup_id) report.violations.push(`recovery write through ${door.name} has no backup`);
    // Leave the file as the next round expects it.
    fs.writeFileSync(file, keepText());
  }
}

async function withDoors<T>(server: TestServer, fn: (doors: Door[]) => Promise<T>): Promise<T> {
  const doors = [httpDoor(server), await mcpDoor(server)];
  try {
    return await fn(doors);
  } finally {
    await Promise.all(doors.map((d) => d.close()));
  }
}

const isWriteFailed = (reason: string) => (a: DoorAnswer) => a.body?.ok === false && a.body.error?.name === "write_failed" && a.body.error.detail?.reason === reason;

/**
 * Disk full: the workspace is a small tmpfs (large enough for the server's start-up health check,
 * which wants 100 MiB free), filled to 256 KiB of free space before each round; each round
 * replaces, edits and creates 1 MiB files (ENOSPC mid-write), then lifts the fault by freeing space.
 */
export async function runDiskFull(rounds: number): Promise<FaultReport> {
  const report = newReport("disk full (tmpfs workspace, ENOSPC)");
  const mount = await fsp.mkdtemp(path.join(os.tmpdir(), "ar-full-"));
  mountTmpfs(mount, 112 * 1024 * 1024);
  let server: TestServer | null = null;
  try {
    fs.writeFileSync(path.join(mount, "keep.txt"), keepText());
    server = await startTestServer({ workspace: mount });
    await allowTools(server, WRITE_TOOLS);
    const big = "x".repeat(1024 * 1024);
    await withDoors(server, async (doors) => {
      for (let round = 0; round < rounds; round++) {
        report.runs++;
        const filler = path.join(mount, "filler.bin");
        fs.writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(mount) - 256 * 1024)));
        await faultRound(server!, doors, report, round, big, isWriteFailed("enospc"));
        fs.rmSync(filler);
        await recoveryRound(server!, doors, report, round);
      }
    });
  } finally {
    await server?.stop();
    unmount(mount);
    if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
  return report;
}

/** Read-only workspace: the tmpfs workspace is remounted read-only for each round, then read-write. */
export async function runReadOnly(rounds: number): Promise<FaultReport> {
  const report = newReport("read-only workspace (EROFS)");
  const mount = await fsp.mkdtemp(path.join(os.tmpdir(), "ar-ro-"));
  mountTmpfs(mount, 112 * 1024 * 1024);
  let server: TestServer | null = null;
  try {
    fs.writeFileSync(path.join(mount, "keep.txt"), keepText());
    server = await startTestServer({ workspace: mount });
    await allowTools(server, WRITE_TOOLS);
    await withDoors(server, async (doors) => {
      for (let round = 0; round < rounds; round++) {
        report.runs++;
        remount(mount, true);
        try {
          await faultRound(server!, doors, report, round, "changed\n", isWriteFailed("erofs"));
          for (const door of doors) {
            const read = await door.call("read_file", { path: "keep.txt", limit: 2 });
            if (!read.body?.ok) report.violations.push(`read_file on the read-only workspace failed through ${door.name}: ${describeAnswer(read)}`);
          }
        } finally {
          remount(mount, false);
        }
        await recoveryRound(server!, doors, report, round);
      }
    });
  } finally {
    await server?.stop();
    unmount(mount);
    if (server) fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
  return report;
}

/** A failed call that left no trace: an error answer and nothing written. */
const failedClosed = (a: DoorAnswer) => !a.body?.ok;

/**
 * Database locked: another connection holds SQLite's write lock (BEGIN EXCLUSIVE) for longer than
 * the server's busy timeout while the calls arrive; then it lets go and a write must work again.
 */
export async function runDatabaseLocked(rounds: number): Promise<FaultReport> {
  const report = newReport("database locked (SQLite write lock held past the 10 s busy timeout)");
  const server = await startTestServer();
  try {
    fs.writeFileSync(path.join(server.workspace, "keep.txt"), keepText());
    await allowTools(server, WRITE_TOOLS);
    await withDoors(server, async (doors) => {
      for (let round = 0; round < rounds; round++) {
        report.runs++;
        const lock = new Database(server.databaseUrl.slice("file:".length));
        const mark = await watermark(server);
        const before = snapshot(server.workspace);
        lock.exec("BEGIN EXCLUSIVE");
        try {
          // One call per door, one after the other: better-sqlite3 waits for a lock synchronously,
          // so each blocked query holds the server's event loop for the whole busy timeout.
          for (const door of doors) {
            const a = await door.call("write_file", { path: "keep.txt", content: `changed while locked ${round}\n` });
            report.faultsInjected++;
            const key = describeAnswer(a);
            report.answers[key] = (report.answers[key] ?? 0) + 1;
            if (!failedClosed(a)) report.violations.push(`a call succeeded while the database was locked: ${key}`);
          }
        } finally {
          lock.exec("ROLLBACK");
          lock.close();
        }
        const changes = diffSnapshots(before, snapshot(server.workspace));
        report.bytesLostFiles += changes.length;
        for (const c of changes) report.violations.push(`round ${round}: ${c} while the database was locked`);
        const recorded = await writesSince(server, mark);
        if (recorded.succeeded > 0) report.violations.push(`round ${round}: ${recorded.succeeded} write(s) recorded as succeeded while locked`);
        await recoveryRound(server, doors, report, round);
      }
    });
  } finally {
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
    fs.rmSync(server.workspace, { recursive: true, force: true });
  }
  return report;
}

/**
 * Database unavailable: the server runs on a private PostgreSQL server (scripts/pg-local.sh, from
 * Debian's packages) that is stopped under it for each round, then started again. (A SQLite file
 * cannot be taken away from a running process: its open descriptors keep working.)
 * @returns the report; `recoveredWithoutRestart` tells whether the server worked again by itself
 */
export async function runDatabaseUnavailable(rounds: number): Promise<FaultReport & { recoveredWithoutRestart: boolean }> {
  const report = { ...newReport("database unavailable (PostgreSQL stopped under the server)"), recoveredWithoutRestart: true };
  const pgDir = await fsp.mkdtemp(path.join(os.tmpdir(), "ar-pg-"));
  await fsp.chmod(pgDir, 0o755); // pg-local.sh runs PostgreSQL as the postgres user when we are root
  const pgData = path.join(pgDir, "data");
  const port = await freePort();
  const pgLocal = (...args: string[]) => execFileSync("bash", [path.resolve("scripts/pg-local.sh"), ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  let server: TestServer | null = null;
  try {
    const databaseUrl = pgLocal("start", pgData, String(port));
    server = await startTestServer({ databaseUrl });
    fs.writeFileSync(path.join(server.workspace, "keep.txt"), keepText());
    await allowTools(server, WRITE_TOOLS);
    await withDoors(server, async (doors) => {
      for (let round = 0; round < rounds; round++) {
        report.runs++;
        const before = snapshot(server!.workspace);
        pgLocal("stop", pgData);
        try {
          for (const door of doors) {
            for (const { tool, args } of faultCalls("changed while the database is down\n", round)) {
              const a = await door.call(tool, args);
              report.faultsInjected++;
              const key = describeAnswer(a);
              report.answers[key] = (report.answers[key] ?? 0) + 1;
              if (!failedClosed(a)) report.violations.push(`a call succeeded while the database was down: ${key}`);
            }
          }
        } finally {
          pgLocal("start", pgData, String(port));
        }
        const changes = diffSnapshots(before, snapshot(server!.workspace));
        report.bytesLostFiles += changes.length;
        for (const c of changes) report.violations.push(`round ${round}: ${c} while the database was down`);
        const probe = await doors[0].call("read_file", { path: "keep.txt", limit: 1 });
        if (!probe.body?.ok) {
          report.recoveredWithoutRestart = false;
          report.violations.push(`the server did not recover once the database was back: ${describeAnswer(probe)}`);
        }
        await recoveryRound(server!, doors, report, round);
      }
    });
  } finally {
    await server?.stop();
    if (server) {
      fs.rmSync(server.workspace, { recursive: true, force: true });
      fs.rmSync(server.dataDir, { recursive: true, force: true });
    }
    pgLocal("stop", pgData);
    fs.rmSync(pgDir, { recursive: true, force: true });
  }
  return report;
}

export interface FlipRaceReport {
  /** Times the folder was flipped (removed, made a symlink to an outside directory, made again). */
  flips: number;
  writes: number;
  /** Answers by "status name/reason", e.g. {"200 ok": 120, "404 not_found/changed_during_call": 9}. */
  answers: Record<string, number>;
  /** Answers with a 5xx status or no envelope. */
  serverErrors: number;
  /** Files that appeared in the outside directory (must stay empty). */
  outsideFiles: string[];
  temps: string[];
}

/**
 * A folder of the workspace flipped while writes into it arrive: a child process removes `d`,
 * replaces it with a symlink to a directory outside the workspace, removes that and makes `d`
 * again, over and over (at most `maxFlips` times), while `concurrency` HTTP writers create files
 * `d/w-N.txt` (create_dirs: true) until `writes` writes were answered; then the flipping stops.
 * Every answer must be an envelope with a non-5xx status, and nothing may land outside.
 */
export async function runFolderFlipRace(writes: number, maxFlips = 100_000, concurrency = 4): Promise<FlipRaceReport> {
  const base = await fsp.realpath(os.tmpdir());
  const outer = await fsp.mkdtemp(path.join(base, "ar-flip-"));
  const workspace = path.join(outer, "ws");
  const outside = path.join(outer, "outside");
  fs.mkdirSync(path.join(workspace, "d"), { recursive: true });
  fs.mkdirSync(outside);
  const server = await startTestServer({ workspace });
  const report: FlipRaceReport = { flips: 0, writes: 0, answers: {}, serverErrors: 0, outsideFiles: [], temps: [] };
  try {
    await allowTools(server, WRITE_TOOLS);
    const door = httpDoor(server);
    const script = `
      const fs = require("node:fs");
      const [d, out, n] = [process.argv[1], process.argv[2], Number(process.argv[3])];
      const step = (f) => { try { f(); } catch {} }; // a writer may have made d again meanwhile
      const hold = (ms) => { const until = Date.now() + ms; while (Date.now() < until); };
      let i = 0;
      process.on("SIGTERM", () => { step(() => fs.rmSync(d, { recursive: true, force: true })); step(() => fs.mkdirSync(d)); process.stdout.write(String(i)); process.exit(0); });
      const loop = () => {
        for (let k = 0; k < 50 && i < n; k++, i++) {
          step(() => fs.rmSync(d, { recursive: true, force: true }));
          step(() => fs.symlinkSync(out, d));
          hold(1);
          step(() => fs.rmSync(d, { recursive: true, force: true }));
          step(() => fs.mkdirSync(d));
          hold(2);
        }
        if (i < n) setImmediate(loop); else { process.stdout.write(String(i)); process.exit(0); }
      };
      loop();`;
    const flipper = spawn(process.execPath, ["-e", script, path.join(workspace, "d"), outside, String(maxFlips)], { stdio: ["ignore", "pipe", "ignore"] });
    let flipped = "";
    flipper.stdout!.on("data", (d) => (flipped += d));
    const done = new Promise<void>((resolve) => flipper.once("exit", () => resolve()));
    let running = true;
    void done.then(() => (running = false));
    const writer = async (w: number) => {
      for (let i = 0; running && report.writes < writes; i++) {
        const a = await door.call("write_file", { path: `d/w-${w}-${i}.txt`, content: `writer ${w} write ${i}\n`, create_dirs: true });
        report.writes++;
        const key = a.body ? `${a.status} ${a.body.ok ? "ok" : `${a.body.error?.name}${a.body.error?.detail?.reason ? `/${a.body.error.detail.reason}` : ""}`}` : `${a.status} no envelope`;
        report.answers[key] = (report.answers[key] ?? 0) + 1;
        if (a.status >= 500 || !a.body) report.serverErrors++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, w) => writer(w)));
    flipper.kill("SIGTERM");
    await done;
    report.flips = Number(flipped) || 0;
    report.outsideFiles = fs.readdirSync(outside);
    report.temps = findTempFiles(workspace);
  } finally {
    await server.stop();
    fs.rmSync(server.dataDir, { recursive: true, force: true });
    fs.rmSync(outer, { recursive: true, force: true });
  }
  return report;
}
