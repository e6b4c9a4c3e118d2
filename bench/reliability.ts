/**
 * `npm run reliability`: the long forms of the reliability harnesses (crash consistency, faults,
 * door fuzzing), run against the real server, and docs/RELIABILITY.md rewritten with what each
 * fault test does and its counts. The bounded short forms of the same harnesses run in CI as
 * tests/reliability/*.test.ts.
 *
 * - crash consistency: 1,000 writes and edits with SIGKILLs of the server at random moments;
 * - disk full, read-only workspace (tmpfs mounts: needs root on Linux);
 * - database locked (SQLite), database unavailable (a private PostgreSQL stopped under the server);
 * - door fuzzing: random and hostile arguments to every tool over HTTP and MCP.
 *
 * Flags: `--quick` runs small counts (a smoke run of the script itself; the report says so).
 * Exits 1 when any harness reported a violation (the report is written anyway).
 */
import fs from "node:fs";
import os from "node:os";
import { runCrashCampaign, type CrashReport } from "@/tests/reliability/harness/crash";
import { runDatabaseLocked, runDatabaseUnavailable, runDiskFull, runReadOnly, type FaultReport } from "@/tests/reliability/harness/faults";
import { runDoorFuzz, type FuzzReport } from "@/tests/reliability/harness/fuzz";

const quick = process.argv.includes("--quick");
const log = (line: string) => console.error(`[reliability] ${new Date().toISOString().slice(11, 19)} ${line}`);

const COUNTS = quick
  ? { crashOps: 60, diskFull: 1, readOnly: 1, locked: 1, unavailable: 1, fuzz: 100 }
  : { crashOps: 1000, diskFull: 10, readOnly: 10, locked: 3, unavailable: 5, fuzz: 1500 };
const CRASH_SEED = 20260802;
const FUZZ_SEED = 20260803;

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T & { seconds: number }> {
  log(`${label}…`);
  const t0 = Date.now();
  const result = await fn();
  const seconds = Math.round((Date.now() - t0) / 1000);
  log(`${label}: done in ${seconds} s`);
  return { ...result, seconds };
}

const table = (header: string[], rows: (string | number)[][]) =>
  [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

const violationsText = (v: string[]) => (v.length === 0 ? "Violations: none." : `Violations (${v.length}):\n\n${v.map((x) => `- ${x.replace(/\n/g, " ")}`).join("\n")}`);

function crashSection(r: CrashReport & { seconds: number }): string {
  return [
    "## Crash consistency (SIGKILL during writes and edits)",
    "",
    "Three writers send write_file and edit_file calls (with expected_sha256) over the HTTP door to a real server on a SQLite file, one call at a " +
      "time per file, on seeded text files of 2 KB to 1.5 MB plus files created in new directories. At a random moment (0.3-2.5 s into each " +
      "round) the whole server process group gets SIGKILL; the server is then started again on the same database and workspace. After every " +
      "kill the harness checks, byte for byte: each file holds its old bytes or the new bytes of the call in flight (never a mix, a prefix or " +
      "nothing), and every file without a call in flight holds its last confirmed bytes; after the next start no temp file is left (the start-up " +
      "sweep of lib/workspace/temp-sweep.ts removes the orphans of our atomic writes, by their exact name); a call whose row says succeeded left " +
      "its file with that row's sha256. At the end and after every restart the audit log is checked: every call in a final status (calls a " +
      "kill caught are `interrupted`), none ran twice (one `call.running` event at most), every succeeded write that replaced bytes has its " +
      "backup row holding the old bytes' sha256 and the blob stored, every interrupted write says which file it touched, and the event hash " +
      "chain verifies. Every confirmed call is found as succeeded with the sha256 it reported.",
    "",
    table(
      ["runs (kills)", "tool calls", "confirmed", "in flight at a kill", "of those applied", "temp files left by kills", "temp files after restart", "interrupted rows", "backups checked", "bytes lost", "seed", "time"],
      [[r.kills, r.operations, r.confirmed, r.inFlightAtKill, r.inFlightApplied, r.tempFilesLeft, r.tempFilesAfterRestart, r.interruptedRows, r.backupsChecked, `${r.bytesLostFiles} files`, r.seed, `${r.seconds} s`]],
    ),
    "",
    violationsText(r.violations),
  ].join("\n");
}

const FAULT_TEXT: Record<string, string> = {
  diskFull:
    "The workspace is a tmpfs (112 MiB, so the start-up health check's 100 MiB floor passes) filled to 256 KiB of free space before each " +
    "round. Each round sends, through the HTTP door and the MCP door, a 1 MiB write_file over an existing file, an edit_file that grows it by " +
    "1 MiB, and a 1 MiB write_file creating `new-N/deeper/created.txt`: each must fail with `write_failed` reason `enospc`. Then the workspace is " +
    "compared with its snapshot (every file's sha256, every directory), no temp file may exist, and no backup or succeeded write may be " +
    "recorded for those calls. Then the filler is removed and a write through each door must succeed with a backup.",
  readOnly:
    "The workspace tmpfs is remounted read-only for each round: the same three calls through both doors must fail with `write_failed` reason " +
    "`erofs` and change nothing, read_file must still work; after remounting read-write a write through each door must succeed with a backup.",
  locked:
    "Another connection holds SQLite's write lock (BEGIN EXCLUSIVE) on the server's database for the whole round, past the server's 10 s busy " +
    "timeout. A write_file through each door must fail (the call cannot even get its audit row, so it must not run), the workspace must be " +
    "unchanged and no succeeded write recorded; once the lock is released a write through each door must succeed.",
  unavailable:
    "The server runs on a private PostgreSQL (scripts/pg-local.sh) which is stopped under it for each round: the three calls through both doors " +
    "must fail and change nothing; PostgreSQL is started again and the server must serve reads and writes without a restart.",
};

function faultSection(title: string, key: keyof typeof FAULT_TEXT, r: FaultReport & { seconds: number; recoveredWithoutRestart?: boolean }): string {
  const answers = Object.entries(r.answers)
    .map(([k, n]) => `\`${k.replace(/\n/g, " ").replace(/`/g, "'").slice(0, 160)}\` × ${n}`)
    .join("; ");
  return [
    `## ${title}`,
    "",
    FAULT_TEXT[key],
    "",
    table(
      ["runs", "faults injected (calls that met the fault)", "recovery writes", "bytes lost", "time"],
      [[r.runs, r.faultsInjected, r.recoveries, `${r.bytesLostFiles} files`, `${r.seconds} s`]],
    ),
    "",
    `How the doors answered the faulted calls: ${answers}.` + (r.recoveredWithoutRestart !== undefined ? ` Recovered without a restart: ${r.recoveredWithoutRestart ? "yes" : "no"}.` : ""),
    "",
    violationsText(r.violations),
  ].join("\n");
}

function fuzzSection(r: FuzzReport & { seconds: number }): string {
  const answers = Object.entries(r.answers)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => [k, n]);
  return [
    "## Bad input at the doors (property-based fuzzing)",
    "",
    "fast-check generates tool calls for every tool in GET /api/tools (and names that are no tool): mostly the tool's own fields with values of " +
      "their type but hostile content (path escapes through `..`, absolute paths, a symlink to a sentinel directory beside the workspace, " +
      "percent-encoding, NUL bytes, control and bidi characters, lone surrogates, 5,000-character and 300-level paths, shell metacharacters, " +
      "metadata URLs, sha256 patterns), sometimes values of any type, extra keys, `__proto__` payloads or no object at all. Each call goes to the " +
      "HTTP door and to the MCP door (official SDK client) of a server whose policy runs writes unattended (run_command and fetch_url keep the " +
      "default ask with no wait: parsed, fenced and decided, never run). Every answer must be below 500, a well-formed envelope (MCP: a tool " +
      "result, or JSON-RPC -32602 for arguments that are not an object), never `internal`. After the run the server must be healthy, the " +
      "sentinel directory beside the workspace byte-for-byte unchanged, nothing new beside the workspace, and no temp file in it.",
    "",
    table(["calls (HTTP + MCP)", "seed", "violations", "time"], [[`${r.calls.http} + ${r.calls.mcp}`, r.seed, r.violations.length, `${r.seconds} s`]]),
    "",
    "Answers by door, status and error name:",
    "",
    table(["answer", "calls"], answers),
    "",
    violationsText(r.violations),
  ].join("\n");
}

async function main(): Promise<void> {
  const crash = await timed("crash consistency", () =>
    runCrashCampaign({ operations: COUNTS.crashOps, writers: 3, killDelayMs: [300, 2500], seed: CRASH_SEED, fileSizes: [2_000, 64_000, 256_000, 1_500_000], log }),
  );
  const diskFull = await timed("disk full", () => runDiskFull(COUNTS.diskFull));
  const readOnly = await timed("read-only workspace", () => runReadOnly(COUNTS.readOnly));
  const locked = await timed("database locked", () => runDatabaseLocked(COUNTS.locked));
  const unavailable = await timed("database unavailable", () => runDatabaseUnavailable(COUNTS.unavailable));
  const fuzz = await timed("door fuzzing", () => runDoorFuzz({ runs: COUNTS.fuzz, seed: FUZZ_SEED }));

  const all = [crash, diskFull, readOnly, locked, unavailable, fuzz];
  const totalViolations = all.reduce((n, r) => n + r.violations.length, 0);
  const bytesLost = [crash, diskFull, readOnly, locked, unavailable].reduce((n, r) => n + r.bytesLostFiles, 0);
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const summary = table(
    ["test", "runs", "faults injected", "bytes lost", "violations"],
    [
      ["crash consistency (SIGKILL)", `${crash.kills} kills, ${crash.operations} calls`, `${crash.kills} kills (${crash.inFlightAtKill} calls in flight)`, crash.bytesLostFiles, crash.violations.length],
      ["disk full", diskFull.runs, diskFull.faultsInjected, diskFull.bytesLostFiles, diskFull.violations.length],
      ["read-only workspace", readOnly.runs, readOnly.faultsInjected, readOnly.bytesLostFiles, readOnly.violations.length],
      ["database locked", locked.runs, locked.faultsInjected, locked.bytesLostFiles, locked.violations.length],
      ["database unavailable", unavailable.runs, unavailable.faultsInjected, unavailable.bytesLostFiles, unavailable.violations.length],
      ["door fuzzing", `${fuzz.calls.http + fuzz.calls.mcp} calls`, `${fuzz.calls.http + fuzz.calls.mcp} hostile calls`, "—", fuzz.violations.length],
    ],
  );
  const doc = [
    "# Reliability",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run reliability\`${quick ? " --quick (small counts)" : ""} on ${os.cpus().length} × ` +
      `${os.cpus()[0]?.model ?? "unknown CPU"}, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}, ` +
      `Agent Reach ${pkg.version} (Next.js ${pkg.dependencies.next}, SQLite via better-sqlite3 ${pkg.dependencies["better-sqlite3"]}). Every figure ` +
      `comes from the real server (\`scripts/start.ts\` → \`next start\`) driven through its doors. The same harnesses (tests/reliability/harness/) ` +
      `run in CI in a bounded short form: tests/reliability/*.test.ts.`,
    "",
    `**Bytes lost: ${bytesLost}. Violations: ${totalViolations}.**`,
    "",
    summary,
    "",
    crashSection(crash),
    "",
    faultSection("Disk full", "diskFull", diskFull),
    "",
    faultSection("Read-only workspace", "readOnly", readOnly),
    "",
    faultSection("Database locked", "locked", locked),
    "",
    faultSection("Database unavailable", "unavailable", unavailable),
    "",
    fuzzSection(fuzz),
    "",
    "## Found and fixed while building these harnesses",
    "",
    "- A call the server was killed under while still `received` (its row written, the policy not yet decided) stayed `received` forever: " +
      "`markInterrupted` (lib/approvals/queue.ts) now ends those as `interrupted` too (detail `started: false`), next to the `running` ones.",
    "- An allowed call's row got its target (`pathRaw`, `pathResolved`, `target`) only when it finished, so a write a crash interrupted did not " +
      "say which file it touched: lib/gateway/call-tool.ts now stores them with the move to `running`, and `markInterrupted` links the backup an " +
      "interrupted write had already saved (`backupId`, `shaBefore`).",
    "- Temp files of writes a crash interrupted stayed in the workspace: the start-up sweep lib/workspace/temp-sweep.ts (called from " +
      "lib/runtime/server-start.ts) removes regular files named exactly `.<16 hex>.agent-reach.tmp` older than the start (and older than any call " +
      "another instance is running in the workspace), never following symlinks.",
    "- An MCP `tools/call` whose `arguments` is not an object was answered JSON-RPC -32603 (internal error) by the SDK; lib/mcp/handle-request.ts " +
      "now answers -32602 (invalid params).",
    "",
    "## Durability of the audit log (SQLite)",
    "",
    "The SQLite database runs in WAL mode with `synchronous = NORMAL` on every connection (lib/db.ts, lib/audit/writer.ts). What that means for the audit guarantees:",
    "",
    "- **Process crash (SIGKILL, OOM kill, a bug): nothing committed is lost.** A commit is complete once its frames are in the WAL file (the operating system's page cache holds them even when the process dies). The \"received\" record of a call is committed before its tool runs, so a call killed between \"received\" and its run is found at the next start and marked `interrupted` (tests/audit/pipeline.test.ts kills a process at exactly that point).",
    "- **Power cut or kernel crash: the newest commits may be lost**, those made since the WAL was last synced (at each checkpoint, by default every 1,000 pages, i.e. a few hundred calls). The database stays consistent (no torn rows; the hash chain stays linear): it rolls back to an earlier point, as if the last calls had not arrived. Those calls may have run (a write may be on disk without its record). The signed head is written in the same transactions, so after such a loss `verify` still passes: it cannot tell a power cut from nothing having happened.",
    "- **Why not `synchronous = FULL`:** FULL fsyncs the WAL on every commit (about 6 ms on this machine's disk); with three commits per call that alone held one agent to well under 100 audited calls per second while the CPU waited. NORMAL keeps the crash guarantee that matters for the pipeline (a process dying under a call) and gives up only the power-cut window. An operator who needs every commit on the platter can run on PostgreSQL (`synchronous_commit = on`, its default), where group commit shares each fsync between concurrent calls.",
    "- **Group commit:** concurrent calls' audit writes share one transaction (lib/audit/writer.ts): a call waits for the transaction that holds its record to commit, never less; under load one commit carries many calls' records.",
    "",
    "## Known limits (not faults of the data, noted for operators)",
    "",
    "- A SQLite database locked by another process: every statement waits at most 25 ms synchronously (better-sqlite3 waits inside the call, blocking the event loop), then is retried on a timer with a back-off for up to 10 s, so other requests (health, dashboard reads) keep being served meanwhile. Past that the call fails closed with 503 `unavailable` (retryable, `Retry-After: 1`) on every door; so does a PostgreSQL server that is down or refuses connections, instead of a bare 500 or the driver's message. A call whose outcome could not be stored stays `running` and is marked `interrupted` at the next start.",
    "- write_failed (disk full, read-only file system) is HTTP 500 in the error table (lib/errors.ts); it is not caused by the agent's input.",
    "",
  ].join("\n");
  fs.mkdirSync("docs", { recursive: true });
  fs.writeFileSync("docs/RELIABILITY.md", doc);
  console.log(doc);
  if (totalViolations > 0) process.exit(1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
