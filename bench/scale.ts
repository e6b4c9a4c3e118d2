/**
 * `npm run bench:scale`: the store at scale, on SQLite and on PostgreSQL.
 * 1. Audited calls per second through the HTTP door with 1, 8 and 32 concurrent agents
 *    (read_file of a small file: token check, session, call row before the run, policy, outcome,
 *    hash-chained events).
 * 2. Dashboard queries with 1,000,000 calls in the log (100 sessions × 10,000 calls, seeded with
 *    SQL): a session's timeline, the sessions list, a filtered timeline search, the pending count.
 * Writes docs/BENCHMARKS-scale.md (merged into docs/BENCHMARKS.md by `npm run bench`).
 * Bounded: fixed call counts, loopback only; starts and stops its own PostgreSQL server.
 * Flags: `--quick` (fewer calls, 100,000 seeded rows) for a smoke run.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import Database from "better-sqlite3";
import { createClient } from "@/lib/db";
import { listSessions, loadTimeline, parseTimelineFilters } from "@/lib/dashboard/sessions";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

const quick = process.argv.includes("--quick");
const CALLS_PER_LEVEL = quick ? 200 : 1200;
const SESSIONS = quick ? 10 : 100;
const CALLS_PER_SESSION = 10_000;

type Row = (string | number)[];

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function throughput(server: TestServer): Promise<Row[]> {
  fs.writeFileSync(path.join(server.workspace, "small.txt"), "hello\n".repeat(50));
  for (let i = 0; i < 20; i++) await server.call("read_file", { path: "small.txt" }); // warm up
  const rows: Row[] = [];
  for (const agents of [1, 8, 32]) {
    let next = 0;
    const latencies: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: agents }, async (_, a) => {
        while (next < CALLS_PER_LEVEL) {
          next++;
          const s = performance.now();
          const res = await server.call("read_file", { path: "small.txt" }, { "x-agent-session": `bench-agent-${a}` });
          if (!res.body.ok) throw new Error(JSON.stringify(res.body));
          latencies.push(performance.now() - s);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    rows.push([agents, latencies.length, (latencies.length / seconds).toFixed(0), median(latencies).toFixed(1)]);
  }
  return rows;
}

/** Seeds SESSIONS × CALLS_PER_SESSION finished calls over the last 30 days. */
async function seed(url: string, workspaceId: string): Promise<number> {
  const t0 = performance.now();
  const total = SESSIONS * CALLS_PER_SESSION;
  const since = Date.now() - 30 * 24 * 3600 * 1000;
  if (url.startsWith("file:")) {
    const conn = new Database(url.slice(5));
    const ses = conn.prepare(`INSERT INTO "Session" (id, "workspaceId", "externalId", door, "startedAt", "lastCallAt") VALUES (?, ?, ?, 'http', ?, ?)`);
    const call = conn.prepare(
      `INSERT INTO "ToolCall" (id, "sessionId", "workspaceId", door, tool, "argsJson", target, "pathResolved", decision, status, "hostId", "createdAt", "finishedAt", "durationMs")
       VALUES (?, ?, ?, 'http', ?, '{}', ?, ?, 'allow', ?, 'bench', ?, ?, ?)`,
    );
    const tools = ["read_file", "list_directory", "search_files", "edit_file", "run_command", "write_file"];
    conn.transaction(() => {
      for (let s = 0; s < SESSIONS; s++) {
        const sid = `ses_bench_${s}`;
        ses.run(sid, workspaceId, `bench:${s}`, new Date(since).toISOString(), new Date().toISOString());
        for (let i = 0; i < CALLS_PER_SESSION; i++) {
          const n = s * CALLS_PER_SESSION + i;
          const at = new Date(since + n * 2000).toISOString();
          const target = `src/module-${n % 997}/file-${n % 13}.ts`;
          call.run(`call_bench_${n}`, sid, workspaceId, tools[n % 6], target, `/ws/${target}`, n % 50 === 0 ? "failed" : "succeeded", at, at, n % 300);
        }
      }
    })();
    conn.close();
  } else {
    const { Client } = await import("pg");
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(
      `INSERT INTO "Session" (id, "workspaceId", "externalId", door, "startedAt", "lastCallAt")
       SELECT 'ses_bench_' || s, $1, 'bench:' || s, 'http', now() - interval '30 days', now() FROM generate_series(0, $2 - 1) s`,
      [workspaceId, SESSIONS],
    );
    await client.query(
      `INSERT INTO "ToolCall" (id, "sessionId", "workspaceId", door, tool, "argsJson", target, "pathResolved", decision, status, "hostId", "createdAt", "finishedAt", "durationMs")
       SELECT 'call_bench_' || n, 'ses_bench_' || (n / $2), $1, 'http',
              (ARRAY['read_file','list_directory','search_files','edit_file','run_command','write_file'])[n % 6 + 1], '{}',
              'src/module-' || (n % 997) || '/file-' || (n % 13) || '.ts', '/ws/src/module-' || (n % 997) || '/file-' || (n % 13) || '.ts',
              'allow', CASE WHEN n % 50 = 0 THEN 'failed' ELSE 'succeeded' END, 'bench',
              now() - interval '30 days' + n * interval '2 seconds', now() - interval '30 days' + n * interval '2 seconds', n % 300
       FROM generate_series(0, $3 - 1) n`,
      [workspaceId, CALLS_PER_SESSION, total],
    );
    await client.query(`ANALYZE "ToolCall"; ANALYZE "Session"`);
    await client.end();
  }
  return performance.now() - t0;
}

async function queries(url: string): Promise<Row[]> {
  (globalThis as unknown as { agentReachDb?: unknown }).agentReachDb = createClient(url);
  const time = async (fn: () => Promise<unknown>) => {
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await fn();
      samples.push(performance.now() - t0);
    }
    return median(samples).toFixed(1);
  };
  const sid = `ses_bench_${Math.floor(SESSIONS / 2)}`;
  const rows: Row[] = [
    ["timeline of one session (10,000 calls)", await time(() => loadTimeline(sid, parseTimelineFilters({})))],
    ["timeline filtered: tool edit_file + text “module-42”", await time(() => loadTimeline(sid, parseTimelineFilters({ tool: "edit_file", q: "module-42" })))],
    ["sessions list, first page (50 sessions with counts)", await time(() => listSessions(1))],
  ];
  await (globalThis as unknown as { agentReachDb: { $disconnect(): Promise<void> } }).agentReachDb.$disconnect();
  (globalThis as unknown as { agentReachDb?: unknown }).agentReachDb = undefined;
  return rows;
}

async function main(): Promise<void> {
  const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-bench-pg-"));
  fs.chmodSync(pgDir, 0o755);
  const pgBase = execFileSync("bash", ["scripts/pg-local.sh", "start", path.join(pgDir, "data"), String(57000 + Math.floor(Math.random() * 1000))], { encoding: "utf8" }).trim();
  const lines: string[] = [];
  try {
    const results: Record<string, { throughput: Row[]; seedMs: number; queries: Row[] }> = {};
    for (const provider of ["SQLite", "PostgreSQL"] as const) {
      let databaseUrl: string | undefined;
      if (provider === "PostgreSQL") {
        const { Client } = await import("pg");
        const admin = new Client({ connectionString: pgBase });
        await admin.connect();
        await admin.query(`CREATE DATABASE bench_scale`);
        await admin.end();
        databaseUrl = pgBase.replace(/\/[^/]*$/, "/bench_scale");
      }
      const server = await startTestServer(databaseUrl ? { databaseUrl } : {});
      try {
        const t = await throughput(server);
        await server.stop();
        const url = server.databaseUrl;
        const workspaceId = await workspaceIdOf(url);
        const seedMs = await seed(url, workspaceId);
        results[provider] = { throughput: t, seedMs, queries: await queries(url) };
      } finally {
        await server.stop();
        fs.rmSync(server.workspace, { recursive: true, force: true });
        fs.rmSync(server.dataDir, { recursive: true, force: true });
      }
    }
    const total = (SESSIONS * CALLS_PER_SESSION).toLocaleString("en");
    lines.push(
      "## Scale: SQLite and PostgreSQL",
      "",
      `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:scale\`${quick ? " --quick" : ""} on ${os.cpus().length} × ${os.cpus()[0]?.model}; ` +
        "PostgreSQL 15 from Debian's packages on 127.0.0.1 (fsync off, as a throwaway benchmark server), one `next start` instance.",
      "",
      "### Audited calls per second (read_file of a small file over HTTP)",
      "",
      "| store | concurrent agents | calls | calls/s | median latency ms |",
      "|---|---|---|---|---|",
    );
    for (const [provider, r] of Object.entries(results)) for (const row of r.throughput) lines.push(`| ${provider} | ${row.join(" | ")} |`);
    lines.push(
      "",
      `### Dashboard queries with ${total} calls in the log`,
      "",
      `${SESSIONS} sessions × 10,000 calls seeded with SQL; median of 5 runs of the dashboard's own query functions (lib/dashboard/sessions.ts).`,
      "",
      "| store | query | median ms |",
      "|---|---|---|",
    );
    for (const [provider, r] of Object.entries(results)) {
      lines.push(`| ${provider} | seeding ${total} calls | ${r.seedMs.toFixed(0)} |`);
      for (const row of r.queries) lines.push(`| ${provider} | ${row.join(" | ")} |`);
    }
    lines.push("");
    fs.writeFileSync("docs/BENCHMARKS-scale.md", lines.join("\n"));
    console.log(lines.join("\n"));
  } finally {
    execFileSync("bash", ["scripts/pg-local.sh", "stop", path.join(pgDir, "data")]);
    fs.rmSync(pgDir, { recursive: true, force: true });
  }
}

async function workspaceIdOf(url: string): Promise<string> {
  const client = createClient(url);
  try {
    const ws = await client.workspace.findFirst({ select: { id: true } });
    if (!ws) throw new Error("no workspace registered");
    return ws.id;
  } finally {
    await client.$disconnect();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
