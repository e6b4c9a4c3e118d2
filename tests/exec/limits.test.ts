import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "@/lib/config";
import { defaultCommandLimits, withRuleLimits, type CommandLimits, type RuleLimits } from "@/lib/exec/limits";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { combineRuleOptions, parseRuleOptions } from "@/lib/policy/rule-match";
import type { PolicyRuleData, RuleOptions } from "@/lib/policy/types";
import { runCommandTool, RunCommandInput } from "@/lib/tools/run-command";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext } from "@/tests/helpers/tool-context";
import { decideCommand, rule } from "@/tests/policy/fixtures";

/**
 * run_command's limits: built-in defaults, AGENT_REACH_CMD_* settings, rule options
 * (parsed, combined, carried by the policy's verdict) and how the tool applies them.
 */

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

describe("defaults and global settings", () => {
  it("defaults: 900 CPU s, half the RAM, 1024 tasks, 1 GiB files, no address-space limit", () => {
    expect(defaultCommandLimits(24 * GIB)).toEqual({
      cpuSeconds: 900,
      memoryBytes: 12 * GIB,
      processes: 1024,
      fileSizeBytes: GIB,
      addressSpaceBytes: null,
      timeoutMs: 600_000,
      outputChars: 200_000,
    });
  });

  const env = (vars: Record<string, string>) => ({ AGENT_REACH_WORKSPACE: "/tmp/ws", ...vars }) as unknown as NodeJS.ProcessEnv;

  it.each<[Record<string, string>, Partial<CommandLimits>]>([
    [{ AGENT_REACH_CMD_CPU_SECONDS: "60" }, { cpuSeconds: 60 }],
    [{ AGENT_REACH_CMD_CPU_SECONDS: "0" }, { cpuSeconds: null }],
    [{ AGENT_REACH_CMD_MEMORY_MB: "2048" }, { memoryBytes: 2 * GIB }],
    [{ AGENT_REACH_CMD_MEMORY_MB: "0" }, { memoryBytes: null }],
    [{ AGENT_REACH_CMD_PROCESSES: "256" }, { processes: 256 }],
    [{ AGENT_REACH_CMD_FILE_SIZE_MB: "10" }, { fileSizeBytes: 10 * MIB }],
    [{ AGENT_REACH_CMD_ADDRESS_SPACE_MB: "16384" }, { addressSpaceBytes: 16 * GIB }],
    [{ AGENT_REACH_CMD_TIMEOUT_MAX_MS: "30000" }, { timeoutMs: 30_000 }],
    [{ AGENT_REACH_CMD_OUTPUT_MAX_CHARS: "5000" }, { outputChars: 5000 }],
  ])("%j", (vars, expected) => {
    const config = loadConfig(env(vars));
    expect(config.commandLimits).toEqual({ ...defaultCommandLimits(), ...expected });
  });

  it("niceness and cgroup mode", () => {
    expect(loadConfig(env({}))).toMatchObject({ commandNice: 10, commandCgroup: "auto" });
    expect(loadConfig(env({ AGENT_REACH_CMD_NICE: "0", AGENT_REACH_CMD_CGROUP: "off" }))).toMatchObject({ commandNice: 0, commandCgroup: "off" });
  });

  it.each([
    ["AGENT_REACH_CMD_MEMORY_MB", "8"],
    ["AGENT_REACH_CMD_PROCESSES", "2"],
    ["AGENT_REACH_CMD_CPU_SECONDS", "-1"],
    ["AGENT_REACH_CMD_TIMEOUT_MAX_MS", "600001"],
    ["AGENT_REACH_CMD_OUTPUT_MAX_CHARS", "10"],
    ["AGENT_REACH_CMD_NICE", "20"],
    ["AGENT_REACH_CMD_CGROUP", "v2"],
    ["AGENT_REACH_CMD_FILE_SIZE_MB", "lots"],
  ])("refuses %s=%s at start", (name, value) => {
    expect(() => loadConfig(env({ [name]: value }))).toThrow(new RegExp(`Invalid configuration: ${name}`));
  });
});

describe("rule limits over the global ones", () => {
  const global = defaultCommandLimits(8 * GIB);
  it.each<[string, RuleLimits | undefined, Partial<CommandLimits>]>([
    ["no rule limits", undefined, {}],
    ["raise memory, lower processes", { memory_mb: 6144, processes: 64 }, { memoryBytes: 6 * GIB, processes: 64 }],
    ["0 lifts a limit", { cpu_seconds: 0, file_size_mb: 0 }, { cpuSeconds: null, fileSizeBytes: null }],
    ["ceilings of the call's own arguments", { timeout_ms: 1000, output_chars: 500 }, { timeoutMs: 1000, outputChars: 500 }],
    ["address space", { address_space_mb: 20480 }, { addressSpaceBytes: 20 * GIB }],
  ])("%s", (_name, limits, changed) => {
    expect(withRuleLimits(global, limits)).toEqual({ ...global, ...changed });
  });
});

describe("rule options", () => {
  it.each<[string, string | null, RuleOptions | null]>([
    ["null", null, null],
    ["empty text", "  ", null],
    ["limits", '{"limits":{"memory_mb":512,"processes":100}}', { limits: { memory_mb: 512, processes: 100 } }],
    ["redact", '{"redact":false}', { redact: false }],
    ["both", '{"limits":{"cpu_seconds":0},"redact":true}', { limits: { cpu_seconds: 0 }, redact: true }],
  ])("parses %s", (_name, json, expected) => {
    expect(parseRuleOptions(json)).toEqual(expected);
  });

  it.each([
    ["not JSON", "{limits:", /not valid JSON/],
    ["an unknown option", '{"sandbox":true}', /invalid options: options: Unrecognized key/],
    ["an unknown limit", '{"limits":{"gpu":1}}', /limits: Unrecognized key/],
    ["a tiny memory limit", '{"limits":{"memory_mb":4}}', /limits.memory_mb: memory_mb must be 0/],
    ["too few processes", '{"limits":{"processes":3}}', /limits.processes: processes must be 0/],
    ["a timeout above the maximum", '{"limits":{"timeout_ms":700000}}', /limits.timeout_ms/],
    ["a string", '{"redact":"no"}', /redact/],
  ])("refuses %s", (_name, json, message) => {
    expect(() => parseRuleOptions(json)).toThrow(message);
  });

  const withOptions = (id: string, priority: number, options: RuleOptions | null): PolicyRuleData => ({ ...rule(id, {}, "allow", priority), options });
  it.each<[string, PolicyRuleData[], RuleOptions | undefined]>([
    ["no options anywhere", [withOptions("a", 1, null)], undefined],
    ["the first rule that sets a limit wins, per limit", [withOptions("a", 1, { limits: { memory_mb: 100 } }), withOptions("b", 2, { limits: { memory_mb: 900, processes: 50 } })], { limits: { memory_mb: 100, processes: 50 } }],
    ["the first rule that sets redact wins", [withOptions("a", 1, { limits: { cpu_seconds: 5 } }), withOptions("b", 2, { redact: false }), withOptions("c", 3, { redact: true })], { limits: { cpu_seconds: 5 }, redact: false }],
  ])("combines: %s", (_name, rules, expected) => {
    expect(combineRuleOptions(rules)).toEqual(expected);
  });
});

describe("the policy's verdict carries the options of the rules that apply", () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await makeFixture();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const heavyBuild: PolicyRuleData = { ...rule("ops:build", { command: "npm run build *" }, "allow", 50), options: { limits: { memory_mb: 8192, timeout_ms: 600_000 } } };
  const testRule: PolicyRuleData = { ...rule("ops:test", { command: "npm test *" }, "ask", 50), options: { limits: { memory_mb: 2048, processes: 200 } } };
  const everyCommand: PolicyRuleData = { ...rule("ops:all", {}, "allow", 300), options: { limits: { cpu_seconds: 120, memory_mb: 1024 } } };
  const rules = [...(DEFAULT_RULES as PolicyRuleData[]), heavyBuild, testRule];

  it.each<[string, string, PolicyRuleData[], RuleOptions | undefined]>([
    ["a command no rule with options decides", "ls -la", rules, undefined],
    ["the rule that decided the command", "npm run build", rules, { limits: { memory_mb: 8192, timeout_ms: 600_000 } }],
    ["several parts: first rule in priority order wins per limit", "npm run build && npm test", rules, { limits: { memory_mb: 8192, timeout_ms: 600_000, processes: 200 } }],
    ["a tool rule without command applies to every part, after more specific ones", "npm test", [...rules, everyCommand], { limits: { memory_mb: 2048, processes: 200, cpu_seconds: 120 } }],
    ["a wrapper is looked through", "timeout 60 npm run build", rules, { limits: { memory_mb: 8192, timeout_ms: 600_000 } }],
  ])("%s: %s", async (_name, command, ruleSet, expected) => {
    const verdict = await decideCommand(fx, command, ruleSet, fx.ws, { boxed: true }); // as the gateway asks for a boxed door
    expect(verdict.options).toEqual(expected);
  });

  it("path tools: every matching rule contributes, whatever its decision", async () => {
    const fixtures: PolicyRuleData = { ...rule("ops:fixtures", { tool: "*", pathGlob: "tests/fixtures/**" }, "allow", 50), options: { redact: false } };
    const envLocal: PolicyRuleData = { ...rule("ops:env-local", { tool: "read_file", pathGlob: ".env.local" }, "allow", 5), options: { redact: false } };
    const all = [...(DEFAULT_RULES as PolicyRuleData[]), fixtures, envLocal];
    const ask = (p: string) => decide({ tool: "read_file", risk: "read", paths: [p] }, all);
    expect(await ask("tests/fixtures/keys.txt")).toMatchObject({ decision: "allow", options: { redact: false } });
    expect((await ask("src/app.ts")).options).toBeUndefined();
    // .env* still asks (sensitive path), and the operator's rule relaxes masking for that file.
    expect(await ask(".env.local")).toMatchObject({ decision: "ask", options: { redact: false } });
  });
});

describe("run_command applies the limits", () => {
  let fx: Fixture;
  let dataDir: string;
  const saved = process.env.AGENT_REACH_DATA_DIR;
  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "ar-data-"));
    process.env.AGENT_REACH_DATA_DIR = dataDir;
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.AGENT_REACH_DATA_DIR;
    else process.env.AGENT_REACH_DATA_DIR = saved;
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    fx = await makeFixture();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const global: CommandLimits = { cpuSeconds: 300, memoryBytes: 512 * MIB, processes: 256, fileSizeBytes: 64 * MIB, addressSpaceBytes: null, timeoutMs: 60_000, outputChars: 10_000 };

  it.each<[string, RuleOptions | undefined, Record<string, unknown>, Record<string, unknown>]>([
    ["the global limits", undefined, {}, { cpu_seconds: 300, memory_bytes: 512 * MIB, processes: 256, file_size_bytes: 64 * MIB, timeout_ms: 60_000, max_output_chars: 10_000 }],
    ["the call's smaller timeout and cap", undefined, { timeout_ms: 5000, max_output_chars: 1000 }, { timeout_ms: 5000, max_output_chars: 1000 }],
    ["a rule's limits over the global ones", { limits: { memory_mb: 128, cpu_seconds: 0 } }, {}, { memory_bytes: 128 * MIB, cpu_seconds: null, processes: 256 }],
    ["a rule's ceiling lowers the call's timeout", { limits: { timeout_ms: 2000, output_chars: 300 } }, { timeout_ms: 90_000 }, { timeout_ms: 2000, max_output_chars: 300 }],
  ])("%s", async (_name, ruleOptions, args, expected) => {
    const ctx = { ...makeToolContext(fx.ws, { commandLimits: global }), ...(ruleOptions && { ruleOptions }) };
    const out = await runCommandTool.run(RunCommandInput.parse({ command: "echo ok", ...args }), ctx);
    expect(out).toMatchObject({ exit_code: 0, stdout: "ok\n", limit: null });
    expect(out.limits).toMatchObject(expected);
  });

  it("a command stopped by a rule's limit says so, in the data and the audit summary", async () => {
    const ctx = { ...makeToolContext(fx.ws, { commandLimits: global }), ruleOptions: { limits: { cpu_seconds: 1 } } };
    const out = await runCommandTool.run(RunCommandInput.parse({ command: "while :; do :; done" }), ctx);
    expect(out.limit).toBe("cpu");
    expect(ctx.notes.summary).toMatch(/^stopped by limit cpu after \d+ ms \(boxed\)$/);
  });
});
