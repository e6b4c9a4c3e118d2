import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { defaultRulesForPreset, LARGE_CHANGE, PRESET_NAMES, PRESETS, RUNS_LATER_PATHS, rulesForPreset, type PresetName } from "@/lib/policy/presets";
import type { FileChangeFacts, PolicyInput, PolicyRuleData } from "@/lib/policy/types";
import { rule } from "@/tests/policy/fixtures";

/** Supervision presets: each preset's table over the default rules, its checks, and operator rules on top. */

let root: string;

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "presets-")));
  execFileSync("git", ["init", "-q", root]);
  fs.writeFileSync(path.join(root, "notes.txt"), "hello\n");
  fs.writeFileSync(path.join(root, ".env"), "API_KEY=sk-live-123\n");
  fs.mkdirSync(path.join(root, "src"));
  fs.writeFileSync(path.join(root, "src/app.js"), "x\n");
  // A repository whose git directory is not called .git: a .git file points at it.
  execFileSync("git", ["init", "-q", "--separate-git-dir", path.join(root, "vendor-gitdir"), path.join(root, "vendor")]);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function fileInput(tool: string, paths: string[], preset: PresetName, extra: Partial<PolicyInput> = {}): PolicyInput {
  const risk = tool === "read_file" || tool === "list_directory" || tool === "search_files" ? "read" : tool === "fetch_url" ? "network" : "write";
  return { tool, risk, paths, workspaceRoot: root, preset, ...extra };
}

function commandInput(command: string, preset: PresetName, extra: Partial<PolicyInput> = {}): PolicyInput {
  return {
    tool: "run_command",
    risk: "exec",
    paths: [],
    workspaceRoot: root,
    command: { command, cwd: root, workspaceRoot: root, env: { HOME: "/root", PATH: "/usr/bin:/bin" } },
    boxed: true,
    captured: true,
    preset,
    ...extra,
  };
}

const decideUnder = (input: PolicyInput, extraRules: PolicyRuleData[] = []) => decide(input, [...defaultRulesForPreset(input.preset!), ...extraRules]);

describe("preset tables", () => {
  it("strict is the stored table unchanged", () => {
    expect(rulesForPreset("strict", DEFAULT_RULES)).toEqual([...DEFAULT_RULES]);
  });
  it("relaxed presets replace only the write, edit and restore asks, and keep every sensitive rule", () => {
    for (const name of ["balanced", "autonomous"] as const) {
      const ids = new Set(defaultRulesForPreset(name).map((r) => r.id));
      expect(ids.has("default:write-file")).toBe(false);
      expect(ids.has("default:edit-file")).toBe(false);
      for (const r of DEFAULT_RULES.filter((r) => r.id.startsWith("default:sensitive-"))) expect(ids.has(r.id)).toBe(true);
      expect(ids.has("default:fetch-url")).toBe(true);
      expect(PRESETS[name].rules.every((r) => r.id.startsWith(`preset:${name}:`))).toBe(true);
    }
  });
  it("a verdict names its preset and where the deciding rule comes from", async () => {
    const v = await decideUnder(fileInput("write_file", ["notes.txt"], "balanced"));
    expect(v).toMatchObject({ decision: "allow", preset: "balanced", rule: { id: "preset:balanced:write-file", source: "preset" } });
    const s = await decideUnder(fileInput("write_file", ["notes.txt"], "strict"));
    expect(s).toMatchObject({ decision: "ask", preset: "strict", rule: { id: "default:write-file", source: "default" } });
    const none = await decide({ tool: "write_file", risk: "write", paths: ["notes.txt"] }, [...DEFAULT_RULES]);
    expect(none.preset).toBe("strict");
  });
});

describe("file writes under each preset", () => {
  const tools = ["write_file", "edit_file", "restore_backup"] as const;
  it.each(tools)("%s of an ordinary file: strict asks, balanced and autonomous apply", async (tool) => {
    expect((await decideUnder(fileInput(tool, ["src/app.js"], "strict"))).decision).toBe("ask");
    expect((await decideUnder(fileInput(tool, ["src/app.js"], "balanced"))).decision).toBe("allow");
    expect((await decideUnder(fileInput(tool, ["src/app.js"], "autonomous"))).decision).toBe("allow");
  });

  // Every risky-path class, in several spellings a canonical path can take.
  const risky: Array<[string, string]> = [
    [".github/workflows/ci.yml", "github-workflows"],
    ["sub/.github/workflows/release.yaml", "github-workflows"],
    [".github/actions/setup/action.yml", "github-actions"],
    [".gitlab-ci.yml", "gitlab-ci"],
    [".circleci/config.yml", "circleci"],
    ["azure-pipelines.yml", "azure-pipelines"],
    ["Jenkinsfile", "jenkins"],
    ["ci/Jenkinsfile.release", "jenkins"],
    [".travis.yml", "other-ci"],
    [".husky/pre-commit", "git-hook-managers"],
    [".githooks/pre-push", "git-hook-managers"],
    [".pre-commit-config.yaml", "git-hook-managers"],
    ["Makefile", "makefiles"],
    ["sub/GNUmakefile", "makefiles"],
    ["build/rules.mk", "makefiles"],
    ["package.json", "package-json"],
    ["packages/web/package.json", "package-json"],
    [".envrc", "envrc"],
    [".vscode/tasks.json", "editor-tasks"],
    [".vscode/launch.json", "editor-tasks"],
    [".bashrc", "shell-rc"],
    ["home/.profile", "shell-rc"],
    [".zshrc", "shell-rc"],
    [".bash_aliases", "shell-rc"],
    [".bashrc.d/10-path.sh", "shell-rc"],
    [".git-hooks/pre-commit", "git-hook-managers"],
    [".gitattributes", "git-files"],
    ["lib/.gitmodules", "git-files"],
    [".yarnrc.yml", "package-managers"],
    [".pnpmfile.cjs", "package-managers"],
    ["build.rs", "package-managers"],
    [".cargo/config.toml", "package-managers"],
    ["gradlew", "build-systems"],
    ["CMakeLists.txt", "build-systems"],
    ["justfile", "task-runners"],
    ["Dockerfile", "task-runners"],
    ["docker-compose.yml", "task-runners"],
    [".mise.toml", "task-runners"],
    ["setup.py", "python-hooks"],
    ["pyproject.toml", "python-hooks"],
    ["tests/conftest.py", "python-hooks"],
    ["sitecustomize.py", "python-hooks"],
    ["eslint.config.js", "tool-configs"],
    ["web/vite.config.ts", "tool-configs"],
    ["node_modules/.bin/node", "installed-programs"],
    [".venv/bin/python", "installed-programs"],
    [".vscode/settings.json", "editor-tasks"],
    [".idea/runConfigurations/x.xml", "editor-tasks"],
    [".claude/settings.json", "agent-config"],
    [".claude/settings.local.json", "agent-config"],
    [".mcp.json", "agent-config"],
    [".cursor/mcp.json", "agent-config"],
    [".devcontainer/devcontainer.json", "agent-config"],
    [".pryrc", "startup-files"],
    [".irbrc", "startup-files"],
    [".dir-locals.el", "editor-tasks"],
    [".bazelrc", "build-systems"],
    ["Jakefile", "task-runners"],
    ["nodemon.json", "tool-configs"],
    [".nycrc.js", "tool-configs"],
    [".storybook/main.js", "tool-configs"],
    [".babelrc", "tool-configs"],
    [".rspec", "startup-files"],
    [".mocharc.yml", "tool-configs"],
    ["nx.json", "tool-configs"],
    ["tsconfig.json", "tool-configs"],
    ["AGENTS.md", "agent-instructions"],
    ["CLAUDE.md", "agent-instructions"],
    ["docs/CLAUDE.md", "agent-instructions"],
    [".cursorrules", "agent-instructions"],
    [".windsurfrules", "agent-instructions"],
    [".github/copilot-instructions.md", "agent-instructions"],
  ];
  for (const preset of ["balanced", "autonomous"] as const) {
    it.each(risky)(`${preset}: a write to %s asks (class %s)`, async (p, cls) => {
      for (const tool of tools) {
        const v = await decideUnder(fileInput(tool, [p], preset));
        expect(v.decision, `${tool} ${p}`).toBe("ask");
        // .envrc is also a dotenv name: the sensitive rule (reads ask too) decides first.
        expect(v.rule?.id).toBe(cls === "envrc" ? "default:sensitive-env" : `preset:${preset}:risky-${cls}:${tool}`);
      }
    });
  }
  it("fetch_url asks under every preset unless a rule allows it", async () => {
    for (const preset of PRESET_NAMES) {
      expect((await decideUnder(fileInput("fetch_url", [], preset, { url: "https://example.com/" }))).decision, preset).toBe("ask");
    }
    // An operator who disables the default ask and allows fetch_url relaxes it under every preset.
    const stored = DEFAULT_RULES.map((r) => (r.id === "default:fetch-url" ? { ...r, enabled: false } : r));
    const allow = rule("op-allow-fetch", { tool: "fetch_url" }, "allow");
    for (const preset of PRESET_NAMES) {
      const v = await decide(fileInput("fetch_url", [], preset, { url: "https://example.com/" }), rulesForPreset(preset, [...stored, allow]));
      expect(v).toMatchObject({ decision: "allow", rule: { id: "op-allow-fetch", source: "operator" } });
    }
  });

  it("reading a risky file does not ask (only writes do)", async () => {
    expect((await decideUnder(fileInput("read_file", ["Makefile"], "balanced"))).decision).toBe("allow");
    expect((await decideUnder(fileInput("read_file", ["package.json"], "balanced"))).decision).toBe("allow");
  });
  it("ask rules match in any letter case (more asking, never less); allow rules only in their own", async () => {
    // The same file on a case-insensitive disk, and one more spelling to ask about on Linux.
    expect((await decideUnder(fileInput("write_file", [".GitHub/workflows/x.yml"], "balanced"))).decision).toBe("ask");
    expect((await decideUnder(fileInput("write_file", ["docs/.GITHUB/notes.md"], "balanced"))).decision).toBe("allow");
    expect((await decideUnder(fileInput("write_file", ["makefile"], "balanced"))).decision).toBe("ask"); // make reads makefile too
  });
  it("secrets and .git internals ask under every preset, reads included", async () => {
    for (const preset of PRESET_NAMES) {
      for (const [tool, p] of [["read_file", ".env"], ["write_file", ".env"], ["edit_file", ".git/config"], ["write_file", ".git/hooks/pre-commit"], ["write_file", "keys/id_rsa"]] as const) {
        expect((await decideUnder(fileInput(tool, [p], preset))).decision, `${preset} ${tool} ${p}`).toBe("ask");
      }
    }
  });
  it("a git directory reached through a .git file (gitdir:) asks, by its shape", async () => {
    for (const preset of ["balanced", "autonomous"] as const) {
      const hook = await decideUnder(fileInput("write_file", ["vendor-gitdir/hooks/pre-commit"], preset));
      expect(hook).toMatchObject({ decision: "ask", rule: { id: `preset:${preset}:git-directories` } });
      expect((await decideUnder(fileInput("edit_file", ["vendor-gitdir/config"], preset))).decision).toBe("ask");
    }
  });
  it("planting a bare repository asks at the write that completes its shape", async () => {
    fs.mkdirSync(path.join(root, "plant/objects"), { recursive: true });
    fs.mkdirSync(path.join(root, "plant/refs"), { recursive: true });
    const head = await decideUnder(fileInput("write_file", ["plant/HEAD"], "balanced"));
    expect(head.decision).toBe("ask");
    fs.writeFileSync(path.join(root, "plant/HEAD"), "ref: refs/heads/main\n");
    expect((await decideUnder(fileInput("write_file", ["plant/config"], "balanced"))).decision).toBe("ask");
    expect((await decideUnder(fileInput("write_file", ["plant2/config"], "balanced"))).decision).toBe("allow");
  });
});

describe("large deletions and rewrites", () => {
  const change = (lines: number, deletions: number, bytes = lines * 20, afterBytes = bytes): FileChangeFacts => ({ path: "big.txt", before: { lines, bytes }, deletions, afterBytes });
  it("balanced asks when most of a big file goes; autonomous and small changes do not", async () => {
    const big = await decideUnder(fileInput("write_file", ["big.txt"], "balanced", { change: change(200, 150) }));
    expect(big).toMatchObject({ decision: "ask", rule: { id: "preset:balanced:large-change", source: "preset" } });
    expect(big.reasons[0]).toMatch(/large_change: big.txt loses 150 of its 200 lines/);
    expect(big.risks?.some((r) => r.kind === "large_change")).toBe(true);
    expect((await decideUnder(fileInput("edit_file", ["big.txt"], "balanced", { change: change(200, 20) }))).decision).toBe("allow");
    expect((await decideUnder(fileInput("write_file", ["big.txt"], "balanced", { change: change(LARGE_CHANGE.minLines - 1, 39) }))).decision).toBe("allow");
    expect((await decideUnder(fileInput("write_file", ["big.txt"], "autonomous", { change: change(200, 150) }))).decision).toBe("allow");
  });
  it("a file without lines is judged by bytes", async () => {
    const bin = await decideUnder(fileInput("write_file", ["big.txt"], "balanced", { change: change(1, 0, 100_000, 10) }));
    expect(bin.decision).toBe("ask");
  });
});

describe("commands under each preset", () => {
  it("a command writing inside the workspace runs in the box without asking under balanced, asks under strict", async () => {
    const line = "python3 -c 'print(1)' > out.txt";
    expect((await decideUnder(commandInput(line, "strict"))).decision).toBe("ask");
    const b = await decideUnder(commandInput(line, "balanced"));
    expect(b).toMatchObject({ decision: "allow", preset: "balanced", rule: { id: "preset:balanced:run-boxed" } });
    expect((await decideUnder(commandInput("node --test test/", "balanced"))).decision).toBe("allow");
    expect((await decideUnder(commandInput("rm -f scratch.txt && git add -A", "autonomous"))).decision).toBe("allow");
  });
  it("changing directory inside the workspace asks for nothing by itself, under strict too; where it leads is judged", async () => {
    for (const line of ["cd src && git status", "cd src; ls -la", "pushd src && git log --oneline && popd", "cd src/ && cd .. && git diff"]) {
      expect((await decideUnder(commandInput(line, "strict"))).decision, line).toBe("allow");
    }
    for (const line of ["cd .. && ls", "cd / && cat etc/passwd", "cd ~ && ls", "cd src && cat ../.env", "cd $(rm -rf x) && ls", "cd src && echo x > out.txt", "cd src && rm app.js"]) {
      expect((await decideUnder(commandInput(line, "strict"))).decision, line).toBe("ask");
    }
    expect((await decideUnder(commandInput("cd .. && echo x > outside.txt", "strict"))).decision).toBe("deny");
  });
  it("without capture, or without the box, writes ask again", async () => {
    expect((await decideUnder(commandInput("echo x > out.txt", "balanced", { captured: false }))).decision).toBe("ask");
    expect((await decideUnder(commandInput("echo x > out.txt", "balanced", { boxed: false }))).decision).toBe("ask");
    expect((await decideUnder(commandInput("python3 x.py", "autonomous", { boxed: false }))).decision).toBe("ask");
    expect((await decideUnder(commandInput("ls", "balanced", { boxed: false, sandboxProblem: "bwrap missing" }))).decision).toBe("ask");
  });
  it("leaving the box asks or is refused under every preset", async () => {
    for (const preset of PRESET_NAMES) {
      expect((await decideUnder(commandInput("cat /etc/shadow", preset))).decision, preset).toBe("ask");
      expect((await decideUnder(commandInput("echo x > ~/.bashrc", preset))).decision, preset).toBe("deny");
      expect((await decideUnder(commandInput("cp notes.txt /tmp/../root/.bashrc", preset))).decision, preset).not.toBe("allow");
      expect((await decideUnder(commandInput("cat .env", preset))).decision, preset).toBe("ask");
      expect((await decideUnder(commandInput("grep -r KEY .", preset))).decision, preset).toBe("ask"); // reaches .env
    }
  });
  it("an operator deny or ask wins over a preset allow; an operator allow cannot lift a preset ask", async () => {
    const deny = rule("op-no-curl", { tool: "run_command", command: "curl *" }, "deny");
    expect((await decideUnder(commandInput("curl https://x.example", "autonomous"), [deny])).decision).toBe("deny");
    const ask = rule("op-ask-py", { tool: "run_command", command: "python3 *" }, "ask");
    expect((await decideUnder(commandInput("python3 x.py", "balanced"), [ask])).decision).toBe("ask");
    const allowMake = rule("op-allow-make", { tool: "write_file", pathGlob: "Makefile" }, "allow");
    expect((await decideUnder(fileInput("write_file", ["Makefile"], "balanced"), [allowMake])).decision).toBe("ask");
    const askDocs = rule("op-ask-docs", { tool: "write_file", pathGlob: "docs/**" }, "ask");
    const v = await decideUnder(fileInput("write_file", ["docs/a.md"], "balanced"), [askDocs]);
    expect(v).toMatchObject({ decision: "ask", rule: { id: "op-ask-docs", source: "operator" } });
  });
});

describe("recursive reads reaching .git in the box", () => {
  it("do not ask under balanced and autonomous, still ask under strict and unboxed", async () => {
    const dir = fs.mkdtempSync(path.join(root, "walk-"));
    execFileSync("git", ["init", "-q", dir]);
    fs.writeFileSync(path.join(dir, "a.txt"), "needle\n");
    const rel = path.basename(dir);
    const line = `grep -rn needle ${rel}`;
    expect((await decideUnder(commandInput(line, "strict"))).decision).toBe("ask");
    expect((await decideUnder(commandInput(line, "balanced"))).decision).toBe("allow");
    expect((await decideUnder(commandInput(line, "autonomous"))).decision).toBe("allow");
    expect((await decideUnder(commandInput(line, "balanced", { boxed: false }))).decision).toBe("ask");
    // A git config holding a credential is a secret again.
    execFileSync("git", ["-C", dir, "remote", "add", "origin", "https://bot:ghp_secret123@github.com/o/r.git"]);
    const cred = await decideUnder(commandInput(line, "balanced"));
    expect(cred.decision).toBe("ask");
    expect(cred.reasons.join(" ")).toMatch(/\.git\/config/);
    // And a secret beside it still asks.
    execFileSync("git", ["-C", dir, "remote", "remove", "origin"]);
    fs.writeFileSync(path.join(dir, ".env"), "K=v\n");
    expect((await decideUnder(commandInput(line, "balanced"))).decision).toBe("ask");
  });
});

describe("one runs-later list", () => {
  it("every class names a glob and a note", () => {
    for (const [id, glob, note] of RUNS_LATER_PATHS) {
      expect(id).toMatch(/^[a-z-]+$/);
      expect(glob.length).toBeGreaterThan(0);
      expect(note.length).toBeGreaterThan(10);
    }
  });
});

describe("how much of a real project the runs-later list asks about", () => {
  it("a small share of this repository's own tracked files: its manifests, lock file and tool configs", async () => {
    const repo = path.resolve(__dirname, "../..");
    const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: repo, encoding: "utf8" }).split("\0").filter(Boolean);
    const asking: string[] = [];
    for (const p of tracked) {
      const v = await decide({ tool: "write_file", risk: "write", paths: [p], workspaceRoot: repo, preset: "balanced" }, defaultRulesForPreset("balanced"));
      if (v.rule?.id.startsWith("preset:balanced:risky-")) asking.push(p);
    }
    expect(tracked.length).toBeGreaterThan(100);
    expect(asking).toEqual(expect.arrayContaining(["package.json", "package-lock.json", "tsconfig.json", "vitest.config.ts"]));
    // Sources, tests and docs apply at once: the list asks about under 5% of the files.
    expect(asking.length / tracked.length).toBeLessThan(0.05);
    expect(asking.filter((p) => /^(lib|app|tests)\/.*\.(ts|tsx)$/.test(p) && !p.endsWith(".config.ts"))).toEqual([]);
  });
});
