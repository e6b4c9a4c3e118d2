/**
 * What reviewing git's state costs when a command's change set touches `.git`
 * (`npx tsx bench/git-state.ts [--quick]`): the review of an ordinary `git add f && git commit`
 * (the index parsed twice, the cache tree recomputed, one `git cat-file` and one `git log` on the
 * borrowed objects) in repositories of 1,000, 10,000 and 50,000 tracked files, and of a
 * `git status` stat refresh (index parsed twice, no git run). The change set is built the way the
 * overlay leaves it: the changed `.git` files copied into an upper directory beside the untouched
 * repository. A change set without a `.git` path costs one scan of its paths (no read, no git).
 * Bounded; cleans up after itself.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ms, quantiles } from "@/bench/measure";
import { reviewGitState } from "@/lib/effects/git-state";
import type { ChangeEntry } from "@/lib/effects/read-change-set";

const quick = process.argv.includes("--quick");
const SIZES = quick ? [1000, 10_000] : [1000, 10_000, 50_000];
const REPS = quick ? 5 : 15;
const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: "/nonexistent", GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" };

/** Every file under `dir` (relative), with its bytes' identity (size and mtime). */
function listing(dir: string, rel = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) for (const [k, v] of listing(dir, p)) out.set(k, v);
    else {
      const st = fs.statSync(path.join(dir, p));
      out.set(p, `${st.size}:${st.mtimeMs}:${st.ino}`);
    }
  }
  return out;
}

/** Runs `command` on a copy of `root`'s .git and returns the change set of .git as the overlay would: an upper dir and entries. */
function changeSetOf(root: string, command: string, work: string): { upper: string; entries: ChangeEntry[] } {
  const copy = path.join(work, "copy");
  fs.rmSync(copy, { recursive: true, force: true });
  execFileSync("cp", ["-a", root, copy]);
  const before = listing(path.join(copy, ".git"));
  execFileSync("bash", ["-c", command], { cwd: copy, env: ENV, stdio: "ignore" });
  const after = listing(path.join(copy, ".git"));
  const upper = path.join(work, "upper");
  fs.rmSync(upper, { recursive: true, force: true });
  const entries: ChangeEntry[] = [];
  for (const [p, id] of after) {
    if (before.get(p) === id) continue;
    const rel = `.git/${p}`;
    fs.mkdirSync(path.dirname(path.join(upper, rel)), { recursive: true });
    fs.copyFileSync(path.join(copy, rel), path.join(upper, rel));
    const size = fs.statSync(path.join(upper, rel)).size;
    const had = before.has(p) ? { type: "file" as const, mode: 0o644, size: fs.statSync(path.join(root, rel)).size } : null;
    entries.push({ path: rel, kind: had ? "modified" : "created", before: had, after: { type: "file", mode: 0o644, size }, source: path.join(upper, rel) });
  }
  return { upper, entries };
}

async function main(): Promise<void> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-bench-gitstate-")));
  const rows: string[] = [];
  try {
    for (const n of SIZES) {
      const root = path.join(base, `repo-${n}`);
      fs.mkdirSync(root);
      execFileSync("git", ["init", "-q"], { cwd: root, env: ENV });
      execFileSync("git", ["config", "gc.auto", "0"], { cwd: root, env: ENV });
      for (let i = 0; i < n; i++) {
        const dir = path.join(root, "src", `d${Math.floor(i / 100)}`);
        if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, `f${i}.ts`), `export const v${i} = ${i};\n`);
      }
      execFileSync("git", ["add", "."], { cwd: root, env: ENV });
      execFileSync("git", ["commit", "-qm", "initial"], { cwd: root, env: ENV });
      const work = path.join(base, `work-${n}`);
      fs.mkdirSync(work);
      for (const [label, command] of [
        ["git add + commit of one file", "echo '// x' >> src/d0/f0.ts && git add src/d0/f0.ts && git commit -qm bump"],
        ["git status (stat refresh)", "touch -d 2001-01-01 src/d0/f1.ts && git status --short >/dev/null"],
      ] as const) {
        const set = changeSetOf(root, command, work);
        // The working tree as the command left it: the commit's file edit is copied into the upper layer too.
        if (label.startsWith("git add")) {
          fs.mkdirSync(path.join(set.upper, "src", "d0"), { recursive: true });
          fs.copyFileSync(path.join(work, "copy", "src", "d0", "f0.ts"), path.join(set.upper, "src", "d0", "f0.ts"));
          set.entries.push({ path: "src/d0/f0.ts", kind: "modified", before: { type: "file", mode: 0o644, size: 1 }, after: { type: "file", mode: 0o644, size: fs.statSync(path.join(set.upper, "src/d0/f0.ts")).size }, source: path.join(set.upper, "src/d0/f0.ts") });
        }
        const samples: number[] = [];
        let last = null;
        for (let i = 0; i < REPS + 1; i++) {
          const t0 = performance.now();
          last = await reviewGitState({ root, upper: set.upper, entries: set.entries, holdsByPath: () => false });
          if (i > 0) samples.push(performance.now() - t0);
        }
        if (!last || last.holdReasons.length > 0) throw new Error(`unexpected review: ${JSON.stringify(last)}`);
        const q = quantiles(samples);
        rows.push(`| ${n.toLocaleString("en")} | ${label} | ${set.entries.length} | ${ms(q.median)} | ${ms(q.p99)} |`);
        console.error(rows[rows.length - 1]);
      }
    }
    console.log(["| tracked files | command | changed paths | review median ms | review p99 ms |", "|---|---|---|---|---|", ...rows].join("\n"));
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

void main();
