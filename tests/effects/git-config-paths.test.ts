import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { commandWords, gitConfigPaths } from "@/lib/policy/git-config-paths";
import { decide } from "@/lib/policy/decide";
import { repositoryTrust } from "@/lib/policy/git-repo";
import { defaultRulesForPreset, type PresetName } from "@/lib/policy/presets";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * Paths the person's own git configuration runs or reads as configuration — the core.hooksPath
 * directory, included config files, scripts named by program-valued keys — are runs-later paths:
 * write_file asks under the relaxed presets, a command's change set that touches one is held, and
 * a root config that includes a workspace file with keys that are not inert is not trusted.
 * Real git reads the configuration; real overlay capture, SQLite and bash.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});

const git = (...args: string[]) => execFileSync("git", args, { cwd: ws.root });
const setKey = (key: string, value: string) => git("config", "--file", ".git/config", key, value);

/** A workspace repository whose config names paths in many spellings. */
function personsRepository(): void {
  emptyWorkspace(ws);
  git("init", "-q", "-b", "main");
  setKey("core.hooksPath", "githooks-local");
  git("config", "--file", ".git/config", "--add", "include.path", "../shared.gitconfig");
  setKey("includeIf.gitdir:/.path", "../cfg/extra.gitconfig");
  setKey("filter.lfsx.clean", "python3 scripts/clean.py --in %f");
  setKey("filter.y.smudge", "sh smudge.sh");
  setKey("filter.z.process", '"./bin/proc" --long');
  setKey("diff.pdf.textconv", "./tools/pdf2txt");
  setKey("gpg.program", "scripts/gpg-wrap");
  setKey("core.sshCommand", "ssh -F ssh/config");
  setKey("core.pager", "tools/pager.sh | less");
  setKey("alias.st", "!sh scripts/st.sh");
  setKey("alias.co", "checkout");
  setKey("alias.lg", "!git log --oneline -- src/ && echo done");
  setKey("core.attributesFile", `${ws.root}/meta/attributes`);
  fs.mkdirSync(path.join(ws.root, "cfg"));
  // Followed through the include: this file's own keys name paths too.
  fs.writeFileSync(path.join(ws.root, "cfg/extra.gitconfig"), "[core]\n\tfsmonitor = tools/fsmon.sh\n");
  fs.mkdirSync(path.join(ws.root, "src"));
  fs.writeFileSync(path.join(ws.root, "src/index.ts"), "export {};\n");
}

describe("the paths the person's git configuration names", () => {
  beforeEach(personsRepository);

  it("splits command lines as a shell does (quotes, operators, program places)", () => {
    expect(commandWords(`"./bin/proc" --long 'a b'`)).toEqual([{ word: "./bin/proc", program: true }, { word: "--long", program: false }, { word: "a b", program: false }]);
    expect(commandWords("x.sh | tools/y; z")).toEqual([{ word: "x.sh", program: true }, { word: "tools/y", program: true }, { word: "z", program: true }]);
    expect(commandWords("a > out.txt")).toEqual([{ word: "a", program: true }, { word: "out.txt", program: false }]);
  });

  it.each([
    ["githooks-local", /hooks directory \(core\.hookspath in \.git\/config\)/],
    ["githooks-local/pre-commit", /^githooks-local\/pre-commit is below githooks-local, which is the hooks directory/],
    ["githooks-local/deeper/x", /hooks directory/],
    ["shared.gitconfig", /configuration file that include\.path in \.git\/config includes/],
    ["cfg/extra.gitconfig", /includeif\.gitdir:\/\.path in \.git\/config includes/],
    ["tools/fsmon.sh", /core\.fsmonitor in cfg\/extra\.gitconfig runs/],
    ["scripts/clean.py", /filter\.lfsx\.clean/],
    ["smudge.sh", /filter\.y\.smudge/],
    ["bin/proc", /filter\.z\.process/],
    ["tools/pdf2txt", /diff\.pdf\.textconv/],
    ["scripts/gpg-wrap", /gpg\.program/],
    ["ssh/config", /core\.sshcommand/],
    ["tools/pager.sh", /core\.pager/],
    ["scripts/st.sh", /alias\.st/],
    ["meta/attributes", /core\.attributesfile/],
    ["sub/dir/tools/pager.sh", /core\.pager/],
  ])("%s is protected", async (rel, why) => {
    expect((await gitConfigPaths(ws.root)).why(rel)).toMatch(why);
  });

  it.each(["src/index.ts", "src", "README.md", "scripts/build.js", "checkout", "less", "python3", "githooks", "shared.gitconfig.bak", "cfg/other.gitconfig"])("%s is not", async (rel) => {
    expect((await gitConfigPaths(ws.root)).why(rel)).toBeNull();
  });

  it("follows a change of the configuration (cached per file signature)", async () => {
    expect((await gitConfigPaths(ws.root)).why("hooks2/pre-push")).toBeNull();
    setKey("core.hooksPath", `${ws.root}/hooks2`);
    expect((await gitConfigPaths(ws.root)).why("hooks2/pre-push")).toMatch(/hooks directory/);
    expect((await gitConfigPaths(ws.root)).why("githooks-local/pre-commit")).toBeNull();
    fs.writeFileSync(path.join(ws.root, "cfg/extra.gitconfig"), "[core]\n\tfsmonitor = tools/other-fsmon.sh\n");
    expect((await gitConfigPaths(ws.root)).why("tools/other-fsmon.sh")).toMatch(/core\.fsmonitor/);
    expect((await gitConfigPaths(ws.root)).why("tools/fsmon.sh")).toBeNull();
  });

  it("a hooks path outside the workspace protects nothing in it", async () => {
    setKey("core.hooksPath", "/usr/share/git-hooks");
    expect((await gitConfigPaths(ws.root)).why("usr/share/git-hooks/x")).toBeNull();
  });
});

describe("a bare name a program looks up is protected whether or not the file exists yet", () => {
  beforeEach(() => {
    emptyWorkspace(ws);
    git("init", "-q", "-b", "main");
  });

  // Each value is set as core.fsmonitor (or the key given); none of the named files exists.
  it.each([
    ["core.fsmonitor", "python3 -m rt7mon", ["rt7mon.py", "rt7mon/__init__.py", "rt7mon/__main__.py", "rt7mon"]],
    ["core.fsmonitor", "python3 -mrt7mon", ["rt7mon.py", "rt7mon/__init__.py"]],
    ["core.fsmonitor", "python3 -m pkg.sub --flag", ["pkg/__init__.py", "pkg/sub.py", "pkg.py"]],
    ["core.pager", "sh pagerx", ["pagerx", "pagerx.sh"]],
    ["core.pager", "bash -e pagerx | less -R", ["pagerx"]],
    ["core.sshCommand", "perl -MRT7::Mon -e 1", ["RT7/Mon.pm", "RT7.pm"]],
    ["gpg.program", "ruby -rrt7 -e 1", ["rt7.rb", "rt7/x.rb"]],
    ["gpg.program", "ruby -r rt7lib", ["rt7lib.rb"]],
    ["diff.x.textconv", "node conv", ["conv.js", "conv.mjs", "conv.cjs", "conv/index.js", "conv"]],
    ["diff.x.textconv", "node -r hook --import=other x.js", ["hook.js", "node_modules/hook/index.js", "node_modules/other/package.json", "other.mjs", "x.js"]],
    ["filter.f.clean", "perl -I inc -Mstrict filt", ["inc/Foo.pm", "strict.pm", "filt", "filt.pl"]],
    ["alias.mon", "!python3 -m tool.cli && sh after", ["tool/cli.py", "tool.py", "after"]],
  ])("%s = %s protects its files", async (key, value, rels) => {
    setKey(key, value);
    const paths = await gitConfigPaths(ws.root);
    for (const rel of rels) expect(paths.why(rel), rel).toMatch(/is a program or script that .* runs when anyone runs git/);
  });

  it.each([
    ["core.pager", "less -FRX", ["FRX", "RX", "less", "src/less"]],
    ["core.fsmonitor", "python3 -m rt7mon", ["src/rt7mon.py", "python3", "rt7monitor.py", "m"]],
    ["alias.lg", "!git log --oneline -- src/", ["src/index.ts", "log"]],
    ["color.diff.meta", "yellow bold", ["bold", "bold.txt", "yellow"]],
    ["pretty.short2", "%h %s lib", ["lib", "lib/index.ts"]],
  ])("%s = %s leaves ordinary paths alone", async (key, value, rels) => {
    setKey(key, value);
    const paths = await gitConfigPaths(ws.root);
    for (const rel of rels) expect(paths.why(rel), rel).toBeNull();
  });

  it("a command that creates the module later is held", async () => {
    setKey("core.fsmonitor", "python3 -m rt7mon");
    const before = treeHash(ws.root);
    await expect(runBoxed(ws, `printf 'import os\\n' > rt7mon.py`)).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect((JSON.parse(set!.summaryJson).hold_reasons as string[]).join("\n")).toMatch(/rt7mon\.py .*core\.fsmonitor/);
  });
});

describe("write_file and edit_file ask for them under the relaxed presets", () => {
  beforeAll(personsRepository);
  const input = (tool: string, p: string, preset: PresetName) => ({ tool, risk: "write" as const, paths: [p], workspaceRoot: ws.root, preset });
  it.each(["githooks-local/pre-commit", "shared.gitconfig", "tools/fsmon.sh", "scripts/clean.py", "sub/tools/pager.sh", "meta/attributes"])("%s asks", async (p) => {
    for (const preset of ["balanced", "autonomous"] as const) {
      for (const tool of ["write_file", "edit_file"]) {
        const v = await decide(input(tool, p, preset), defaultRulesForPreset(preset));
        expect(v, `${preset} ${tool}`).toMatchObject({ decision: "ask", rule: { id: `preset:${preset}:git-config-paths` } });
        expect(v.reasons[0]).toMatch(/^git_runs_later: /);
      }
    }
  });
  it("an ordinary file still applies at once", async () => {
    expect((await decide(input("write_file", "src/index.ts", "balanced"), defaultRulesForPreset("balanced"))).decision).toBe("allow");
  });
});

describe("a command's change set that touches them is held", () => {
  beforeEach(personsRepository);

  async function held(command: string): Promise<string> {
    const before = treeHash(ws.root);
    await expect(runBoxed(ws, command)).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    return (JSON.parse(set!.summaryJson).hold_reasons as string[]).join("\n");
  }

  it.each([
    ["a hook in the hooks path", `mkdir -p githooks-local && printf '#!/bin/sh\\ntouch /tmp/pwned5\\n' > githooks-local/pre-commit`, /changes githooks-local\/pre-commit is below githooks-local, which is the hooks directory/],
    ["the included config", `printf '[core]\\n\\tfsmonitor = "touch /tmp/pwned6; false"\\n' > shared.gitconfig`, /changes shared\.gitconfig is a configuration file that include\.path/],
    ["the fsmonitor script an include names", `mkdir -p tools && echo 'touch /tmp/x' > tools/fsmon.sh`, /changes tools\/fsmon\.sh is a program or script that core\.fsmonitor/],
    ["a filter's script", `mkdir -p scripts && echo x > scripts/clean.py`, /filter\.lfsx\.clean/],
    ["a textconv program in a subdirectory", `mkdir -p sub/tools && echo x > sub/tools/pdf2txt`, /diff\.pdf\.textconv/],
    ["the hooks directory as a link", `ln -s src githooks-local`, /githooks-local/],
  ])("%s", async (_name, command, want) => {
    expect(await held(command)).toMatch(want);
  });

  it("making an existing hook executable is held", async () => {
    fs.mkdirSync(path.join(ws.root, "githooks-local"));
    fs.writeFileSync(path.join(ws.root, "githooks-local/pre-commit"), "#!/bin/sh\nexit 0\n");
    expect(await held("chmod +x githooks-local/pre-commit")).toMatch(/githooks-local\/pre-commit/);
  });

  it("ordinary work applies: a source edit, git add and commit", async () => {
    const r = await runBoxed(ws, "echo 'export const a = 1;' > src/index.ts && git add src/index.ts && git -c user.name=t -c user.email=t@t -c core.hooksPath=/dev/null commit -qm one");
    expect(r.changes?.status, JSON.stringify(r.changes?.hold_reasons)).toBe("applied");
  });
});

describe("a root config that includes a workspace file is trusted only while that file is inert", () => {
  beforeEach(() => {
    emptyWorkspace(ws);
    git("init", "-q", "-b", "main");
  });
  it.each([
    ["include.path", "../shared.gitconfig", "shared.gitconfig"],
    ["includeIf.gitdir:/.path", "../cfg/x.gitconfig", "cfg/x.gitconfig"],
    ["include.path", "config.local", ".git/config.local"],
    ["include.path", `${"__ROOT__"}/abs.gitconfig`, "abs.gitconfig"],
  ])("%s = %s", async (key, value, rel) => {
    setKey(key, value.replace("__ROOT__", ws.root));
    const file = path.join(ws.root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "[user]\n\tname = t\n");
    expect(await repositoryTrust(ws.root, ws.root, { GIT_CEILING_DIRECTORIES: path.dirname(ws.root) })).toMatchObject({ trusted: true });
    fs.writeFileSync(file, "[core]\n\tfsmonitor = \"touch /tmp/pwned; false\"\n");
    const t = await repositoryTrust(ws.root, ws.root, { GIT_CEILING_DIRECTORIES: path.dirname(ws.root) });
    expect(t).toMatchObject({ trusted: false });
    expect(t.trusted ? "" : t.why).toMatch(new RegExp(`includes ${rel.replace(/\./g, "\\.")}, a file in the workspace, which sets core\\.fsmonitor`));
  });
  it("an include chain through a second workspace file is followed", async () => {
    setKey("include.path", "../a.gitconfig");
    fs.writeFileSync(path.join(ws.root, "a.gitconfig"), "[include]\n\tpath = b.gitconfig\n");
    fs.writeFileSync(path.join(ws.root, "b.gitconfig"), "[alias]\n\tst = !touch /tmp/x\n");
    const t = await repositoryTrust(ws.root, ws.root, { GIT_CEILING_DIRECTORIES: path.dirname(ws.root) });
    expect(t.trusted ? "" : t.why).toMatch(/includes b\.gitconfig.*alias\.st/);
    expect((await gitConfigPaths(ws.root)).why("b.gitconfig")).toMatch(/include\.path in a\.gitconfig/);
  });
});
