import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * Policy rule editing, the "try it" box, agent tokens and settings from the dashboard's lib, on
 * a real database: every change is validated, lands in the table and in the event log.
 */

type Lib = {
  policy: typeof import("@/lib/dashboard/policy");
  tokens: typeof import("@/lib/dashboard/tokens");
  agents: typeof import("@/lib/auth/agents");
  settings: typeof import("@/lib/dashboard/settings");
  webhook: typeof import("@/lib/notify/webhook");
  auth: typeof import("@/lib/auth/tokens");
  rules: typeof import("@/lib/policy/rule-store");
  db: typeof import("@/lib/db").db;
};
let lib: Lib;

beforeAll(async () => {
  await useFreshDatabase();
  lib = {
    policy: await import("@/lib/dashboard/policy"),
    tokens: await import("@/lib/dashboard/tokens"),
    agents: await import("@/lib/auth/agents"),
    settings: await import("@/lib/dashboard/settings"),
    webhook: await import("@/lib/notify/webhook"),
    auth: await import("@/lib/auth/tokens"),
    rules: await import("@/lib/policy/rule-store"),
    db: (await import("@/lib/db")).db,
  };
  await lib.rules.seedDefaultRules();
});

async function lastEvent() {
  return lib.db().event.findFirst({ orderBy: { seq: "desc" } });
}

describe("policy rules", () => {
  it.each([
    [{ tool: "no_such_tool", decision: "ask" }, "tool: unknown tool"],
    [{}, "decision"],
    [null, "rule"],
    [{ tool: "*", decision: "maybe" }, "decision"],
    [{ tool: "read_file", pathGlob: "/etc/**", decision: "deny" }, "pathGlob: paths are relative to the workspace root"],
    [{ tool: "read_file", pathGlob: "./src/**", decision: "deny" }, "pathGlob: paths are written without a leading ./"],
    [{ tool: "run_command", command: "*", decision: "allow" }, "command: a command pattern needs at least one word"],
  ])("refuses %j", async (input, message) => {
    const result = await lib.rules.createRule(input as never, "admin", lib.policy.ruleToolNames());
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ name: "invalid_arguments", code: 101, message: expect.stringContaining(message) });
  });

  it("adds a rule at the end, edits, disables, moves and deletes it, each logged with the reviewer", async () => {
    const created = await lib.rules.createRule({ tool: "read_file", pathGlob: "secrets/**", decision: "deny", note: "  no secrets  " }, "admin", lib.policy.ruleToolNames());
    expect(created.ok).toBe(true);
    const id = created.ok ? created.id : "";
    let rules = await lib.policy.listRules();
    expect(rules[rules.length - 1]).toMatchObject({ id, tool: "read_file", pathGlob: "secrets/**", command: null, decision: "deny", note: "no secrets", enabled: true, source: "operator" });
    expect(await lastEvent()).toMatchObject({ type: "policy.rule_created", actor: "reviewer:admin" });

    expect((await lib.rules.updateRule(id, { tool: "*", pathGlob: "secrets/**", decision: "ask", note: "" }, "admin", lib.policy.ruleToolNames())).ok).toBe(true);
    expect((await lib.policy.listRules()).find((r) => r.id === id)).toMatchObject({ tool: "*", decision: "ask", note: null });

    expect((await lib.rules.setRuleEnabled(id, false, "admin")).ok).toBe(true);
    expect((await lib.rules.loadRules()).find((r) => r.id === id)?.enabled).toBe(false);

    const position = (await lib.policy.listRules()).findIndex((r) => r.id === id);
    expect((await lib.rules.moveRule(id, "up", "admin")).ok).toBe(true);
    rules = await lib.policy.listRules();
    expect(rules.findIndex((r) => r.id === id)).toBe(position - 1);
    expect(new Set(rules.map((r) => r.priority)).size).toBe(rules.length);
    expect((await lib.rules.moveRule(rules[0].id, "up", "admin")).ok).toBe(true);
    expect((await lib.policy.listRules())[0].id).toBe(rules[0].id);

    expect((await lib.rules.deleteRule(id, "admin")).ok).toBe(true);
    expect((await lib.policy.listRules()).some((r) => r.id === id)).toBe(false);
    expect(await lastEvent()).toMatchObject({ type: "policy.rule_deleted" });
  });

  it("keeps default rules (disable only) and answers unknown ids with the API's errors", async () => {
    const builtin = (await lib.policy.listRules()).find((r) => r.source === "default")!;
    const refused = await lib.rules.deleteRule(builtin.id, "admin");
    expect(refused.ok).toBe(false);
    expect(refused).toMatchObject({ error: { name: "forbidden", code: 607, detail: { reason: "default_rule" } } });
    for (const missing of [
      await lib.rules.setRuleEnabled("rule_missing", true, "admin"),
      await lib.rules.moveRule("rule_missing", "down", "admin"),
      await lib.rules.deleteRule("rule_missing", "admin"),
      await lib.rules.updateRule("rule_missing", { tool: "*", decision: "ask" }, "admin", lib.policy.ruleToolNames()),
    ]) {
      expect(missing).toMatchObject({ ok: false, error: { name: "not_found", code: 202, message: "No rule rule_missing." } });
    }
    expect((await lib.rules.setRuleEnabled("rule_missing", true, "admin")).ok).toBe(false);
    expect((await lib.rules.moveRule("rule_missing", "down", "admin")).ok).toBe(false);
  });

  it.each([
    ["not JSON", '{"redact": false', "options: not valid JSON"],
    ["not an object", "[1, 2]", "options: Invalid input: expected object"],
    ["an unknown key", '{"redcat": false}', 'options: Unrecognized key: "redcat"'],
    ["an unknown limit", '{"limits": {"memory": 4096}}', 'options.limits: Unrecognized key: "memory"'],
    ["a negative limit", '{"limits": {"processes": -1}}', "options.limits.processes: Too small"],
    ["a fraction", '{"limits": {"cpu_seconds": 1.5}}', "options.limits.cpu_seconds: Invalid input: expected int"],
    ["a string limit", '{"limits": {"memory_mb": "4G"}}', "options.limits.memory_mb: Invalid input: expected number"],
    ["too little memory", '{"limits": {"memory_mb": 8}}', "options.limits.memory_mb: memory_mb must be 0 (no limit) or at least 16"],
    ["a zero timeout", '{"limits": {"timeout_ms": 0}}', "options.limits.timeout_ms: Too small"],
    ["redact as text", '{"redact": "no"}', "options.redact: Invalid input: expected boolean"],
  ])("refuses options with %s", async (_name, options, message) => {
    const result = await lib.rules.createRule({ tool: "run_command", command: "make *", decision: "ask", options }, "admin", lib.policy.ruleToolNames());
    expect(result).toMatchObject({ ok: false, error: { name: "invalid_arguments", code: 101, message: expect.stringContaining(message) } });
  });

  it("refuses limits on a rule for a tool that runs no command", async () => {
    const result = await lib.rules.createRule({ tool: "read_file", pathGlob: "logs/**", decision: "allow", options: '{"limits": {"memory_mb": 64}}' }, "admin", lib.policy.ruleToolNames());
    expect(result).toMatchObject({
      ok: false,
      error: {
        name: "invalid_arguments",
        message: "options.limits: limits apply to run_command only; this rule is for read_file",
        detail: { issues: [{ path: "options.limits", message: "limits apply to run_command only; this rule is for read_file" }] },
      },
    });
  });

  it.each([
    ["blank", "  ", null],
    ["an empty object", "{}", null],
    ["empty limits", '{"limits": {}}', null],
    ["masking off", '{"redact": false}', '{"redact":false}'],
    [
      "the documented example",
      '{\n  "limits": {"memory_mb": 4096, "processes": 256, "cpu_seconds": 0, "timeout_ms": 300000},\n  "redact": false\n}',
      '{"limits":{"cpu_seconds":0,"memory_mb":4096,"processes":256,"timeout_ms":300000},"redact":false}',
    ],
  ])("stores %s options as compact JSON (keys in the schema's order) the engine reads", async (_name, options, stored) => {
    const created = await lib.rules.createRule({ tool: "*", pathGlob: "build/**", decision: "ask", options }, "admin", lib.policy.ruleToolNames());
    expect(created.ok).toBe(true);
    const id = created.ok ? created.id : "";
    expect((await lib.db().policyRule.findUnique({ where: { id } }))?.optionsJson).toBe(stored);
    expect((await lib.rules.loadRules()).find((r) => r.id === id)?.options ?? null).toEqual(stored === null ? null : JSON.parse(stored));
    expect((await lib.policy.listRules()).find((r) => r.id === id)).toMatchObject({ options: stored === null ? null : JSON.parse(stored), invalidOptions: null });
    expect(await lastEvent()).toMatchObject({ type: "policy.rule_created", dataJson: expect.stringContaining(`"options":${JSON.stringify(stored)}`) });
    await lib.rules.deleteRule(id, "admin");
  });

  it("edits a rule's options, logs before and after, and clears them with blank text", async () => {
    const created = await lib.rules.createRule({ tool: "run_command", command: "npm run build *", decision: "allow" }, "admin", lib.policy.ruleToolNames());
    const id = created.ok ? created.id : "";
    const edit = (options: string) => lib.rules.updateRule(id, { tool: "run_command", command: "npm run build *", decision: "allow", options }, "admin", lib.policy.ruleToolNames());
    expect(await edit('{"limits": {"memory_mb": 8192, "cpu_seconds": 0}}')).toEqual({ ok: true, id });
    expect((await lib.policy.listRules()).find((r) => r.id === id)).toMatchObject({
      options: { limits: { memory_mb: 8192, cpu_seconds: 0 } },
      optionsSummary: ["memory 8,192 MiB", "CPU time no limit"],
    });
    const updated = JSON.parse((await lastEvent())!.dataJson) as { before: { options: string | null }; after: { options: string | null } };
    expect(updated).toMatchObject({ before: { options: null }, after: { options: '{"limits":{"cpu_seconds":0,"memory_mb":8192}}' } });

    expect((await edit('{"limits": {"memory_mb": 1}}')).ok).toBe(false);
    expect((await lib.policy.listRules()).find((r) => r.id === id)?.options).toEqual({ limits: { memory_mb: 8192, cpu_seconds: 0 } });
    expect(await edit("")).toEqual({ ok: true, id });
    expect((await lib.policy.listRules()).find((r) => r.id === id)).toMatchObject({ options: null, optionsSummary: [] });
    await lib.rules.deleteRule(id, "admin");
  });

  it("lists options stored behind the editor's back that the engine ignores, with the problem", async () => {
    const created = await lib.rules.createRule({ tool: "read_file", pathGlob: "tmp/**", decision: "allow" }, "admin", lib.policy.ruleToolNames());
    const id = created.ok ? created.id : "";
    await lib.db().policyRule.update({ where: { id }, data: { optionsJson: '{"redact": "off"}' } });
    expect((await lib.policy.listRules()).find((r) => r.id === id)).toMatchObject({
      options: null,
      optionsSummary: [],
      invalidOptions: { text: '{"redact": "off"}', problem: "redact: Invalid input: expected boolean, received string" },
    });
    await lib.rules.deleteRule(id, "admin");
  });

  it.each([
    [{ redact: false }, ["secrets unmasked"]],
    [{ redact: true }, ["secrets masked"]],
    [
      { limits: { timeout_ms: 300_000, processes: 256, memory_mb: 4096, cpu_seconds: 0 }, redact: false },
      ["memory 4,096 MiB", "processes 256", "CPU time no limit", "timeout ≤ 300,000 ms", "secrets unmasked"],
    ],
    [
      { limits: { file_size_mb: 0, address_space_mb: 16384, output_chars: 5000 } },
      ["file size no limit", "address space 16,384 MiB", "output ≤ 5,000 chars"],
    ],
    [{}, []],
  ])("describes %j as %j", (options, words) => {
    expect(lib.policy.describeRuleOptions(options)).toEqual(words);
  });

  it("tries a command, a path and a path outside the workspace without running anything", async () => {
    const read = await lib.policy.tryPolicy({ tool: "run_command", command: "ls -la" });
    expect(read.ok && read.verdict.decision).toBe("allow");
    const chain = await lib.policy.tryPolicy({ tool: "run_command", command: "ls && rm -rf build" });
    expect(chain.ok && chain.verdict.decision).not.toBe("allow");
    expect(chain.ok && chain.verdict.parts?.length).toBeGreaterThanOrEqual(2);
    const env = await lib.policy.tryPolicy({ tool: "read_file", path: ".env" });
    expect(env.ok && env.verdict.decision).not.toBe("allow");
    const outside = await lib.policy.tryPolicy({ tool: "read_file", path: "../../etc/passwd" });
    expect(outside.ok).toBe(false);
    if (!outside.ok) expect(outside.error).toMatchObject({ name: "path_outside_workspace", code: 201, message: expect.stringContaining("path_outside_workspace") });
    expect(await lib.policy.tryPolicy({ tool: "nope" })).toMatchObject({ ok: false, error: { name: "invalid_arguments", code: 101 } });
    expect(await lib.policy.tryPolicy(null as never)).toMatchObject({ ok: false, error: { name: "invalid_arguments" } });
  });
});

describe("supervision presets", () => {
  it("try it answers under every preset side by side, and names the workspace's", async () => {
    const r = await lib.policy.tryPolicy({ tool: "write_file", path: "src/app.ts" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.preset).toBe("strict"); // tests start strict (vitest.config.ts)
    expect(r.byPreset.map((b) => [b.preset, b.verdict.decision, b.verdict.preset])).toEqual([
      ["strict", "ask", "strict"],
      ["balanced", "allow", "balanced"],
      ["autonomous", "allow", "autonomous"],
    ]);
    const risky = await lib.policy.tryPolicy({ tool: "write_file", path: ".github/workflows/ci.yml" });
    expect(risky.ok && risky.byPreset.map((b) => b.verdict.decision)).toEqual(["ask", "ask", "ask"]);
    const cmd = await lib.policy.tryPolicy({ tool: "run_command", command: "python3 -m pytest -q" });
    expect(cmd.ok && cmd.byPreset.map((b) => b.verdict.rule?.id ?? null)).toEqual([null, "preset:balanced:run-boxed", "preset:autonomous:run-boxed"]);
  });

  it("the workspace's preset and a token's own preset decide, and each change is in the event log", async () => {
    const presets = await import("@/lib/policy/preset-store");
    const { currentWorkspace } = await import("@/lib/workspace/register-workspace");
    const ws = await currentWorkspace();
    await presets.setWorkspacePreset(ws.id, "balanced", "reviewer:admin");
    expect(await presets.workspacePreset(ws.id)).toBe("balanced");
    const made = await lib.agents.createAgent({ name: "careful", workspaceId: null, preset: "strict" }, "admin");
    expect(made.ok).toBe(true);
    if (!made.ok) return;
    expect(await presets.effectivePreset(ws.id, made.agentId)).toEqual({ preset: "strict", from: "agent" });
    expect((await lib.tokens.listAgents()).find((a) => a.id === made.agentId)?.preset).toBe("strict");
    expect(await presets.setAgentPreset(made.agentId, null, "reviewer:admin")).toBe(true);
    expect(await presets.effectivePreset(ws.id, made.agentId)).toEqual({ preset: "balanced", from: "workspace" });
    expect(await presets.setAgentPreset("agt_nope", "strict", "reviewer:admin")).toBe(false);
    const bad = await lib.agents.createAgent({ name: "x", workspaceId: null, preset: "yolo" as never }, "admin");
    expect(bad.ok).toBe(false);
    const events = await lib.db().event.findMany({ where: { type: { in: ["policy.preset_changed", "agent.preset_changed"] } } });
    expect(events.map((e) => e.type).sort()).toEqual(["agent.preset_changed", "policy.preset_changed"]);
    await presets.setWorkspacePreset(ws.id, "strict", "reviewer:admin");
  });
});

describe("agent tokens", () => {
  it("creates a named, scoped token that authenticates, then revokes it", async () => {
    const [workspace] = await lib.tokens.listWorkspaces();
    const created = await lib.agents.createAgent({ name: "ci bot", workspaceId: workspace.id }, "admin");
    expect(created.ok).toBe(true);
    if (!created.ok) return;
    expect(created.token).toMatch(/^ar_agent_/);
    expect(await lib.auth.authenticateAgent(created.token)).toMatchObject({ id: created.agentId, name: "ci bot" });
    const row = (await lib.tokens.listAgents()).find((a) => a.id === created.agentId)!;
    expect(row).toMatchObject({ name: "ci bot", workspaceRoot: workspace.root, revokedAt: null, sessions: 0 });
    expect(row.tokenPrefix).toBe(created.token.slice(0, 14));
    expect(JSON.stringify(await lib.db().event.findMany())).not.toContain(created.token);

    expect(await lib.agents.revokeAgentToken(created.agentId, "admin")).toEqual({ ok: true, endedCalls: [] });
    expect(await lib.auth.authenticateAgent(created.token)).toBeNull();
    expect(await lastEvent()).toMatchObject({ type: "agent.revoked", actor: "reviewer:admin" });
    expect(await lib.agents.revokeAgentToken(created.agentId, "admin")).toEqual({ ok: true, endedCalls: [] });
  });

  it.each([
    [{ name: "  ", workspaceId: "" }, "a name is required"],
    [{ name: "x", workspaceId: "ws_missing" }, "Unknown workspace."],
    [{ name: 7, workspaceId: null } as never, "expected string"],
    [undefined as never, "expected object"],
  ])("refuses %j with the API's error", async (input, message) => {
    const result = await lib.agents.createAgent(input, "admin");
    expect(result).toMatchObject({ ok: false, error: { name: "invalid_arguments", code: 101, retryable: false } });
    if (!result.ok) expect(result.error.message).toContain(message);
  });

  it("revoking an unknown agent is not_found, as the API answers", async () => {
    expect(await lib.agents.revokeAgentToken("agt_missing", "admin")).toMatchObject({ ok: false, error: { name: "not_found", code: 202, detail: { agent_id: "agt_missing" } } });
  });
});

describe("settings", () => {
  it.each([
    ["https://hooks.example.com/T0/B0", true],
    ["http://127.0.0.1:9000/hook", true],
    ["ftp://example.com/", false],
    ["not a url", false],
  ])("webhook %s accepted: %s", async (url, ok) => {
    const result = await lib.webhook.setWebhookUrl(url, "admin");
    expect(result.ok).toBe(ok);
    if (!result.ok) expect(result.error).toMatchObject({ name: "invalid_arguments", code: 101 });
    if (ok) expect((await lib.settings.getSettings()).webhookUrl).toBe(url);
  });

  it("an empty value turns the webhook off", async () => {
    expect(await lib.webhook.setWebhookUrl("", "admin")).toEqual({ ok: true });
    expect((await lib.settings.getSettings()).webhookUrl).toBe("");
    expect(await lastEvent()).toMatchObject({ type: "settings.changed", dataJson: expect.stringContaining('"set":false') });
  });
});
