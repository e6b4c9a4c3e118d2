/**
 * What the command sandbox costs: `runCommand` boxed (bubblewrap, lib/exec/sandbox.ts) against
 * the same call unboxed, for `true` (the fixed cost of a box) and for `git status` in a
 * 10,000-file repository (a real command touching many files through the bind mounts), median
 * and p99; plus the one-time probe and the scan for secret system files to mask.
 *
 * Used by `npm run bench` (bench/run.ts adds the section to docs/BENCHMARKS.md); run alone with
 * `npm run bench:sandbox`, it replaces only its own section of docs/BENCHMARKS.md.
 * Flags: `--quick` uses fewer repetitions. Bounded: fixed counts, no network.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ms, quantiles, type Section } from "@/bench/measure";

export const SANDBOX_SECTION_TITLE = "Command sandbox (bubblewrap) overhead";

/** Boxed vs unboxed timings; `reps` runs of each, interleaved so machine load hits both alike. */
export async function sandboxBench(reps: number, log: (line: string) => void = () => {}): Promise<Section> {
  const base = fs.realpathSync(os.tmpdir());
  const dataDir = fs.mkdtempSync(path.join(base, "ar-bench-sbx-"));
  process.env.AGENT_REACH_DATA_DIR ??= dataDir;
  const { runCommand } = await import("@/lib/exec/run-command");
  const { probeSandbox, resetSandboxStatus, sandboxStatus, secretSystemPaths } = await import("@/lib/exec/sandbox");
  const { getConfig } = await import("@/lib/config");
  try {
    const t0 = performance.now();
    probeSandbox({ mode: "auto", bwrap: getConfig().bwrapPath });
    const probeMs = performance.now() - t0;
    resetSandboxStatus();
    if (!sandboxStatus().available) throw new Error(`the sandbox is unavailable: ${sandboxStatus().problems.join("; ")}`);
    const t1 = performance.now();
    const scan = await secretSystemPaths();
    const scanMs = performance.now() - t1;

    log("sandbox: a 10,000-file repository");
    const repo = fs.mkdtempSync(path.join(base, "ar-bench-repo-"));
    for (let d = 0; d < 100; d++) {
      fs.mkdirSync(path.join(repo, `dir${d}`));
      for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(repo, `dir${d}`, `file${f}.txt`), `content ${d}/${f}\n`);
    }
    // Secrets the box masks (lib/exec/workspace-secrets.ts): its scan and mounts are part of the cost.
    fs.writeFileSync(path.join(repo, ".env"), "API_KEY=bench\n");
    fs.writeFileSync(path.join(repo, "dir7", ".env.local"), "TOKEN=bench\n");
    fs.mkdirSync(path.join(repo, ".ssh"));
    fs.writeFileSync(path.join(repo, ".ssh", "id_ed25519"), "bench\n");
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
    git("init", "-q");
    git("add", "-A");
    // gc.auto=0: 10,000 loose objects would start a detached `git gc --auto` racing the clean-up.
    git("-c", "gc.auto=0", "-c", "user.email=b@example.test", "-c", "user.name=bench", "commit", "-qm", "10k files");
    // The workspace secret scan alone: the first (reads every directory), then revalidations.
    const { workspaceSecrets } = await import("@/lib/exec/workspace-secrets");
    const { secretPathMatcher } = await import("@/lib/policy/rule-match");
    const { DEFAULT_RULES } = await import("@/lib/policy/default-rules");
    const matcher = secretPathMatcher(DEFAULT_RULES);
    const scanOpts = { maxEntries: 250_000, maxMs: 10_000 };
    const t2 = performance.now();
    await workspaceSecrets(repo, matcher, scanOpts);
    const firstScanMs = performance.now() - t2;
    await new Promise((r) => setTimeout(r, 1100)); // past the racy window: directories are trusted
    const revalidations: number[] = [];
    let masked = 0;
    for (let i = 0; i < reps; i++) {
      const t = performance.now();
      const found = await workspaceSecrets(repo, matcher, scanOpts);
      revalidations.push(performance.now() - t);
      masked = found.files.length + found.dirs.length;
    }
    const home = path.join(dataDir, "homes", "bench");
    fs.mkdirSync(home, { recursive: true });
    // The per-command parts added for the box HOME (a fresh scratch HOME, the kept directories,
    // ~/.gitconfig carried over) and git's sanitized configuration (a remote URL with a token).
    const { boxHome } = await import("@/lib/exec/box-home");
    const { gitConfigArgs } = await import("@/lib/exec/box-git-config");
    fs.writeFileSync(path.join(home, ".gitconfig"), "[user]\n\tname = bench\n\temail = b@example.test\n");
    fs.appendFileSync(path.join(repo, ".git", "config"), '[remote "origin"]\n\turl = https://u:token@example.test/r.git\n');
    const homeTimes: number[] = [];
    const configTimes: number[] = [];
    for (let i = 0; i < reps + 1; i++) {
      const t = performance.now();
      const h = await boxHome(home);
      await h.release();
      const t3 = performance.now();
      await gitConfigArgs(repo, [".git"], []);
      if (i > 0) {
        homeTimes.push(t3 - t);
        configTimes.push(performance.now() - t3);
      }
    }

    const run = (command: string, boxed: boolean) =>
      runCommand({
        command,
        cwd: repo,
        timeoutMs: 60_000,
        maxOutputChars: 10_000,
        env: { PATH: "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" },
        ...(boxed && { sandbox: { workspaceRoot: repo, home, network: false } }),
      });
    const rows: (string | number)[][] = [];
    for (const [label, command] of [
      ["`true`", "true"],
      ["`git status` (10,000 files)", "git status --short"],
    ] as const) {
      log(`sandbox: ${label}`);
      await run(command, true); // warm caches for both
      await run(command, false);
      const boxed: number[] = [];
      const plain: number[] = [];
      for (let i = 0; i < reps; i++) {
        for (const [arr, isBoxed] of [
          [plain, false],
          [boxed, true],
        ] as const) {
          const t = performance.now();
          const r = await run(command, isBoxed);
          if (r.exit_code !== 0) throw new Error(`${command} failed: ${r.stderr}`);
          arr.push(performance.now() - t);
        }
      }
      const b = quantiles(boxed);
      const u = quantiles(plain);
      rows.push([label, "unboxed", reps, ms(u.median), ms(u.p99), ""]);
      rows.push(["", "boxed", reps, ms(b.median), ms(b.p99), ms(b.median - u.median)]);
    }
    rows.push(["probe (once per process)", "trial box", 1, ms(probeMs), "", ""]);
    const rv = quantiles(revalidations);
    rows.push(["workspace secret scan (10,000 files): first", `${masked} secrets`, 1, ms(firstScanMs), "", ""]);
    rows.push(["workspace secret scan: revalidation (each command)", "101 directories statted", reps, ms(rv.median), ms(rv.p99), ""]);
    const hq = quantiles(homeTimes);
    const cq = quantiles(configTimes);
    rows.push(["box HOME: scratch, kept directories, ~/.gitconfig (each command)", `${homeTimes.length} prepare + release`, reps, ms(hq.median), ms(hq.p99), ""]);
    rows.push(["git config sanitized (each command; parsed once per content)", "1 config with a token", reps, ms(cq.median), ms(cq.p99), ""]);
    rows.push(["secret scan (once, then every 5 min in the background; /etc watched)", `${scan.files.length} files + ${scan.dirs.length} dirs masked`, 1, ms(scanMs), "", ""]);
    fs.rmSync(repo, { recursive: true, force: true });
    return {
      title: SANDBOX_SECTION_TITLE,
      intro:
        "`runCommand` (lib/exec/run-command.ts) with and without the bubblewrap box, same limits wrapper, cgroup and niceness, " +
        "runs interleaved. The box: user, PID, network, IPC, UTS and cgroup namespaces, the system read-only with its secret " +
        "files masked, the workspace and HOME bound, protected .git paths read-only, the workspace's secrets (.env, dir7/.env.local, .ssh here) " +
        "found by the cached scan revalidated before each command and masked. Target: at most 30 ms median overhead.",
      header: ["command", "mode", "runs", "median ms", "p99 ms", "overhead (median) ms"],
      rows,
      notes: [
        `Load average while measuring: ${os.loadavg().map((l) => l.toFixed(1)).join(", ")} on ${os.cpus().length} cores; wall-clock figures, the box's included, grow with it.`,
        "Most of a box's fixed cost is the kernel creating and tearing down its namespaces (the network namespace above all); " +
          "on a busy machine (eight builds sharing two cores when this was measured) every figure here varies by tens of ms.",
      ],
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Replaces (or appends) this section in docs/BENCHMARKS.md. */
function writeSection(section: Section): void {
  const file = path.join("docs", "BENCHMARKS.md");
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "# Benchmarks\n";
  const lines = [`## ${section.title}`, "", section.intro, "", `| ${section.header.join(" | ")} |`, `|${section.header.map(() => "---").join("|")}|`];
  for (const row of section.rows) lines.push(`| ${row.join(" | ")} |`);
  lines.push("");
  for (const note of section.notes ?? []) lines.push(note, "");
  const block = lines.join("\n");
  const start = text.indexOf(`## ${section.title}`);
  let next: string;
  if (start >= 0) {
    const after = text.slice(start + 3).search(/\n#{1,2} /);
    const end = after >= 0 ? start + 3 + after + 1 : text.length;
    next = text.slice(0, start) + block + text.slice(end);
  } else {
    // Before the sections other benchmarks contribute (scale, dashboard), after the core ones.
    const scale = text.indexOf("## Scale:");
    next = scale >= 0 ? `${text.slice(0, scale)}${block}${text.slice(scale)}` : `${text.trimEnd()}\n\n${block}`;
  }
  fs.writeFileSync(file, next);
}

if (process.argv[1]?.endsWith(path.join("bench", "sandbox.ts"))) {
  const quick = process.argv.includes("--quick");
  sandboxBench(quick ? 10 : 50, (l) => console.error(`[bench] ${l}`))
    .then((section) => {
      writeSection(section);
      console.log(section.rows.map((r) => r.join(" | ")).join("\n"));
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
