import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the throwaway PostgreSQL server of the "postgres" test project. */
    pgUrl: string;
  }
}

/**
 * Global setup of the "postgres" test project: starts a throwaway PostgreSQL server from
 * Debian's packages on a free loopback port (scripts/pg-local.sh), provides its URL to the tests
 * (each test file and test server creates its own database in it), and stops it at the end.
 * Uses TEST_PG_URL instead when set (an already running server).
 */
export default function setup(project: TestProject): () => void {
  if (process.env.TEST_PG_URL) {
    project.provide("pgUrl", process.env.TEST_PG_URL);
    return () => {};
  }
  const root = path.resolve(__dirname, "../..");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-pg-"));
  fs.chmodSync(dir, 0o755);
  const port = String(56000 + Math.floor(Math.random() * 4000));
  const url = execFileSync("bash", [path.join(root, "scripts/pg-local.sh"), "start", path.join(dir, "data"), port], { encoding: "utf8" }).trim();
  project.provide("pgUrl", url);
  return () => {
    execFileSync("bash", [path.join(root, "scripts/pg-local.sh"), "stop", path.join(dir, "data")]);
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
