/**
 * What capturing a command's file changes costs (`npm run bench:effects`; `npm run bench` runs it
 * too and merges docs/BENCHMARKS-effects.md into docs/BENCHMARKS.md):
 * - overhead of capture + apply for a command changing one file in a 10,000-file, 500 MB
 *   workspace, over the same command run without capture (median of N runs);
 * - applying a 20,000-file change set (an `npm install`-sized tree, and the same count of
 *   ordinary source files with backups and diffs);
 * - rewinding a session of 100 calls (write_file and run_command alternating).
 * In process, on a real SQLite file, real overlayfs and real bash. Bounded; cleans up after itself.
 *
 * Flags: `--quick` uses fewer repetitions and smaller trees.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ms, quantiles, type Section } from "@/bench/measure";

const quick = process.argv.includes("--quick");
const REPS = quick ? 5 : 20;
const WS_FILES = quick ? 1000 : 10_000;
const WS_BYTES = quick ? 50 * 1024 * 1024 : 500 * 1024 * 1024;
const BIG_SET = quick ? 2000 : 20_000;
const REWIND_CALLS = quick ? 20 : 100;

/** Runs the effects benchmark and returns its section (also written to docs/BENCHMARKS-effects.md). */
export async function effectsBench(log: (line: string) => void = (l) => console.error(`[bench:effects] ${l}`)): Promise<Section> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-bench-fx-")));
  const workspace = path.join(base, "workspace");
  fs.mkdirSync(workspace);
  process.env.AGENT_REACH_WORKSPACE = workspace;
  process.env.AGENT_REACH_DATA_DIR = path.join(base, "data");
  process.env.DATABASE_URL = `file:${path.join(base, "data", "bench.db")}`;
  fs.mkdirSync(path.join(base, "data"));
  const { migrate } = await import("@/lib/db/migrate");
  await migrate(process.env.DATABASE_URL);
  const { getConfig } = await import("@/lib/config");
  const { db } = await import("@/lib/db");
  const { backupStoreFor } = await import("@/lib/backups/store");
  const { currentWorkspace } = await import("@/lib/workspace/register-workspace");
  const { runCommand } = await import("@/lib/exec/run-command");
  const { runWithEffects } = await import("@/lib/effects/command-effects");
  const { callTool } = await import("@/lib/gateway/call-tool");
  const { seedDefaultRules, invalidateRules } = await import("@/lib/policy/rule-store");
  const { rewindSession } = await import("@/lib/effects/rewind");
  const ws = await currentWorkspace();
  const rows: (string | number)[][] = [];
  try {
    // A 10,000-file, 500 MB workspace.
    log(`building a ${WS_FILES}-file, ${WS_BYTES >> 20} MiB workspace`);
    const per = Math.floor(WS_BYTES / WS_FILES);
    const chunk = crypto.randomBytes(per);
    for (let i = 0; i < WS_FILES; i++) {
      const dir = path.join(workspace, "src", `d${Math.floor(i / 100)}`);
      if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `f${i}.bin`), chunk);
    }
    fs.writeFileSync(path.join(workspace, "version.txt"), "1\n");
    const env = { PATH: "/usr/bin:/bin" };
    let n = 0;
    const ctxFor = (callId: string) => ({ callId, workspace: ws, config: getConfig(), signal: new AbortController().signal, note: () => {}, backups: backupStoreFor(ws.id, callId) });
    const command = "sed -i 's/[0-9]*/&1/' version.txt";
    const plain: number[] = [];
    const captured: number[] = [];
    for (let i = 0; i < REPS + 2; i++) {
      let t0 = performance.now();
      await runCommand({ command, cwd: ws.root, timeoutMs: 60_000, maxOutputChars: 1000, env });
      const p = performance.now() - t0;
      t0 = performance.now();
      const r = await runWithEffects(ctxFor(`call_bench_${++n}`), {
        command,
        cwdAbs: ws.root,
        commandData: {},
        run: (_capture, line) => runCommand({ command: line, cwd: ws.root, timeoutMs: 60_000, maxOutputChars: 1000, env }),
      });
      const c = performance.now() - t0;
      if (r.changes?.modified !== 1) throw new Error(`expected one modified file, got ${JSON.stringify(r.changes)}`);
      if (i >= 2) {
        plain.push(p);
        captured.push(c);
      }
    }
    const qp = quantiles(plain);
    const qc = quantiles(captured);
    rows.push([`sed -i on 1 file, ${WS_FILES.toLocaleString("en")}-file ${WS_BYTES >> 20} MiB workspace: without capture`, REPS, ms(qp.median), ms(qp.p99), ""]);
    rows.push(["same, captured on an overlay + applied (backup, atomic replace, journal)", REPS, ms(qc.median), ms(qc.p99), `overhead ${ms(qc.median - qp.median)} ms (target ≤ 50)`]);

    // A 20,000-file change set: node_modules (bulky) and ordinary files.
    for (const [label, dir] of [["node_modules (generated: no backups)", "node_modules/pkg"], ["ordinary source files (hashed, diffed, journaled)", "gen"]] as const) {
      const cmd = `mkdir -p ${dir} && cd ${dir} && for i in $(seq 1 ${BIG_SET}); do echo "module $i" > m$i.js; done`;
      const t0 = performance.now();
      const r = await runWithEffects(ctxFor(`call_bench_${++n}`), {
        command: cmd,
        cwdAbs: ws.root,
        commandData: {},
        run: async (_capture, line) => {
          const t = performance.now();
          const res = await runCommand({ command: line, cwd: ws.root, timeoutMs: 600_000, maxOutputChars: 1000, env });
          commandMs = performance.now() - t;
          return res;
        },
      });
      const total = performance.now() - t0;
      if ((r.changes?.created ?? 0) < BIG_SET) throw new Error(`expected ${BIG_SET} created, got ${JSON.stringify(r.changes)}`);
      rows.push([`apply ${BIG_SET.toLocaleString("en")} new files: ${label}`, 1, ms(total - commandMs), "", `command itself ${ms(commandMs)} ms; read + stage + apply + sync shown`]);
    }

    // The floor: the same number of files written and renamed into place with nothing else.
    {
      const raw = path.join(base, "raw");
      fs.mkdirSync(raw);
      const t0 = performance.now();
      for (let i = 0; i < BIG_SET; i++) {
        const h = await fs.promises.open(path.join(raw, `.t${i}`), "wx");
        await h.write(`module ${i}\n`);
        await h.close();
        await fs.promises.rename(path.join(raw, `.t${i}`), path.join(raw, `m${i}.js`));
      }
      rows.push([`baseline: ${BIG_SET.toLocaleString("en")} files opened, written, closed and renamed by plain Node, one at a time`, 1, ms(performance.now() - t0), "", "this machine's file-system latency at the time"]);
    }

    // Rewind a session of 100 calls.
    await seedDefaultRules();
    // The default asks for every write; this benchmark's session is trusted.
    await db().policyRule.updateMany({ where: { id: "default:write-file" }, data: { enabled: false } });
    for (const tool of ["write_file", "run_command"]) {
      await db().policyRule.create({ data: { id: `bench:${tool}`, priority: 1, tool, decision: "allow", note: "bench", source: "operator" } });
    }
    invalidateRules();
    fs.mkdirSync(path.join(workspace, "app"));
    for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(workspace, "app", `m${i}.py`), `v = 0  # ${i}\n`);
    const caller = { door: "http" as const, agent: null, sessionKey: "bench-rewind" };
    let first: string | null = null;
    for (let i = 0; i < REWIND_CALLS; i++) {
      const env2 =
        i % 2 === 0
          ? await callTool(caller, "write_file", { path: `app/m${i % 10}.py`, content: `v = ${i}  # ${i % 10}\n` }, { waitMs: 0 })
          : await callTool(caller, "run_command", { command: `python3 -c "open('app/out${i % 7}.txt','w').write('${i}')"` }, { waitMs: 0 });
      if (!env2.ok) throw new Error(JSON.stringify(env2));
      first ??= env2.call_id;
    }
    const t0 = performance.now();
    const rewound = await rewindSession({ sessionRef: "bench-rewind", beforeCallId: first!, login: "bench", dryRun: false });
    const rewindMs = performance.now() - t0;
    if (!rewound.ok) throw new Error(JSON.stringify(rewound.error));
    rows.push([`rewind a session of ${REWIND_CALLS} calls (write_file / run_command) to its start`, 1, ms(rewindMs), "", `${rewound.outcome.reverted_calls.length} calls undone (target ≤ 2,000 ms)`]);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
  const section: Section = {
    title: "What a command changed: capture, apply, rewind",
    intro:
      "Every run_command runs on an overlayfs view of the workspace; its change set (the upper layer) is read, every replaced byte is " +
      "backed up, and it is applied atomically through a journal (lib/effects). In process on a real SQLite file. For comparison, the " +
      "shadow-git checkpoints of Cline and Roo Code are reported at 15–90 s per checkpoint on large repositories, and they cover a " +
      "command's changes only by snapshotting the whole tree.",
    header: ["operation", "runs", "median ms", "p99 ms", "note"],
    rows,
  };
  return section;
}

let commandMs = 0;

/** Renders a section as Markdown (the same layout bench/run.ts uses). */
export function renderSection(s: Section): string {
  const lines = [`## ${s.title}`, "", s.intro, "", `| ${s.header.join(" | ")} |`, `|${s.header.map(() => "---").join("|")}|`];
  for (const r of s.rows) lines.push(`| ${r.join(" | ")} |`);
  for (const n of s.notes ?? []) lines.push("", n);
  return `${lines.join("\n")}\n`;
}

if (process.argv[1] && /bench\/effects\.ts$/.test(process.argv[1])) {
  effectsBench()
    .then((section) => {
      const md = renderSection(section);
      fs.mkdirSync("docs", { recursive: true });
      fs.writeFileSync("docs/BENCHMARKS-effects.md", md);
      console.log(md);
      process.exit(0);
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
