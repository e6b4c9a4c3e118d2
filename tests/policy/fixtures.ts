import fs from "node:fs";
import path from "node:path";
import { buildChildEnv } from "@/lib/exec/child-env";
import { decide } from "@/lib/policy/decide";
import type { Decision, PolicyInput, PolicyRuleData, PolicyVerdict } from "@/lib/policy/types";
import type { Fixture } from "@/tests/helpers/fixture";

/** A rule for tests (enabled, no note). */
export function rule(id: string, match: { tool?: string; command?: string; pathGlob?: string }, decision: Decision, priority = 10): PolicyRuleData {
  return {
    id,
    priority,
    tool: match.tool ?? "run_command",
    pathGlob: match.pathGlob ?? null,
    command: match.command ?? null,
    decision,
    note: null,
    enabled: true,
  };
}

/**
 * Shell policy P1 of docs/field-cases.md (C20, C21, C23): allow `git status`,
 * `git log [args]`, `ls [args]`, `cat [paths]`, `echo [args]`, `sed -n [args]`, `grep [args]`;
 * deny `rm`, `curl`, `wget`, `sh`, `bash`, `sudo` in any spelling (with any arguments); everything
 * else asks (no rule matches it).
 * @param extra more rules (e.g. C20-10's `cd [args]`)
 */
export function policyP1(extra: PolicyRuleData[] = []): PolicyRuleData[] {
  return [
    rule("p1:git-status", { command: "git status" }, "allow"),
    rule("p1:git-log", { command: "git log [args]" }, "allow"),
    rule("p1:ls", { command: "ls [args]" }, "allow"),
    rule("p1:cat", { command: "cat [paths]" }, "allow"),
    rule("p1:echo", { command: "echo [args]" }, "allow"),
    rule("p1:sed-n", { command: "sed -n [args]" }, "allow"),
    rule("p1:grep", { command: "grep [args]" }, "allow"),
    ...["rm", "curl", "wget", "sh", "bash", "sudo"].map((c) => rule(`p1:deny-${c}`, { command: `${c} *` }, "deny")),
    ...extra,
  ];
}

/** The child environment of the fixture's workspace, with HOME under `$ROOT/homes` (outside the workspace). */
export function fixtureEnv(fx: Fixture): Record<string, string> {
  return buildChildEnv(fx.ws, { homeRoot: path.join(fx.root, "homes") });
}

/**
 * Asks the policy about `run_command {command, cwd}` in the fixture; `$ROOT` in `command` is
 * replaced by the fixture root. `extra` adds input fields (`boxed`, `sandboxProblem`…).
 */
export function decideCommand(fx: Fixture, command: string, rules: PolicyRuleData[], cwd = fx.ws, extra: Partial<PolicyInput> = {}): Promise<PolicyVerdict> {
  return decide(
    {
      tool: "run_command",
      risk: "exec",
      paths: [],
      ...extra,
      command: { command: command.replaceAll("$ROOT", fx.root), cwd, workspaceRoot: fx.ws, env: fixtureEnv(fx) },
    },
    rules,
  );
}

/** Files whose existence would prove that a command ran or wrote outside the workspace. */
export function sentinelsPresent(fx: Fixture): string[] {
  return [fx.at("pwned"), path.join(fx.root, "proj-out", "escape.txt"), path.join(fx.root, "f"), path.join(fx.root, "homes")].filter((p) =>
    fs.existsSync(p),
  );
}
