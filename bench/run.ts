/**
 * `npm run bench`: measures the gateway on this machine and rewrites docs/BENCHMARKS.md
 * (machine, date, versions, one table per section). Every figure comes from a real server
 * (`scripts/start.ts` → `next start` on a loopback port, SQLite file) driven over HTTP.
 *
 * Sections: side by side with the reference MCP filesystem server over the official MCP SDK client
 * (bench/side-by-side.ts: page reads, small read, 1 MiB write, edit; median, p99, peak RSS,
 * ratios) and what our audit log and backups cost; read_file paging on a 500,000-line file and a
 * 200 MiB file (latency per page, server RSS); the cost of an audited HTTP call over the bare
 * tool; approve → waiting agent latency; the command sandbox's overhead (bench/sandbox.ts). Bounded: fixed call counts, loopback only, stops by itself.
 *
 * Flags: `--quick` uses fewer repetitions (for a smoke run).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ms, quantiles, rssMiB, timeCalls, writeLog, type Section } from "@/bench/measure";
import { sandboxBench } from "@/bench/sandbox";
import { sideBySide } from "@/bench/side-by-side";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { makeToolContext } from "@/tests/helpers/tool-context";
import { readFileTool } from "@/lib/tools/read-file";

const quick = process.argv.includes("--quick");
const REPS = quick ? 10 : 50;

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
    const deadline = Date.now() + 30_000;
    while (!callId) {
      const list = await server.reviewer("GET", "/api/approvals");
      callId = list.body.approvals.find((a: { args: { path: string } }) => a.args.path === `approved/${i}.txt`)?.call_id;
      if (callId) break;
      if (Date.now() > deadline) throw new Error(`write_file approved/${i}.txt was not queued for approval within 30 s: ${JSON.stringify(await agent)}`);
      await new Promise((r) => setTimeout(r, 20));
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
      "Under the strict preset, an agent's write_file waits (Prefer: wait=30); a reviewer approves through POST /api/approvals/{id}/approve. Measured from " +
      "sending the approval to the agent's response arriving (the write, its backup, its diff and the audit rows included).",
    header: ["approvals", "median ms", "p99 ms"],
    rows: [[REPS, ms(q.median), ms(q.p99)]],
  };
}

function render(sections: Section[]): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const versions = { ...pkg.devDependencies, ...pkg.dependencies };
  const lines = [
    "# Benchmarks",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench\`${quick ? " --quick" : ""} on ${os.cpus().length} × ${cpu}, ` +
      `${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}, ` +
      `Next.js ${versions.next}, Prisma ${versions["@prisma/client"]}, SQLite (better-sqlite3 ${versions["better-sqlite3"]}), ` +
      `MCP SDK ${versions["@modelcontextprotocol/sdk"]}, reference server @modelcontextprotocol/server-filesystem ${versions["@modelcontextprotocol/server-filesystem"]}.`,
    "Figures are for orientation on this machine; nothing here is asserted by the test suite.",
    "",
  ];
  for (const s of sections) {
    lines.push(`## ${s.title}`, "", s.intro, "", `| ${s.header.join(" | ")} |`, `|${s.header.map(() => "---").join("|")}|`);
    for (const row of s.rows) lines.push(`| ${row.join(" | ")} |`);
    lines.push("");
    for (const note of s.notes ?? []) lines.push(note, "");
  }
  // Sections other benchmarks write (`npm run bench:scale`, the dashboard's browser timings, `npm run bench:cli`).
  for (const extra of ["BENCHMARKS-pipeline.md", "BENCHMARKS-profile.md", "BENCHMARKS-effects.md", "BENCHMARKS-scale.md", "BENCHMARKS-dashboard.md", "BENCHMARKS-cli.md"].map((f) => path.join("docs", f))) {
    if (fs.existsSync(extra)) lines.push(fs.readFileSync(extra, "utf8").trim(), "");
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const log = (line: string) => console.error(`[bench] ${line}`);
  const compared = await sideBySide(quick ? 5 : 30, log);
  // Under `strict` every write asks, so the approvals section has calls to approve.
  const server = await startTestServer({ env: { AGENT_REACH_DEFAULT_PRESET: "strict" } });
  try {
    log("audited call, approvals, paging");
    const sections = [...compared, await auditOverhead(server), await approvalLatency(server), await readPaging(server), await sandboxBench(quick ? 10 : 50, log)];
    // Command capture, apply and rewind run in their own process (their own database and
    // configuration) and write docs/BENCHMARKS-effects.md, merged below.
    log("command file changes: capture, apply, rewind");
    execFileSync(process.execPath, [...process.execArgv, "bench/effects.ts", ...(quick ? ["--quick"] : [])], { stdio: ["ignore", "ignore", "inherit"] });
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
