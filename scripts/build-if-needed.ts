import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Path of Next.js's CLI entry inside node_modules. */
export const NEXT_BIN = path.resolve("node_modules/next/dist/bin/next");

/** What a build depends on: source folders and config files (relative to the project root). */
const INPUTS = ["app", "lib", "public", "instrumentation.ts", "proxy.ts", "next.config.ts", "postcss.config.mjs", "tsconfig.json", "tsconfig.build.json", "package-lock.json"];
const SKIP = new Set(["generated", "node_modules", ".next"]);
const STAMP = ".next/agent-reach-fingerprint";

/** A fingerprint (sha256) of every input file's path, size and mtime. */
export function sourceFingerprint(root = process.cwd()): string {
  const hash = crypto.createHash("sha256");
  const visit = (rel: string) => {
    const abs = path.join(root, rel);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(abs);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) if (!SKIP.has(name)) visit(path.join(rel, name));
    } else {
      hash.update(`${rel}\0${stat.size}\0${stat.mtimeMs}\n`);
    }
  };
  INPUTS.forEach(visit);
  return hash.digest("hex");
}

/**
 * Runs `next build` when there is no build yet or the sources changed since the last one
 * (fingerprint stored in .next/agent-reach-fingerprint). Processes starting at once (several
 * servers, parallel test files) take turns on a lock directory, so one builds and the others
 * find the build done.
 * @returns true when it built. @throws Error when the build fails.
 */
export async function buildIfNeeded(root = process.cwd()): Promise<boolean> {
  const release = await takeBuildLock(path.join(root, ".next-build.lock"));
  try {
    return await buildUnlocked(root);
  } finally {
    release();
  }
}

/**
 * Takes the build lock (a directory holding the builder's pid), waiting while a live process
 * holds it. A lock whose process is gone (a build stopped by Ctrl-C or a crash) is removed at
 * once, as is one without a pid after 5 s or any lock after 10 minutes.
 * @returns a function that releases the lock
 */
export async function takeBuildLock(lock: string): Promise<() => void> {
  let said = false;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
      return () => fs.rmSync(lock, { recursive: true, force: true });
    } catch {
      const owner = lockOwner(lock);
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if ((owner !== null && !processAlive(owner)) || (owner === null && age > 5_000) || age > 600_000) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!said && owner !== null) {
        console.log(`[agent-reach] waiting for another build of the app (pid ${owner}) to finish…`);
        said = true;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The pid written into a build lock, or null (not written yet, or unreadable). */
function lockOwner(lock: string): number | null {
  try {
    const pid = Number(fs.readFileSync(path.join(lock, "pid"), "utf8"));
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists (signal 0; EPERM means it exists under another user). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Where the output of the last `next build` is kept (what a new user saw before the banner). */
export const BUILD_LOG = ".next/agent-reach-build.log";

async function buildUnlocked(root: string): Promise<boolean> {
  const fingerprint = sourceFingerprint(root);
  const stamp = path.join(root, STAMP);
  const built = fs.existsSync(path.join(root, ".next/BUILD_ID")) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === fingerprint;
  if (built) return false;
  console.log("[agent-reach] building the app (first start or sources changed)…");
  // The output goes to the terminal as it comes and to BUILD_LOG (kept after the build).
  const chunks: Buffer[] = [];
  const status = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [NEXT_BIN, "build"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    child.stdout.on("data", (d: Buffer) => (chunks.push(d), process.stdout.write(d)));
    child.stderr.on("data", (d: Buffer) => (chunks.push(d), process.stderr.write(d)));
    child.once("error", reject);
    child.once("close", resolve);
  });
  fs.mkdirSync(path.join(root, ".next"), { recursive: true });
  fs.writeFileSync(path.join(root, BUILD_LOG), Buffer.concat(chunks));
  if (status !== 0) throw new Error("next build failed (see the output above)");
  fs.writeFileSync(stamp, fingerprint);
  return true;
}
