/**
 * `npm run bench:cli`: how long one CLI call takes from process start to exit, the way an agent
 * calls it once per step. Starts a real server (tests/helpers/server.ts), then runs each variant
 * `REPEATS` times, interleaved, each a new process (like hyperfine: cold process, warm OS caches):
 * `self-check` (GET /api/health plus the token check) through the installed command (what
 * `npm link` / a global install puts on PATH: the script run by its shebang), through
 * `node bin/agent-reach.mjs`, and through `npx agent-reach`; with `node -e 0` for Node's own start.
 * Writes docs/BENCHMARKS-cli.md (merged into docs/BENCHMARKS.md by `npm run bench`).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { startTestServer } from "@/tests/helpers/server";

const REPEATS = Number(process.env.BENCH_REPEATS ?? 25);
const ROOT = path.resolve(".");
const BIN = path.join(ROOT, "bin/agent-reach.mjs");

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function main(): Promise<void> {
  const server = await startTestServer();
  const env = { ...process.env, AGENT_REACH_URL: server.url, AGENT_REACH_TOKEN: server.agentToken };
  const variants: Array<{ label: string; cmd: string; args: string[] }> = [
    { label: "`node -e 0` (Node.js start alone)", cmd: process.execPath, args: ["-e", "0"] },
    { label: "`agent-reach self-check` (installed: npm link / global; runs by its shebang)", cmd: BIN, args: ["self-check"] },
    { label: "`node bin/agent-reach.mjs self-check`", cmd: process.execPath, args: [BIN, "self-check"] },
    { label: "`agent-reach read-file --help` without a server (shipped tool list)", cmd: BIN, args: ["--server", "http://127.0.0.1:9", "read-file", "--help"] },
    { label: "`npx agent-reach self-check`", cmd: "npx", args: ["agent-reach", "self-check"] },
  ];
  const times = new Map<string, number[]>(variants.map((v) => [v.label, []]));
  try {
    for (let i = 0; i < REPEATS + 2; i++) {
      for (const v of variants) {
        const started = process.hrtime.bigint();
        const r = spawnSync(v.cmd, v.args, { cwd: ROOT, env, stdio: "ignore" });
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (r.status !== 0) throw new Error(`${v.label} exited ${r.status}`);
        if (i >= 2) times.get(v.label)!.push(ms); // two warm-up rounds (OS caches, npx's cache)
      }
    }
  } finally {
    await server.stop();
    fs.rmSync(server.workspace, { recursive: true, force: true });
    fs.rmSync(server.dataDir, { recursive: true, force: true });
  }
  const rows = variants.map((v) => {
    const t = [...times.get(v.label)!].sort((a, b) => a - b);
    return `| ${v.label} | ${t.length} | ${quantile(t, 0.5).toFixed(0)} | ${quantile(t, 0.9).toFixed(0)} | ${t[0].toFixed(0)} |`;
  });
  const load = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const text = [
    "## CLI start-up",
    "",
    `Wall time of one CLI process from start to exit against a local server, ${REPEATS} runs per variant, interleaved, after two warm-up rounds (\`npm run bench:cli\`; Node ${process.version}; load average at the end: ${load}). ` +
      "`self-check` makes two requests (GET /api/health, which checks the database and writes a probe file, and the token check). The CLI speaks HTTP through node:http (fetch's implementation alone costs more to load than the rest of the CLI) and loads its shipped tool list only for help.",
    "",
    "| variant | runs | median ms | p90 ms | min ms |",
    "|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
  fs.writeFileSync("docs/BENCHMARKS-cli.md", `${text}\n`);
  console.log(text);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
