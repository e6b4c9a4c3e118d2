import { spawnSync } from "node:child_process";
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
  const lock = path.join(root, ".next-build.lock");
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 600_000) fs.rmSync(lock, { recursive: true, force: true }); // a crashed builder's lock
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return buildUnlocked(root);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function buildUnlocked(root: string): boolean {
  const fingerprint = sourceFingerprint(root);
  const stamp = path.join(root, STAMP);
  const built = fs.existsSync(path.join(root, ".next/BUILD_ID")) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === fingerprint;
  if (built) return false;
  console.log("[agent-reach] building the app (first start or sources changed)…");
  const result = spawnSync(process.execPath, [NEXT_BIN, "build"], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (result.status !== 0) throw new Error("next build failed (see the output above)");
  fs.writeFileSync(stamp, fingerprint);
  return true;
}
