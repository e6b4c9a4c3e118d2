import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * The rule store and the preset store drop this process's caches themselves on every change made
 * through them, so the next decision in the same process sees the change without waiting for the
 * one-second cache; a change written behind their back (another process) waits for the cache.
 */

type Lib = {
  rules: typeof import("@/lib/policy/rule-store");
  presets: typeof import("@/lib/policy/preset-store");
  workspace: typeof import("@/lib/workspace/register-workspace");
  db: typeof import("@/lib/db").db;
};
let lib: Lib;
const TOOLS = ["*", "read_file", "write_file", "run_command"];

beforeAll(async () => {
  await useFreshDatabase();
  lib = {
    rules: await import("@/lib/policy/rule-store"),
    presets: await import("@/lib/policy/preset-store"),
    workspace: await import("@/lib/workspace/register-workspace"),
    db: (await import("@/lib/db")).db,
  };
  await lib.rules.seedDefaultRules();
});

describe("rule store", () => {
  it("a write behind the store's back waits for the cache (the cache is real)", async () => {
    await lib.rules.loadRules();
    await lib.db().policyRule.create({ data: { id: "behind", priority: 5, tool: "read_file", decision: "deny", source: "operator" } });
    expect((await lib.rules.loadRules()).some((r) => r.id === "behind")).toBe(false);
    lib.rules.invalidateRules();
    expect((await lib.rules.loadRules()).some((r) => r.id === "behind")).toBe(true);
  });

  it("every change through the store is seen by the next load at once", async () => {
    await lib.rules.loadRules();
    const created = await lib.rules.createRule({ tool: "read_file", pathGlob: "private/**", decision: "deny" }, "admin", TOOLS);
    expect(created.ok).toBe(true);
    const id = created.ok ? created.id : "";
    expect((await lib.rules.loadRules()).find((r) => r.id === id)).toMatchObject({ decision: "deny", enabled: true });

    await lib.rules.updateRule(id, { tool: "read_file", pathGlob: "private/**", decision: "ask" }, "admin", TOOLS);
    expect((await lib.rules.loadRules()).find((r) => r.id === id)?.decision).toBe("ask");

    await lib.rules.setRuleEnabled(id, false, "admin");
    expect((await lib.rules.loadRules()).find((r) => r.id === id)?.enabled).toBe(false);

    const place = async () => (await lib.rules.loadRules()).findIndex((r) => r.id === id);
    const before = await place();
    await lib.rules.moveRule(id, "up", "admin");
    expect(await place()).toBe(before - 1);

    await lib.rules.deleteRule(id, "admin");
    expect((await lib.rules.loadRules()).some((r) => r.id === id)).toBe(false);
  });

  it.each([
    [{ tool: "no_such_tool", decision: "ask" }, "tool: unknown tool"],
    [{ tool: "read_file", decision: "ask", options: '{"limits": {"memory_mb": 64}}' }, "limits apply to run_command only"],
    [{ tool: "read_file", pathGlob: "a\\b", decision: "ask" }, "use / between path components"],
  ])("refuses %j without changing anything", async (input, message) => {
    const count = await lib.db().policyRule.count();
    const result = await lib.rules.createRule(input as never, "admin", TOOLS);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ name: "invalid_arguments", message: expect.stringContaining(message) });
    expect(await lib.db().policyRule.count()).toBe(count);
  });
});

describe("preset store", () => {
  it("a preset set through the store applies to the next decision at once", async () => {
    const ws = await lib.workspace.currentWorkspace();
    await lib.presets.setWorkspacePreset(ws.id, "strict", "reviewer:admin");
    expect(await lib.presets.effectivePreset(ws.id, null)).toEqual({ preset: "strict", from: "workspace" });
    await lib.presets.setWorkspacePreset(ws.id, "autonomous", "reviewer:admin");
    expect(await lib.presets.effectivePreset(ws.id, null)).toEqual({ preset: "autonomous", from: "workspace" });

    // Behind the store's back: the cached preset stands until the cache is dropped.
    await lib.db().workspace.update({ where: { id: ws.id }, data: { preset: "balanced" } });
    expect((await lib.presets.effectivePreset(ws.id, null)).preset).toBe("autonomous");
    lib.presets.invalidatePresets();
    expect((await lib.presets.effectivePreset(ws.id, null)).preset).toBe("balanced");
  });
});
