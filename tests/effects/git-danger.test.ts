import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { db } from "@/lib/db";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { gitDanger } from "@/lib/effects/git-danger";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { treeHash } from "@/tests/effects/tree-hash";
import { execFileSync } from "node:child_process";

/**
 * A change set that touches any file through which git finds configuration or code to run is held,
 * with a reason that names the danger (real overlay capture, real SQLite, real bash).
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});

const run = (command: string, opts: { reviewEffects?: boolean } = {}) => runBoxed(ws, command, opts);

beforeEach(() => {
  emptyWorkspace(ws);
});

describe("gitDanger names each git file that can run code", () => {
  const none: string[] = [];
  it.each([
    [".git/commondir", "../evil\n", /makes git read its config and hooks from "\.\.\/evil" \(runs code when anyone runs git\)/],
    [".git/worktrees/w/commondir", "/tmp/x", /makes git read its config/],
    [".git/worktrees/w/gitdir", null, /redirects a linked worktree/],
    [".git/config", null, /changes git's configuration/],
    [".git/config.worktree", null, /changes git's configuration/],
    [".git/worktrees/w/config.worktree", null, /changes git's configuration/],
    [".git/modules/m/config", null, /changes git's configuration/],
    [".git/modules/a/modules/b/config", null, /changes git's configuration/],
    [".git/hooks/pre-commit", null, /installs a git hook/],
    [".git/modules/m/hooks/post-checkout", null, /installs a git hook/],
    [".git/info/attributes", null, /filters or diff drivers/],
    [".git/objects/info/alternates", "/tmp/o\n", /read objects from "\/tmp\/o"/],
    [".git/objects/info/http-alternates", null, /read objects from/],
    ["sub3/.git", "gitdir: ../evil3\n", /names the repository git uses in sub3\/ \("gitdir: \.\.\/evil3"\)/],
    [".git", "gitdir: /tmp/x\n", /names the repository git uses/],
    ["vendor/lib/.git/config", null, /changes git's configuration/],
  ] as const)("%s", (rel, text, want) => {
    expect(gitDanger(rel, text, none)).toMatch(want);
  });
  it("a config below a directory with a git directory's shape is that repository's config; otherwise not", () => {
    expect(gitDanger("evil/config", null, ["evil"])).toMatch(/repository planted at evil\//);
    expect(gitDanger("evil/commondir", "x", ["evil"])).toMatch(/makes git read its config/);
    expect(gitDanger("a/b/hooks/post-checkout", null, ["a/b"])).toMatch(/installs a git hook .*a\/b has the shape of a git repository/);
    expect(gitDanger("a/b/info/attributes", null, ["a/b"])).toMatch(/filters or diff drivers/);
    expect(gitDanger("a/b/objects/info/alternates", "/x\n", ["a/b"])).toMatch(/read objects from "\/x"/);
    expect(gitDanger("a/b/worktrees/w/config.worktree", null, ["a/b"])).toMatch(/changes git's configuration/);
    expect(gitDanger("config", null, [""])).toMatch(/planted at the workspace root/);
    expect(gitDanger("evil/objects/ab/cdef", null, ["evil"])).toBeNull();
    expect(gitDanger("evil/refs/heads/main", null, ["evil"])).toBeNull();
    expect(gitDanger("evil/hooks/pre-commit.sample", null, ["evil"])).toBeNull();
    expect(gitDanger("app/config", null, [])).toBeNull();
    expect(gitDanger("src/index.ts", null, none)).toBeNull();
    expect(gitDanger(".git/index", null, none)).toBeNull();
    expect(gitDanger(".git/refs/heads/main", null, none)).toBeNull();
  });
});

describe("a command that plants git configuration is held with the danger named", () => {
  beforeEach(() => {
    execFileSync("git", ["init", "-q"], { cwd: ws.root });
  });
  it.each([
    ["a commondir naming a planted repository", `mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/ && printf "[core]\\n\\tfsmonitor = x\\n" > evil/config && echo ../evil > .git/commondir`, [/\.git\/commondir makes git read its config and hooks from "\.\.\/evil"/, /evil\/config is the config of a repository planted at evil\//]],
    ["a .git file pointing to a planted repository", `mkdir -p evil3 sub3 && cp -r .git/objects .git/refs .git/HEAD evil3/ && printf "[core]\\n# x \\\\\\n\\tfsmonitor = x\\n" > evil3/config && echo "gitdir: ../evil3" > sub3/.git`, [/sub3\/\.git names the repository git uses/]],
    // (That config is one comment line as git reads it, so inert: the .git file alone is the danger.)
    ["a planted repository whose config sets a key", `mkdir -p evil4 && cp -r .git/objects .git/refs .git/HEAD evil4/ && printf "[core]\\n\\tfsmonitor = x\\n" > evil4/config`, [/evil4\/config is the config of a repository planted/]],
    ["config.worktree", `printf "[core]\\n\\tfsmonitor = x\\n" > .git/config.worktree`, [/\.git\/config\.worktree changes git's configuration/]],
    ["info/attributes", `echo "* filter=x" > .git/info/attributes`, [/filters or diff drivers/]],
    ["a worktree's commondir", `mkdir -p .git/worktrees/w && echo /tmp/e > .git/worktrees/w/commondir`, [/worktrees\/w\/commondir makes git read its config and hooks from "\/tmp\/e"/]],
    ["a submodule's hook", `mkdir -p .git/modules/m/hooks && echo x > .git/modules/m/hooks/pre-commit`, [/installs a git hook/]],
    ["alternates", `echo /tmp/o > .git/objects/info/alternates`, [/read objects from "\/tmp\/o"/]],
  ])("%s", async (_name, command, wants) => {
    const before = treeHash(ws.root);
    // No call row exists here, so holding fails after the journal is written; the workspace is untouched either way.
    await expect(run(command)).rejects.toThrow(/left "running"/);
    expect(treeHash(ws.root)).toBe(before);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    const reasons: string[] = JSON.parse(set!.summaryJson).hold_reasons;
    for (const want of wants) expect(reasons.join("\n"), JSON.stringify(reasons)).toMatch(want);
  });
});

describe("a fresh repository is not held for what git init writes", () => {
  it("hook samples never run; a config of inert keys runs nothing", async () => {
    expect(gitDanger(".git/hooks/pre-commit.sample", null, [])).toBeNull();
    expect(gitDanger("sub/.git/hooks/pre-push.sample", null, [])).toBeNull();
    expect(gitDanger(".git/hooks/pre-commit", null, [])).toMatch(/installs a git hook/);
    const { configIsInert } = await import("@/lib/effects/git-danger");
    expect(await configIsInert(Buffer.from("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"))).toBe(true);
    for (const risky of [
      "[core]\n\tfsmonitor = evil\n",
      "[alias]\n\tst = !evil\n",
      "[include]\n\tpath = ../evil\n",
      "[core]\n\tbare = false\n# comment \\\n\tfsmonitor = evil\n",
      "[CORE]\n\tFSMonitor = evil\n",
      '[core "x"]\n\tpager = evil\n',
      "[filter \"x\"]\n\tclean = evil\n",
      "not a config [",
    ]) expect(await configIsInert(Buffer.from(risky)), risky).toBe(false);
  });

  it("git init of a new project is applied at once; one that plants a key is held", async () => {
    fs.mkdirSync(path.join(ws.root, "proj"));
    const clean = await run("cd proj && git init -q && echo a > a && git add a");
    expect(clean.changes?.status).toBe("applied");
    expect(fs.existsSync(path.join(ws.root, "proj", ".git", "HEAD"))).toBe(true);
    fs.mkdirSync(path.join(ws.root, "proj2"));
    await expect(run("cd proj2 && git init -q && git config core.fsmonitor evil")).rejects.toThrow(/left "running"/);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect(JSON.parse(set!.summaryJson).hold_reasons.join("\n")).toMatch(/proj2\/\.git\/config changes git's configuration/);
  });
});
