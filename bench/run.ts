/**
 * `npm run bench`: measures the gateway on this machine and rewrites docs/BENCHMARKS.md
 * (machine, date, versions, one table per section). Every figure comes from a real server
 * (`scripts/start.ts` → `next start` on a loopback port, SQLite file) driven over HTTP.
 *
 * Sections: read_file paging on a 500,000-line file and a 200 MiB file (latency per page, server
 * RSS); the cost of an audited HTTP call over the bare tool; approve → waiting agent latency.
 * Bounded: fixed call counts, loopback only, stops by itself.
 *
 * Flags: `--quick` uses fewer repetitions (for a smoke run).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { makeToolContext } from "@/tests/helpers/tool-context";
import { readFileTool } from "@/lib/tools/read-file";

const quick = process.argv.includes("--quick");
const REPS = quick ? 10 : 50;

interface Section {
  title: string;
  intro: string;
  header: string[];
  rows: (string | number)[][];
}

function quantiles(samples: number[]): { median: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p99: at(0.99) };
}

const ms = (v: number) => v.toFixed(1);

/** Resident set size of a process (MiB) from /proc; `peak` reads VmHWM. */
function rssMiB(pid: number, peak = false): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const m = new RegExp(`${peak ? "VmHWM" : "VmRSS"}:\\s+(\\d+) kB`).exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

async function timeCalls(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Writes `lines` lines `line-%06d` (continuing the pattern past 999,999) with streams. */
async function writeLog(file: string, targetBytes: number | null, lines: number | null): Promise<{ lines: number; bytes: number }> {
  const out = fs.createWriteStream(file);
  let n = 0;
  let bytes = 0;
  let buf = "";
  while ((lines !== null && n < lines) || (targetBytes !== null && bytes < targetBytes)) {
    n++;
    const line = `line-${String(n).padStart(6, "0")}\n`;
    buf += line;
    bytes += line.length;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once("drain", () => r()));
      buf = "";
    }
  }
  out.end(buf);
  await new Promise<void>((r) => out.once("finish", () => r()));
  return { lines: n, bytes };
}

async function readPaging(server: TestServer): Promise<Section> {
  const big = await writeLog(path.join(server.workspace, "big.log"), null, 500_000);
  const huge = await writeLog(path.join(server.workspace, "huge.log"), 200 * 1024 * 1024, null);
  const rows: (string | number)[][] = [];
  const rssBefore = rssMiB(server.pid);
  for (const [file, info] of [["big.log", big], ["huge.log", huge]] as const) {
    const first = await (async () => {
      const t0 = performance.now();
      const res = await server.call("read_file", { path: file, offset: info.lines - 5, limit: 5 });
      if (!res.body.ok) throw new Error(JSON.stringify(res.body));
      return performance.now() - t0;
    })();
    rows.push([file, `${(info.bytes / 1024 / 1024).toFixed(0)} MiB, ${info.lines.toLocaleString("en")} lines`, "last page, first read (cold index)", 1, ms(first), "", ""]);
    for (const [label, offset] of [["first page", 0], ["middle page", Math.floor(info.lines / 2)], ["last page", info.lines - 80]] as const) {
      const samples = await timeCalls(REPS, async () => {
        const res = await server.call("read_file", { path: file, offset, limit: 80 });
        if (!res.body.ok) throw new Error(JSON.stringify(res.body));
      });
      const q = quantiles(samples);
      rows.push([file, "", `${label} (offset ${offset.toLocaleString("en")}, 80 lines)`, REPS, ms(q.median), ms(q.p99), ""]);
    }
  }
  const rssAfter = rssMiB(server.pid);
  rows.push(["server RSS", "", "before → after all reads", "", "", "", `${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MiB (peak ${rssMiB(server.pid, true).toFixed(0)} MiB)`]);
  return {
    title: "read_file paging (HTTP, audited)",
    intro:
      "Pages of a 500,000-line file (case C12) and a 200 MiB file read through POST /api/tools/read_file. The first read of a file " +
      "streams it once (line count, sha256, line-offset index); later pages seek through the cached index. Latency is the " +
      "whole HTTP round trip including the audit rows.",
    header: ["file", "size", "page", "calls", "median ms", "p99 ms", "memory"],
    rows,
  };
}

async function auditOverhead(server: TestServer): Promise<Section> {
  fs.writeFileSync(path.join(server.workspace, "small.txt"), "hello\n".repeat(50));
  const ctx = makeToolContext(server.workspace);
  const direct = quantiles(
    await timeCalls(REPS * 4, () => readFileTool.run(readFileTool.input.parse({ path: "small.txt" }), ctx)),
  );
  const http = quantiles(
    await timeCalls(REPS * 4, async () => {
      const res = await server.call("read_file", { path: "small.txt" });
      if (!res.body.ok) throw new Error("read failed");
    }),
  );
  const health = quantiles(await timeCalls(REPS * 4, () => fetch(`${server.url}/api/health`).then((r) => r.arrayBuffer())));
  return {
    title: "Cost of an audited call",
    intro:
      "read_file of a 300-byte file: the tool's own work in-process, the same call through the HTTP door (token check, session, " +
      "ToolCall row before the run, policy, outcome row, three hash-chained events), and GET /api/health (HTTP plus one SELECT) for scale.",
    header: ["path", "calls", "median ms", "p99 ms"],
    rows: [
      ["read_file in-process (no audit)", REPS * 4, ms(direct.median), ms(direct.p99)],
      ["read_file over HTTP, audited", REPS * 4, ms(http.median), ms(http.p99)],
      ["GET /api/health", REPS * 4, ms(health.median), ms(health.p99)],
      ["audit + HTTP overhead (median difference)", "", ms(http.median - direct.median), ""],
    ],
  };
}

async function approvalLatency(server: TestServer): Promise<Section> {
  const samples: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const agent = server.call("write_file", { path: `approved/${i}.txt`, content: `${i}\n` }, { prefer: "wait=30" });
    let callId: string | undefined;
    while (!callId) {
      const list = await server.reviewer("GET", "/api/approvals");
      callId = list.body.approvals.find((a: { args: { path: string } }) => a.args.path === `approved/${i}.txt`)?.call_id;
      if (!callId) await new Promise((r) => setTimeout(r, 20));
    }
    const t0 = performance.now();
    const [res] = await Promise.all([agent, server.reviewer("POST", `/api/approvals/${callId}/approve`, {})]);
    samples.push(performance.now() - t0);
    if (!res.body.ok) throw new Error(JSON.stringify(res.body));
  }
  const q = quantiles(samples);
  return {
    title: "Approve → waiting agent",
    intro:
      "An agent's write_file waits (Prefer: wait=30); a reviewer approves through POST /api/approvals/{id}/approve. Measured from " +
      "sending the approval to the agent's response arriving (the write, its backup, its diff and the audit rows included).",
    header: ["approvals", "median ms", "p99 ms"],
    rows: [[REPS, ms(q.median), ms(q.p99)]],
  };
}

function render(sections: Section[]): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  const versions = JSON.parse(fs.readFileSync("package.json", "utf8")).dependencies;
  const lines = [
    "# Benchmarks",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench\`${quick ? " --quick" : ""} on ${os.cpus().length} × ${cpu}, ` +
      `${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}, ` +
      `Next.js ${versions.next}, Prisma ${versions["@prisma/client"]}, SQLite (better-sqlite3 ${versions["better-sqlite3"]}).`,
    "Figures are for orientation on this machine; nothing here is asserted by the test suite.",
    "",
  ];
  for (const s of sections) {
    lines.push(`## ${s.title}`, "", s.intro, "", `| ${s.header.join(" | ")} |`, `|${s.header.map(() => "---").join("|")}|`);
    for (const row of s.rows) lines.push(`| ${row.join(" | ")} |`);
    lines.push("");
  }
  const extra = path.join("docs", "BENCHMARKS-dashboard.md");
  if (fs.existsSync(extra)) lines.push(fs.readFileSync(extra, "utf8").trim(), "");
  return lines.join("\n");
}

async function main(): Promise<void> {
  const server = await startTestServer();
  try {
    const sections = [await auditOverhead(server), await approvalLatency(server), await readPaging(server)];
    fs.mkdirSync("docs", { recursive: true });
    fs.writeFileSync("docs/BENCHMARKS.md", render(sections));
    console.log(render(sections));
  } finally {
    await server.stop();
    fs.rmSync(server.workspace, { recursive: true, force: true });
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
