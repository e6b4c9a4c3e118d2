import { spawn } from "node:child_process";
import path from "node:path";

/** Path of the CLI entry point. */
export const CLI = path.resolve(__dirname, "../../bin/agent-reach.mjs");

export interface CliRun {
  status: number | null;
  /** stdout bytes decoded as UTF-8 (and the raw bytes, to check the encoding). */
  stdout: string;
  stdoutBytes: Buffer;
  stderr: string;
}

/**
 * Runs `node bin/agent-reach.mjs …args` as a subprocess, like a shell or an agent would.
 * @param env extra environment (AGENT_REACH_URL, AGENT_REACH_TOKEN …); AGENT_REACH_* from the
 *   test runner's own environment are removed first so only what the test sets applies.
 * @param input bytes written to stdin (stdin is closed either way).
 */
export function runCli(args: string[], options: { env?: Record<string, string>; input?: string | Buffer; cwd?: string } = {}): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("AGENT_REACH_"))) as NodeJS.ProcessEnv;
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { ...base, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (d: Buffer) => out.push(d));
  child.stderr.on("data", (d: Buffer) => err.push(d));
  child.stdin.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({ status, stdout: stdoutBytes.toString("utf8"), stdoutBytes, stderr: Buffer.concat(err).toString("utf8") });
    });
  });
}
