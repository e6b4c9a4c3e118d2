import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import { buildChildEnv } from "@/lib/exec/child-env";
import { killAllRunningCommands, runCommand, runningCommandCount, type RunCommandOptions } from "@/lib/exec/run-command";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

/** The executor of run_command: process groups, timeouts, output caps, the child environment. */

let fx: Fixture;
let base: Omit<RunCommandOptions, "command">;

beforeEach(async () => {
  fx = await makeFixture();
  base = { cwd: fx.ws, timeoutMs: 20_000, maxOutputChars: 30_000, env: buildChildEnv(fx.ws, { homeRoot: path.join(fx.root, "homes") }), killGraceMs: 500 };
});
afterEach(async () => {
  await fx.cleanup();
});

/** True while a process with this pid exists (and is not a zombie we could still see). */
async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return !/^\d+ \(.*\) Z/.test(stat);
}

/** Waits (bounded) until `file` holds a pid written by the command, and returns it. */
async function pidIn(file: string): Promise<number> {
  for (let i = 0; i < 250; i++) {
    const pid = Number((await fs.readFile(file, "utf8").catch(() => "")).trim());
    if (pid > 0) return pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no pid in ${file}`);
}

/** Waits (bounded) until `pid` is gone; returns whether it is gone. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (!(await alive(pid))) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe("exit status and signals", () => {
  it.each([
    ["true", 0, null],
    ["exit 3", 3, null],
    ["false", 1, null],
    ["kill -TERM $$", null, "SIGTERM"],
    ["kill -KILL $$", null, "SIGKILL"],
  ])("%s → exit %s, signal %s", async (command, exitCode, signal) => {
    const r = await runCommand({ ...base, command });
    expect(r).toMatchObject({ exit_code: exitCode, signal, timed_out: false, aborted: false, limit: null });
    expect(r.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("captures stdout and stderr separately", async () => {
    const r = await runCommand({ ...base, command: "echo out; echo err >&2; printf 'no newline'" });
    expect(r.stdout).toBe("out\nno newline");
    expect(r.stderr).toBe("err\n");
    expect(r.original_length).toEqual({ stdout: 14, stderr: 4 });
    expect(r.truncated).toBe(false);
  });

  it("runs in the given directory with stdin closed", async () => {
    await fs.mkdir(fx.at("sub"));
    const r = await runCommand({ ...base, cwd: fx.at("sub"), command: "pwd; cat; echo end" });
    expect(r.stdout).toBe(`${fx.at("sub")}\nend\n`);
  });

  it("decodes invalid UTF-8 with replacement characters", async () => {
    const r = await runCommand({ ...base, command: "printf 'caf\\xe9 \\xe2\\x82\\xac'" });
    expect(r.stdout).toBe("caf\uFFFD €");
  });

  it("single-quoted text is printed literally and runs nothing (C21-4)", async () => {
    const r = await runCommand({ ...base, command: "echo '$(touch pwned)'" });
    expect(r.stdout).toBe("$(touch pwned)\n");
    await expect(fs.stat(fx.at("pwned"))).rejects.toThrow();
  });

  it("fails to start in a directory that does not exist", async () => {
    const err = await runCommand({ ...base, cwd: fx.at("missing"), command: "true" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).errorName).toBe("command_failed_to_start");
    expect((err as ToolError).detail.reason).toBe("cwd_not_found");
  });
});

describe("process groups", () => {
  it("a timeout kills the whole group, grandchildren included", async () => {
    const r = await runCommand({ ...base, timeoutMs: 300, command: "(sleep 30 & echo $! > grandchild.pid; wait) & sleep 30; echo never" });
    expect(r.timed_out).toBe(true);
    expect(r.signal).toBe("SIGTERM");
    expect(r.stdout).toBe("");
    expect(await gone(await pidIn(fx.at("grandchild.pid")))).toBe(true);
  });

  it("a process that ignores SIGTERM is killed after the grace period", async () => {
    const r = await runCommand({ ...base, timeoutMs: 300, command: "trap '' TERM; sleep 30 & echo $! > child.pid; while :; do sleep 0.1; done" });
    expect(r.timed_out).toBe(true);
    expect(r.signal).toBe("SIGKILL");
    expect(await gone(await pidIn(fx.at("child.pid")))).toBe(true);
  });

  it("background jobs do not outlive the command", async () => {
    const r = await runCommand({ ...base, command: "sleep 30 & echo $! > bg.pid; echo started" });
    expect(r).toMatchObject({ exit_code: 0, stdout: "started\n", timed_out: false });
    expect(await gone(await pidIn(fx.at("bg.pid")))).toBe(true);
  });

  it("an abort signal stops the command", async () => {
    const controller = new AbortController();
    const running = runCommand({ ...base, signal: controller.signal, command: "sleep 30 & echo $! > bg.pid; wait" });
    const pid = await pidIn(fx.at("bg.pid"));
    controller.abort();
    const r = await running;
    expect(r).toMatchObject({ aborted: true, timed_out: false, signal: "SIGTERM" });
    expect(await gone(pid)).toBe(true);
  });

  it("an already aborted call does not start", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(runCommand({ ...base, signal: controller.signal, command: "touch pwned" })).rejects.toThrow(ToolError);
    await expect(fs.stat(fx.at("pwned"))).rejects.toThrow();
  });

  it("killAllRunningCommands stops every running command (server shutdown)", async () => {
    const runs = [1, 2].map((i) => runCommand({ ...base, command: `echo $$ > leader${i}.pid; sleep 30` }));
    await Promise.all([pidIn(fx.at("leader1.pid")), pidIn(fx.at("leader2.pid"))]);
    expect(runningCommandCount()).toBe(2);
    expect(await killAllRunningCommands(500)).toBe(2);
    const results = await Promise.all(runs);
    expect(results.map((r) => r.signal)).toEqual(["SIGTERM", "SIGTERM"]);
    expect(runningCommandCount()).toBe(0);
  });
});

describe("output cap", () => {
  it("keeps the head and the tail and says how much was cut", async () => {
    const r = await runCommand({ ...base, maxOutputChars: 1000, command: "seq 1 100000" });
    expect(r.truncated).toBe(true);
    expect(r.original_length.stdout).toBe(588_895);
    expect(r.stdout.startsWith("1\n2\n3\n")).toBe(true);
    expect(r.stdout.endsWith("99999\n100000\n")).toBe(true);
    const omitted = Number(/\[… (\d+) bytes omitted …\]/.exec(r.stdout)?.[1]);
    const kept = Buffer.byteLength(r.stdout.replace(/\[… \d+ bytes omitted …\]\n/, ""));
    expect(omitted + kept).toBe(588_895);
    expect(r.stdout.length).toBeLessThanOrEqual(1000 + 40);
  });

  it("shares the budget between stdout and stderr", async () => {
    const r = await runCommand({ ...base, maxOutputChars: 1000, command: "seq 1 5000; seq 1 5000 >&2" });
    expect(r.truncated).toBe(true);
    expect(r.stdout.length + r.stderr.length).toBeLessThanOrEqual(1000 + 80);
    expect(r.stderr.endsWith("5000\n")).toBe(true);
  });

  it("gives a short stream all it needs", async () => {
    const r = await runCommand({ ...base, maxOutputChars: 1000, command: "echo short >&2; seq 1 5000" });
    expect(r.stderr).toBe("short\n");
    expect(r.stdout.length).toBeGreaterThan(900);
  });

  it("never splits a multi-byte character at a cut", async () => {
    const r = await runCommand({ ...base, maxOutputChars: 301, command: "for i in $(seq 1 3000); do printf '€😀'; done" });
    expect(r.truncated).toBe(true);
    expect(r.stdout).not.toContain("\uFFFD");
    expect(r.stdout).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe("child environment", () => {
  const secrets = { GATEWAY_DB_URL: "postgres://gw:s3cret@db/x", ANTHROPIC_API_KEY: "test-key-123", DATABASE_URL: "file:/x.db", AGENT_REACH_TOKEN: "t0k", GITHUB_TOKEN: "ghp_x", AWS_SECRET_ACCESS_KEY: "aws" };
  let saved: Record<string, string | undefined>;
  beforeEach(() => {
    saved = Object.fromEntries(Object.keys(secrets).map((k) => [k, process.env[k]]));
    Object.assign(process.env, secrets);
  });
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it("echo $GATEWAY_DB_URL prints an empty line (C21-9)", async () => {
    const env = buildChildEnv(fx.ws, { homeRoot: path.join(fx.root, "homes") });
    const r = await runCommand({ ...base, env, command: "echo $GATEWAY_DB_URL" });
    expect(r.stdout).toBe("\n");
  });

  it.each(["env", "printenv", "cat /proc/self/environ | tr '\\0' '\\n'", "set"])("%s shows no gateway secret", async (command) => {
    const env = buildChildEnv(fx.ws, { homeRoot: path.join(fx.root, "homes") });
    const r = await runCommand({ ...base, env, command });
    expect(r.exit_code).toBe(0);
    for (const [name, value] of Object.entries(secrets)) {
      expect(r.stdout).not.toContain(name);
      expect(r.stdout).not.toContain(value);
    }
    expect(r.stdout).toContain("TERM=dumb");
  });
});

describe("the limits wrapper", () => {
  it("runs the command exactly as without limits (it is passed as an argument, never spliced)", async () => {
    const command = `printf '%s|' "$1" '$1' "$#" "it's"; echo " && touch pwned"`;
    const plain = await runCommand({ ...base, command });
    const limited = await runCommand({ ...base, limits: { cpuSeconds: 5, fileSizeBytes: 1 << 20, processes: 64, memoryBytes: 256 << 20 }, nice: 5, command });
    expect(limited.stdout).toBe(plain.stdout);
    expect(plain.stdout).toBe("|$1|0|it's| && touch pwned\n");
    await expect(fs.stat(fx.at("pwned"))).rejects.toThrow();
  });
});
