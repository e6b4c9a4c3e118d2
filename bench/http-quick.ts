/**
 * `npx tsx bench/http-quick.ts [--n 300] [--c 8]`: a quick look at the HTTP door's cost on this
 * machine: sequential GET /api/health and audited read_file medians, then read_file throughput at
 * `--c` concurrent agents. A development aid beside bench/pipeline.ts (which is the reference run).
 */
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { quantiles } from "@/bench/measure";
import { startTestServer } from "@/tests/helpers/server";

const argv = process.argv.slice(2);
const opt = (name: string, d: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : d;
};
const N = opt("n", 300);
const C = opt("c", 8);

/** CPU time (user + system) the process has used so far (ms), from /proc. */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function main() {
  const direct = !argv.includes("--next-only");
  const server = await startTestServer({ env: { AGENT_REACH_DEFAULT_PRESET: "balanced", AGENT_REACH_DIRECT_DOORS: direct ? "on" : "off" } });
  console.log(`direct doors: ${direct}, server pid ${server.pid}`);
  try {
    fs.writeFileSync(path.join(server.workspace, "small.txt"), "hello\n".repeat(50));
    const read = (session: string) =>
      server.call("read_file", { path: "small.txt" }, { "x-agent-session": session }).then((r) => {
        if (!r.body.ok) throw new Error(JSON.stringify(r.body));
      });
    const health = () => fetch(`${server.url}/api/health`).then((r) => r.arrayBuffer());
    for (let i = 0; i < 50; i++) await Promise.all([read("warm"), health()]);
    const s = { read: [] as number[], health: [] as number[] };
    let cpu = cpuMs(server.pid);
    for (let i = 0; i < N; i++) await read("cpu");
    console.log(`server CPU per read_file: ${((cpuMs(server.pid) - cpu) / N).toFixed(2)} ms`);
    cpu = cpuMs(server.pid);
    for (let i = 0; i < N; i++) await health();
    console.log(`server CPU per health: ${((cpuMs(server.pid) - cpu) / N).toFixed(2)} ms`);
    for (let i = 0; i < N; i++) {
      let t = performance.now();
      await read("seq");
      s.read.push(performance.now() - t);
      t = performance.now();
      await health();
      s.health.push(performance.now() - t);
    }
    const qr = quantiles(s.read);
    const qh = quantiles(s.health);
    console.log(`read_file median ${qr.median.toFixed(2)} ms p99 ${qr.p99.toFixed(2)}; health median ${qh.median.toFixed(2)} ms`);
    let next = 0;
    const total = N * 3;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: C }, async (_, a) => {
        while (next < total) {
          next++;
          await read(`agent-${a}`);
        }
      }),
    );
    const el = performance.now() - t0;
    console.log(`${C} agents: ${(total / (el / 1000)).toFixed(0)} calls/s`);
  } finally {
    await server.stop();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
