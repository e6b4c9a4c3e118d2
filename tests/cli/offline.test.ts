import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listTools } from "@/lib/tools/registry";
import { cliToolsJson } from "@/scripts/gen-cli-tools";
import { runCli } from "@/tests/cli/run-cli";
import { freePort } from "@/tests/helpers/server";
// @ts-expect-error plain ESM without types
import { commandExitStatus, commandOutcomeLine } from "@/lib/cli/output.mjs";

/**
 * What the CLI knows without a server: the tool list it ships (lib/cli/tools.json, which must match
 * the registry), help for every tool from it, and how a command's outcome maps to text and to the
 * CLI's exit status.
 */

describe("the shipped tool list", () => {
  it("is exactly what scripts/gen-cli-tools.ts writes from the registry (run it after changing a tool)", () => {
    const file = fs.readFileSync(path.resolve(__dirname, "../../lib/cli/tools.json"), "utf8");
    expect(file).toBe(cliToolsJson());
    expect(JSON.parse(file).tools.map((t: { name: string }) => t.name)).toEqual(listTools().map((t) => t.name));
  });
});

describe("help without a server", () => {
  it("answers every tool's --help from the shipped list when the server does not answer", async () => {
    const env = { AGENT_REACH_URL: `http://127.0.0.1:${await freePort()}` }; // nothing listens there
    for (const tool of listTools()) {
      const res = await runCli([tool.name.replace(/_/g, "-"), "--help"], { env });
      expect(res.status, res.stderr).toBe(0);
      for (const key of Object.keys((tool.input_schema as { properties: object }).properties)) expect(res.stdout).toContain(`--${key.replace(/_/g, "-")}`);
      expect(res.stdout).toContain("shipped with the CLI");
    }
    const short = await runCli(["run", "-h"], { env });
    expect(short.status).toBe(0);
    expect(short.stdout).toContain("--command");
    const unknown = await runCli(["no-such-tool", "--help"], { env });
    expect(unknown.status).toBe(2);
    expect(JSON.parse(unknown.stderr).error.name).toBe("unknown_tool");
  });

  it("does not wait long for a server that accepts and never answers", async () => {
    const net = await import("node:net");
    const sockets: import("node:net").Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, "127.0.0.1", resolve));
    try {
      const started = Date.now();
      const res = await runCli(["read-file", "--help"], { env: { AGENT_REACH_URL: `http://127.0.0.1:${port}` } });
      expect(res.status).toBe(0);
      expect(res.stdout).toContain("shipped with the CLI");
      expect(Date.now() - started).toBeLessThan(15_000); // bounded by the help's 1.5 s wait, not the 30 s call timeout
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});

describe("a command's outcome", () => {
  it.each([
    [{ exit_code: 0, signal: null, timed_out: false, limit: null, duration_ms: 5 }, "[command] exit_code=0 timed_out=false limit=- signal=- duration_ms=5", 0],
    [{ exit_code: 2, signal: null, timed_out: false, limit: null, duration_ms: 7 }, "[command] exit_code=2 timed_out=false limit=- signal=- duration_ms=7", 2],
    [{ exit_code: null, signal: "SIGKILL", timed_out: true, limit: "time", duration_ms: 300 }, "[command] exit_code=- timed_out=true limit=time signal=SIGKILL duration_ms=300", 124],
    [{ exit_code: null, signal: "SIGKILL", timed_out: false, limit: "memory", duration_ms: 90, truncated: true }, "[command] exit_code=- timed_out=false limit=memory signal=SIGKILL duration_ms=90 truncated=true", 137],
    [{ exit_code: null, signal: "SIGXCPU", timed_out: false, limit: "cpu", duration_ms: 1000 }, "[command] exit_code=- timed_out=false limit=cpu signal=SIGXCPU duration_ms=1000", 152],
    [{ exit_code: 0, signal: null, timed_out: false, limit: null, duration_ms: 9, changes: { status: "applied", created: 1, total_files: 1 } }, "[command] exit_code=0 timed_out=false limit=- signal=- duration_ms=9 changes=applied", 0],
    [{ exit_code: 2, signal: null, timed_out: false, limit: null, duration_ms: 9, changes: { status: "applied", total_files: 0 } }, "[command] exit_code=2 timed_out=false limit=- signal=- duration_ms=9", 2],
    [
      { exit_code: 0, signal: null, timed_out: false, limit: null, duration_ms: 9, changes: { status: "held", deleted: 60, hold_reasons: ["deletes 60 files (more than 50)"] } },
      "[command] exit_code=0 timed_out=false limit=- signal=- duration_ms=9 changes=held\n[changes] held for a reviewer, not applied to the workspace yet: deletes 60 files (more than 50)",
      0,
    ],
    [{ exit_code: null, signal: "SIGTERM", timed_out: false, limit: null, duration_ms: 3 }, "[command] exit_code=- timed_out=false limit=- signal=SIGTERM duration_ms=3", 143],
  ])("%j → %s, --exit-code %i", (data, line, status) => {
    expect(commandOutcomeLine(data)).toBe(line);
    expect(commandExitStatus(data)).toBe(status);
  });

  it("is null for a result that is not a command's", () => {
    expect(commandExitStatus({ content: "x" })).toBeNull();
    expect(commandExitStatus(null)).toBeNull();
  });
});
