/**
 * `npx tsx bench/profile-call.ts [--pg URL] [--n 200] [--concurrency 1] [--write] [--statements]`:
 * runs audited calls in process (no HTTP, no Next.js) against a fresh SQLite file (or the given
 * PostgreSQL database) under the balanced preset, and reports per call, for read_file, write_file
 * (allowed: it applies at once, backed up) and run_command (`echo`, in the sandbox), the SQL
 * statements the call ran (by kind: SELECT, INSERT, UPDATE, BEGIN, COMMIT …, and by connection:
 * Prisma's, or the process's own connection that the audit writer (and on SQLite the token
 * check) use), the transactions they made and the wall time. It is the profile behind the audit-write
 * work: what the pipeline asks of the database, independent of the HTTP layer.
 *
 * Statements are counted at the driver (lib/db.ts `sqlTracing`: better-sqlite3's `verbose` hook
 * on SQLite, each pooled pg client's `query` on PostgreSQL), so BEGIN and COMMIT count, and so do
 * the prepared statements that never pass through Prisma. A transaction is a BEGIN (SQLite
 * statements outside one are each their own implicit transaction, not counted here).
 *
 * Prints a Markdown table; `--statements` also lists each distinct statement with its count per
 * call (on stderr, numbers and strings left out), to see which step sends what. With `--write` it
 * profiles SQLite and, given `--pg`, PostgreSQL, each in a child process of its own (the database
 * is chosen when the process starts), and writes docs/BENCHMARKS-profile.md, which
 * `npm run bench` merges into docs/BENCHMARKS.md.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const argv = process.argv.slice(2);
const opt = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const N = Number(opt("n") ?? 200);
const ROOT = path.resolve(import.meta.dirname, "..");
const CONCURRENCY = Number(opt("concurrency") ?? 1);
const HEADER = "| tool | calls | ms/call wall | ms/call CPU | statements | by kind | Prisma / own connection | transactions (BEGIN) | audit writer transactions |";

/** `--write`: one child per provider, their tables merged into docs/BENCHMARKS-profile.md. */
function writeReport(): void {
  const pg = opt("pg");
  const passOn = ["--n", String(N), "--concurrency", String(CONCURRENCY)];
  const run = (extra: string[]) =>
    execFileSync(process.execPath, [...process.execArgv, path.join(ROOT, "bench/profile-call.ts"), ...passOn, ...extra], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
      .split("\n")
      .filter((l) => l.startsWith("| ") && !l.startsWith("| tool"));
  const rows = [...run([]).map((r) => `| SQLite | ${r.slice(2)}`), ...(pg ? run(["--pg", pg]).map((r) => `| PostgreSQL | ${r.slice(2)}`) : [])];
  const md = [
    "## SQL statements per call (bench/profile-call.ts)",
    "",
    `Measured ${new Date().toISOString()} by \`npx tsx bench/profile-call.ts --write --n ${N}${pg ? " --pg …" : ""}\` on ${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown CPU"}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end (the machine is shared).`,
    "",
    `Audited calls in process (no HTTP, no Next.js) on a fresh database under the balanced preset, ${CONCURRENCY === 1 ? "one call at a time" : `${CONCURRENCY} at a time`}, after a warm-up of 10 calls. ` +
      "Statements are counted at the driver (better-sqlite3's `verbose` hook; each pooled pg client's `query`), so BEGIN and COMMIT count, and so do the statements of the process's own connection beside Prisma's (the audit writer's commits; on SQLite the token check too), which never pass through Prisma. A transaction is a BEGIN. " +
      "write_file overwrites one 200-byte file (backup and diff included); run_command runs `echo` in the bwrap sandbox with its change set captured.",
    "",
    `| database |${HEADER.slice(1)}`,
    `|---${"|---".repeat(HEADER.split("|").length - 2)}|`,
    ...rows,
    "",
    "The statements, by step (`--statements` lists them): on SQLite each audit writer transaction is BEGIN, a read of the chain's last event and of the signed head, the row change (the ToolCall INSERT, with a status change of the same batch folded into it, or a status UPDATE), an event INSERT per audit write, then the head upsert and COMMIT, all prepared statements in process. On PostgreSQL, where each statement is a round trip, a transaction is three of them plus one per status UPDATE: BEGIN with the advisory lock and both reads in one multi-statement query, one statement writing every row (the calls inserted, the events, the head and the announcements, as data-modifying CTEs), and COMMIT. A read's three audit writes (received, running, outcome) take two transactions, a write's or a command's three. write_file adds about three Prisma statements of its own (the backup row, and the blob's lookup and insert unless the same content is stored already); the few SELECTs of agent, workspace and rules are the one-second caches refilling.",
    "",
  ].join("\n");
  fs.writeFileSync(path.join(ROOT, "docs/BENCHMARKS-profile.md"), md);
  console.log(md);
}

if (argv.includes("--write")) {
  writeReport();
  process.exit(0);
}

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-profile-")));
const workspace = path.join(tmp, "ws");
fs.mkdirSync(workspace);
fs.writeFileSync(path.join(workspace, "small.txt"), "hello\n".repeat(50));
process.env.AGENT_REACH_WORKSPACE = workspace;
process.env.AGENT_REACH_DATA_DIR = path.join(tmp, "data");
process.env.DATABASE_URL = opt("pg") ?? `file:${path.join(tmp, "data", "agent-reach.db")}`;
process.env.AGENT_REACH_HOST_ID = "profile";
process.env.AGENT_REACH_DEFAULT_PRESET = "balanced";
// Before any connection opens: lib/db.ts reads it when it creates the client and the writer's connection.
process.env.AGENT_REACH_SQL_TRACE = "1";

/** One profiled tool: its name, the arguments of call `i`, and how many calls to time. */
interface Profiled {
  label: string;
  tool: string;
  args: (i: number) => Record<string, unknown>;
  calls: number;
}

const PROFILED: Profiled[] = [
  { label: "read_file (300 B)", tool: "read_file", args: () => ({ path: "small.txt" }), calls: N },
  { label: "write_file (allowed, overwrites 1 file)", tool: "write_file", args: (i) => ({ path: "notes.txt", content: `note ${i}\n`.repeat(20) }), calls: N },
  // Each command starts a bwrap sandbox and captures its change set: slower, so fewer calls.
  { label: "run_command (echo, sandboxed)", tool: "run_command", args: (i) => ({ command: `echo call ${i}` }), calls: Math.max(10, Math.ceil(N / 4)) },
];

type Counts = Map<string, number>;

async function main() {
  const { bootstrap } = await import("@/lib/runtime/bootstrap");
  await bootstrap({} as NodeJS.ProcessEnv);
  const { db } = await import("@/lib/db");
  const kinds: Counts = new Map();
  const origins: Counts = new Map();
  const texts: Counts = new Map();
  const listStatements = argv.includes("--statements");
  let counting = false;
  (globalThis as unknown as { agentReachSqlTrace?: (sql: string, origin: string) => void }).agentReachSqlTrace = (sql, origin) => {
    if (!counting) return;
    // A multi-statement query (the PostgreSQL writer's "BEGIN; SELECT …") counts as its first statement.
    const kind = sql.trim().split(/\s+/)[0].toUpperCase().replace(/;$/, "");
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    origins.set(origin, (origins.get(origin) ?? 0) + 1);
    if (listStatements) {
      const text = `${origin}: ${sql.replace(/\s+/g, " ").replace(/'[^']*'|\b\d+(\.\d+)?\b/g, "?").slice(0, 140)}`;
      texts.set(text, (texts.get(text) ?? 0) + 1);
    }
  };
  const { callTool } = await import("@/lib/gateway/call-tool");
  const { writerStats } = await import("@/lib/audit/writer");
  const agentRow = await db().agent.findFirstOrThrow({ select: { id: true, name: true } });
  const caller = { door: "http" as const, agent: { id: agentRow.id, name: agentRow.name }, sessionKey: "profile" };
  const provider = process.env.DATABASE_URL!.split(":")[0];
  console.log(`${provider}, concurrency ${CONCURRENCY}, balanced preset; figures are per call`);
  console.log(HEADER);
  console.log(`|---${"|---".repeat(HEADER.split("|").length - 3)}|`);

  for (const p of PROFILED) {
    const run = async (i: number, session: string) => {
      const env = await callTool({ ...caller, sessionKey: session }, p.tool, p.args(i), { waitMs: 0 });
      if (!env.ok) throw new Error(`${p.tool}: ${JSON.stringify(env.error)}`);
    };
    // Warm up: the session row, token and rule caches, prepared statements, the sandbox probe.
    for (let i = 0; i < 10; i++) await run(i, "profile");
    kinds.clear();
    origins.clear();
    texts.clear();
    const before = writerStats();
    counting = true;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, a) => {
        while (next < p.calls) await run(next++, `profile-${a}`);
      }),
    );
    const elapsed = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    counting = false;
    const after = writerStats();
    const per = (v: number) => (v / p.calls).toFixed(2);
    const total = [...kinds.values()].reduce((a, b) => a + b, 0);
    const byKind = [...kinds.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${per(v)}`).join(", ");
    const begins = [...kinds.entries()].filter(([k]) => k === "BEGIN").reduce((a, [, v]) => a + v, 0);
    console.log(
      `| ${p.label} | ${p.calls} | ${(elapsed / p.calls).toFixed(2)} | ${((cpu.user + cpu.system) / 1000 / p.calls).toFixed(2)} | ${per(total)} | ${byKind || "none"} | ` +
        `${per(origins.get("prisma") ?? 0)} / ${per(origins.get("own") ?? 0)} | ${per(begins)} | ${per(after.transactions - before.transactions)} |`,
    );
    for (const [text, n] of [...texts.entries()].sort((a, b) => b[1] - a[1])) console.error(`  ${p.tool} ${(n / p.calls).toFixed(2)}  ${text}`);
    if (total === 0) throw new Error(`${p.tool}: no statement was counted; is statement tracing wired (lib/db.ts sqlTracing)?`);
  }
  await db().$disconnect();
  fs.rmSync(tmp, { recursive: true, force: true });
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
