/**
 * `npx tsx bench/profile-call.ts [--pg URL] [--n 200] [--concurrency 8]`: runs audited read_file
 * calls in process (no HTTP, no Next.js) against a fresh SQLite file (or the given PostgreSQL
 * database) and reports, per call, the SQL statements Prisma sent (by kind: SELECT, INSERT,
 * UPDATE, BEGIN/COMMIT …) and the wall time. It is the profile behind the audit-write work: what
 * the pipeline asks of the database, independent of the HTTP layer.
 */
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
const CONCURRENCY = Number(opt("concurrency") ?? 1);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ar-profile-"));
const workspace = path.join(tmp, "ws");
fs.mkdirSync(workspace);
fs.writeFileSync(path.join(workspace, "small.txt"), "hello\n".repeat(50));
process.env.AGENT_REACH_WORKSPACE = workspace;
process.env.AGENT_REACH_DATA_DIR = path.join(tmp, "data");
process.env.DATABASE_URL = opt("pg") ?? `file:${path.join(tmp, "data", "agent-reach.db")}`;
process.env.AGENT_REACH_HOST_ID = "profile";

async function main() {
  const { bootstrap } = await import("@/lib/runtime/bootstrap");
  await bootstrap({} as NodeJS.ProcessEnv);
  const { db } = await import("@/lib/db");
  const kinds = new Map<string, number>();
  let counting = false;
  const client = db() as unknown as { $on?: (e: string, f: (q: { query: string }) => void) => void };
  const g = globalThis as unknown as { agentReachSqlTrace?: (sql: string) => void };
  g.agentReachSqlTrace = (sql: string) => {
    if (!counting) return;
    const kind = sql.trim().split(/\s+/)[0].toUpperCase();
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  };
  void client;
  const { callTool } = await import("@/lib/gateway/call-tool");
  const agentRow = await db().agent.findFirstOrThrow({ select: { id: true, name: true } });
  const caller = { door: "http" as const, agent: { id: agentRow.id, name: agentRow.name }, sessionKey: "profile" };
  for (let i = 0; i < 20; i++) await callTool(caller, "read_file", { path: "small.txt" }, { waitMs: 0 });
  const { writerStats } = await import("@/lib/audit/writer");
  const before = writerStats();
  counting = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, a) => {
      while (next < N) {
        next++;
        const env = await callTool({ ...caller, sessionKey: `profile-${a}` }, "read_file", { path: "small.txt" }, { waitMs: 0 });
        if (!env.ok) throw new Error(JSON.stringify(env));
      }
    }),
  );
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  counting = false;
  const per = [...kinds.entries()].sort().map(([k, v]) => `${k}=${(v / N).toFixed(2)}`).join(" ");
  console.log(`${process.env.DATABASE_URL!.split(":")[0]} concurrency=${CONCURRENCY} calls=${N} ${(N / (elapsed / 1000)).toFixed(0)} calls/s, ${(elapsed / N).toFixed(2)} ms/call wall, ${((cpu.user + cpu.system) / 1000 / N).toFixed(2)} ms/call CPU`);
  const after = writerStats();
  console.log(`Prisma statements per call: ${per || "none"}`);
  console.log(
    `audit writer per call: ${((after.transactions - before.transactions) / N).toFixed(2)} transactions, ${((after.operations - before.operations) / N).toFixed(2)} operations`,
  );
  await db().$disconnect();
  fs.rmSync(tmp, { recursive: true, force: true });
}
main().catch((err) => {
  console.error(err);
  process.exit(1);
});
