import { describe, expect, it } from "vitest";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import type { Decision, PolicyInput, PolicyRuleData } from "@/lib/policy/types";
import { rule } from "@/tests/policy/fixtures";

/** decide() for tools other than run_command: path globs, tool rules, order, deny > ask > allow. */

function input(tool: string, paths: string[] = [], extra: Partial<PolicyInput> = {}): PolicyInput {
  const risk = tool === "read_file" || tool === "list_directory" || tool === "search_files" ? "read" : tool === "fetch_url" ? "network" : "write";
  return { tool, risk, paths, ...extra };
}

describe("default rules", () => {
  const cases: Array<[tool: string, paths: string[], decision: Decision, ruleId: string | null]> = [
    ["read_file", ["notes.txt"], "allow", "default:read-tools"],
    ["read_file", ["src/deep/app.ts"], "allow", "default:read-tools"],
    ["list_directory", [""], "allow", "default:list-tools"],
    ["search_files", ["src"], "allow", "default:search-tools"],
    ["transform", [], "allow", "default:transform"],
    ["get_call", [], "allow", "default:get-call"],
    ["list_backups", [], "allow", "default:list-backups"],
    ["write_file", ["notes.txt"], "ask", "default:write-file"],
    ["edit_file", ["notes.txt"], "ask", "default:edit-file"],
    ["restore_backup", [], "ask", "default:restore-backup"],
    ["fetch_url", [], "ask", "default:fetch-url"],
    ["read_file", [".env"], "ask", "default:sensitive-env"],
    ["read_file", [".env.local"], "ask", "default:sensitive-env"],
    ["read_file", ["config/.env.production"], "ask", "default:sensitive-env-nested"],
    ["read_file", [".git/config"], "ask", "default:sensitive-git-dir"],
    ["list_directory", [".git/hooks"], "ask", "default:sensitive-git-dir"],
    ["read_file", ["vendor/lib/.git/HEAD"], "ask", "default:sensitive-git-dir-nested"],
    ["read_file", ["certs/server.pem"], "ask", "default:sensitive-pem"],
    ["read_file", ["server.key"], "ask", "default:sensitive-key"],
    ["read_file", ["keys/id_rsa"], "ask", "default:sensitive-ssh-keys"],
    ["read_file", ["home/.ssh/config"], "ask", "default:sensitive-ssh-dir"],
    ["read_file", ["id_ed25519.pub"], "ask", "default:sensitive-ssh-keys"],
    ["read_file", ["keys/store.p12"], "ask", "default:sensitive-keystores"],
    ["read_file", [".npmrc"], "ask", "default:sensitive-netrc"],
    ["read_file", ["deploy/.aws/credentials"], "ask", "default:sensitive-cloud-credentials"],
    ["write_file", [".env"], "ask", "default:sensitive-env"],
    ["read_file", ["environment.ts"], "allow", "default:read-tools"],
    ["read_file", ["docs/git-notes.md"], "allow", "default:read-tools"],
    ["unknown_tool", [], "ask", null],
  ];
  it.each(cases)("%s %j → %s (%s)", async (tool, paths, decision, ruleId) => {
    const v = await decide(input(tool, paths), [...DEFAULT_RULES]);
    expect(v.decision).toBe(decision);
    expect(v.rule?.id ?? null).toBe(ruleId);
    expect(v.reasons.length).toBeGreaterThan(0);
  });

  it("denies nothing by default", () => {
    expect(DEFAULT_RULES.filter((r) => r.decision === "deny")).toEqual([]);
  });

  it("has unique, stable ids in the default: namespace", () => {
    const ids = DEFAULT_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => id.startsWith("default:"))).toBe(true);
    expect(DEFAULT_RULES.every((r) => r.enabled && r.note)).toBe(true);
  });
});

describe("rule semantics", () => {
  const cases: Array<{ name: string; rules: PolicyRuleData[]; paths: string[]; decision: Decision; ruleId: string | null }> = [
    {
      name: "deny beats allow whatever the priority",
      rules: [rule("a", { tool: "read_file" }, "allow", 1), rule("d", { tool: "read_file", pathGlob: "secret/**" }, "deny", 50)],
      paths: ["secret/x"],
      decision: "deny",
      ruleId: "d",
    },
    {
      name: "ask beats allow",
      rules: [rule("a", { tool: "*" }, "allow", 1), rule("q", { tool: "read_file", pathGlob: "*.md" }, "ask", 9)],
      paths: ["README.md"],
      decision: "ask",
      ruleId: "q",
    },
    {
      name: "the deciding rule is the first by priority with the winning decision",
      rules: [rule("q2", { tool: "*", pathGlob: "**" }, "ask", 20), rule("q1", { tool: "read_file" }, "ask", 10)],
      paths: ["x"],
      decision: "ask",
      ruleId: "q1",
    },
    {
      name: "ties in priority are ordered by id",
      rules: [rule("b", { tool: "*" }, "allow", 5), rule("a", { tool: "read_file" }, "allow", 5)],
      paths: ["x"],
      decision: "allow",
      ruleId: "a",
    },
    {
      name: "disabled rules are skipped",
      rules: [rule("a", { tool: "read_file" }, "allow"), { ...rule("d", { tool: "read_file" }, "deny"), enabled: false }],
      paths: ["x"],
      decision: "allow",
      ruleId: "a",
    },
    {
      name: "rules of other tools do not apply",
      rules: [rule("w", { tool: "write_file" }, "deny"), rule("a", { tool: "read_file" }, "allow")],
      paths: ["x"],
      decision: "allow",
      ruleId: "a",
    },
    {
      name: "tool * applies to every tool",
      rules: [rule("star", { tool: "*" }, "deny")],
      paths: ["x"],
      decision: "deny",
      ruleId: "star",
    },
    {
      name: "globs match dot files",
      rules: [rule("a", { tool: "read_file" }, "allow"), rule("dot", { tool: "*", pathGlob: "**/.*" }, "ask")],
      paths: ["a/.hidden"],
      decision: "ask",
      ruleId: "dot",
    },
    {
      name: "any of several paths can match",
      rules: [rule("a", { tool: "*" }, "allow"), rule("d", { tool: "*", pathGlob: "b/**" }, "deny")],
      paths: ["a/x", "b/y"],
      decision: "deny",
      ruleId: "d",
    },
    {
      name: "a command rule never applies to other tools",
      rules: [rule("c", { tool: "*", command: "ls *" }, "deny"), rule("a", { tool: "read_file" }, "allow")],
      paths: ["x"],
      decision: "allow",
      ruleId: "a",
    },
    { name: "no matching rule asks", rules: [], paths: ["x"], decision: "ask", ruleId: null },
  ];
  it.each(cases)("$name", async ({ rules, paths, decision, ruleId }) => {
    const v = await decide(input("read_file", paths), rules);
    expect(v.decision).toBe(decision);
    expect(v.rule?.id ?? null).toBe(ruleId);
  });

  it("reasons name the path and the rule", async () => {
    const v = await decide(input("read_file", ["secret/k"]), [rule("d", { tool: "*", pathGlob: "secret/**" }, "deny")]);
    expect(v.reasons).toEqual(["secret/k: deny by rule d"]);
  });
});

describe("other names of the same file (a link's name, the path as written through a link)", () => {
  // An operator allows writes under docs/**; nothing allows src/**. The file is src/x.ts, reached as docs/x.ts.
  const rules = [rule("allow-docs", { tool: "write_file", pathGlob: "docs/**" }, "allow")];
  const cases: Array<[label: string, paths: string[], otherNames: string[], decision: Decision]> = [
    ["an allow rule matching only the other name does not allow", ["src/x.ts", "docs/x.ts"], ["docs/x.ts"], "ask"],
    ["…nor for a deeper alias", ["src/deep/y.ts", "docs/a/b/y.ts"], ["docs/a/b/y.ts"], "ask"],
    ["the canonical path allowed: allowed", ["docs/x.ts", "src/x.ts"], ["src/x.ts"], "allow"],
    ["no other names: as before", ["docs/x.ts"], [], "allow"],
  ];
  it.each(cases)("%s", async (_label, paths, otherNames, decision) => {
    const v = await decide(input("write_file", paths, { otherNames }), rules);
    expect(v.decision).toBe(decision);
  });

  it("an ask or deny rule matching only the other name still counts", async () => {
    const withAsk = [...rules, rule("ask-makefile", { tool: "write_file", pathGlob: "Makefile" }, "ask", 5), rule("deny-env", { tool: "write_file", pathGlob: ".envrc" }, "deny", 5)];
    expect((await decide(input("write_file", ["docs/make.txt", "Makefile"], { otherNames: ["Makefile"] }), withAsk)).decision).toBe("ask");
    expect((await decide(input("write_file", ["docs/env.txt", ".envrc"], { otherNames: [".envrc"] }), withAsk)).decision).toBe("deny");
  });
});
