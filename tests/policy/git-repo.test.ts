import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { parseNullList, readGitConfig, riskyKeys } from "@/lib/policy/git-repo";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { decideCommand, fixtureEnv } from "@/tests/policy/fixtures";

/**
 * A repository's configuration is read as git reads it (git itself parses it), and the workspace
 * root's own `.git` is trusted only while nothing in it sends git to another configuration. Each
 * planted configuration is first checked with real git to really set a key that runs a program;
 * then `git status` in it must ask, with and without the ceiling that stops git at the root.
 */

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "pipe", env: { ...gitEnv, HOME: cwd } }).toString();

const RUN = '"touch /tmp/ar-never-run; false"';

/** Configuration texts that git reads as setting a key that runs a program (or includes another file). */
const EVIL_CONFIGS: Array<[string, string]> = [
  ["plain", `[core]\n\tfsmonitor = ${RUN}\n`],
  ["comment line ending in a backslash (#)", `[core]\n\trepositoryformatversion = 0\n# keep in sync with upstream \\\n\tfsmonitor = ${RUN}\n`],
  ["comment line ending in a backslash (;)", `[core]\n; x \\\n\tfsmonitor = ${RUN}\n`],
  ["trailing ; comment ending in a backslash after a value", `[core]\n\tbare = false ; x \\\n\tfsmonitor = ${RUN}\n`],
  ["trailing # comment ending in a backslash after a value", `[core]\n\tbare = false # x \\\n\tfsmonitor = ${RUN}\n`],
  ["comment after the section header ending in a backslash", `[core] # x \\\n\tfsmonitor = ${RUN}\n`],
  ["CRLF lines", `[core]\r\n\trepositoryformatversion = 0\r\n\tfsmonitor = ${RUN}\r\n`],
  ["CRLF with a comment ending in a backslash", `[core]\r\n# x \\\r\n\tfsmonitor = ${RUN}\r\n`],
  ["quoted value with escapes", `[core]\n\tfsmonitor = "touch \\"/tmp/ar-never-run\\"; \\\n false"\n`],
  ["[CoRe] section case", `[CoRe]\n\tfsmonitor = ${RUN}\n`],
  ["core.fsMonitor key case", `[core]\n\tfsMonitor = ${RUN}\n`],
  ["key on the header line", `[core] fsmonitor = ${RUN}\n`],
  ["dotted section header", `[core.x]\n\tfoo = 1\n[core]\n\tfsmonitor = ${RUN}\n`],
  ['[core "sub"] then core', `[core "sub"]\n\tbare = false\n[core]\n\tpager = ${RUN}\n`],
  ["hooksPath", `[core]\n\thooksPath = /tmp/hooks\n`],
  ["alias", `[alias]\n\tst = !touch /tmp/ar-never-run\n`],
  ["diff.external", `[diff]\n\texternal = /bin/sh\n`],
  ["filter driver", `[filter "x"]\n\tclean = sh -c 'touch /tmp/ar-never-run'\n`],
  ["include.path", `[include]\n\tpath = ../other.cfg\n`],
  ["includeIf", `[includeIf "gitdir:/"]\n\tpath = ../other.cfg\n`],
  ["sshCommand", `[core]\n\tsshCommand = sh\n`],
];

let fx: Fixture;

beforeAll(async () => {
  fx = await makeFixture();
  git(fx.ws, "init", "-q", ".");
  await fx.put("a.txt", "a\n");
  git(fx.ws, "add", "a.txt");
  git(fx.ws, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init");
});
afterAll(async () => {
  await fx.cleanup();
});

/** `git status` in `cwd` asks at both doors: the HTTP door (ceiling set) and the hook door (none). */
async function expectAsk(command: string, cwd = fx.ws, reason?: RegExp) {
  const withCeiling = await decideCommand(fx, command, [...DEFAULT_RULES], cwd);
  expect(withCeiling.decision, JSON.stringify(withCeiling.reasons)).toBe("ask");
  if (reason) expect(withCeiling.reasons.join("\n")).toMatch(reason);
  const env = { ...fixtureEnv(fx) };
  delete env.GIT_CEILING_DIRECTORIES;
  const hook = await decide({ tool: "run_command", risk: "exec", paths: [], boxed: false, command: { command, cwd, workspaceRoot: fx.ws, env } }, [...DEFAULT_RULES]);
  expect(hook.decision, JSON.stringify(hook.reasons)).toBe("ask");
}

async function expectAllow(command: string, cwd = fx.ws) {
  const v = await decideCommand(fx, command, [...DEFAULT_RULES], cwd);
  expect(v.decision, JSON.stringify(v.reasons)).toBe("allow");
}

describe("configuration is read by git itself", () => {
  it("parses --null --list output, with and without values", () => {
    expect(parseNullList("core.bare\nfalse\0core.x\0a.b.c\nline1\nline2\0")).toEqual([
      { key: "core.bare", value: "false" },
      { key: "core.x", value: null },
      { key: "a.b.c", value: "line1\nline2" },
    ]);
  });

  it.each(EVIL_CONFIGS)("%s: git sees a risky key, and so does the policy", async (name, text) => {
    const file = fx.at(`cfg-${name.replace(/\W+/g, "-")}`);
    await fs.writeFile(file, text);
    const entries = await readGitConfig(file);
    if (entries === null) return; // git refuses the file: the repository is untrusted (checked below)
    expect(riskyKeys(entries, () => true).length, JSON.stringify(entries)).toBeGreaterThan(0);
  });

  it("an unreadable or malformed file is not trusted (null); a missing one is empty", async () => {
    await fs.writeFile(fx.at("bad.cfg"), "[core\n\tx = 1\n");
    expect(await readGitConfig(fx.at("bad.cfg"))).toBeNull();
    expect(await readGitConfig(fx.at("nope.cfg"))).toEqual([]);
    await fs.mkdir(fx.at("dir.cfg"));
    expect(await readGitConfig(fx.at("dir.cfg"))).toBeNull();
  });

  it("inert keys stay inert, subsections become *", async () => {
    await fs.writeFile(fx.at("ok.cfg"), `[core]\n\tbare = false\n[remote "origin"]\n\turl = x\n[branch "a.b"]\n\tremote = origin\n`);
    expect(riskyKeys((await readGitConfig(fx.at("ok.cfg")))!, () => true)).toEqual([]);
  });
});

describe("a repository planted beside the workspace's own asks, in every spelling", () => {
  it.each(EVIL_CONFIGS)("gitdir file → repository whose config is %s", async (name, text) => {
    const n = name.replace(/\W+/g, "-");
    const evil = fx.at(`evil-${n}`);
    await fs.mkdir(path.join(evil, "objects"), { recursive: true });
    await fs.mkdir(path.join(evil, "refs"), { recursive: true });
    await fs.writeFile(path.join(evil, "HEAD"), "ref: refs/heads/main\n");
    await fs.writeFile(path.join(evil, "config"), `[core]\n\trepositoryformatversion = 0\n${text}`);
    await fs.mkdir(fx.at(`sub-${n}`), { recursive: true });
    await fs.writeFile(fx.at(`sub-${n}/.git`), `gitdir: ../evil-${n}\n`);
    await expectAsk(`git -C sub-${n} status`);
    await expectAsk(`git log`, fx.at(`sub-${n}`));
  });
});

describe("the workspace root's own .git is trusted only while it sends git nowhere else", () => {
  /** Each plant runs in a fresh copy of an innocent repository. */
  const ROOT_PLANTS: Array<[string, (ws: string) => Promise<void>]> = [
    ["commondir relative", async (ws) => fs.writeFile(path.join(ws, ".git/commondir"), "../evil\n")],
    ["commondir absolute", async (ws) => fs.writeFile(path.join(ws, ".git/commondir"), `${path.join(ws, "evil")}\n`)],
    ["commondir without newline", async (ws) => fs.writeFile(path.join(ws, ".git/commondir"), "../evil")],
    ["commondir with trailing spaces", async (ws) => fs.writeFile(path.join(ws, ".git/commondir"), "../evil  \n")],
    ["commondir with CRLF and blank lines", async (ws) => fs.writeFile(path.join(ws, ".git/commondir"), "../evil\r\n\r\n")],
    ["commondir pointing to itself", async (ws) => fs.writeFile(path.join(ws, ".git/commondir"), ".\n")],
    ["commondir outside the workspace", async (ws) => fs.writeFile(path.join(ws, ".git/commondir"), "/tmp\n")],
    ["config.worktree with fsmonitor", async (ws) => fs.writeFile(path.join(ws, ".git/config.worktree"), `[core]\n\tfsmonitor = ${RUN}\n`)],
    ["config.worktree with a comment ending in a backslash", async (ws) => fs.writeFile(path.join(ws, ".git/config.worktree"), `[core]\n# x \\\n\tfsmonitor = ${RUN}\n`)],
    ["config.worktree unreadable to git", async (ws) => fs.writeFile(path.join(ws, ".git/config.worktree"), "[core\n")],
  ];

  it.each(ROOT_PLANTS)("%s → git status asks", async (_name, plant) => {
    const w = await makeFixture();
    try {
      git(w.ws, "init", "-q", ".");
      const evil = path.join(w.ws, "evil");
      await fs.mkdir(evil);
      for (const f of ["objects", "refs", "HEAD"]) await fs.cp(path.join(w.ws, ".git", f), path.join(evil, f), { recursive: true });
      await fs.writeFile(path.join(evil, "config"), `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = ${RUN}\n`);
      await plant(w.ws);
      for (const [command, cwd] of [["git status", w.ws], ["git log -1", w.ws], ["git status", path.join(w.ws, ".git")]] as const) {
        const v = await decideCommand(w, command, [...DEFAULT_RULES], cwd);
        expect(v.decision, `${command}: ${JSON.stringify(v.reasons)}`).toBe("ask");
      }
    } finally {
      await w.cleanup();
    }
  });

  it("a linked worktree inside the workspace with an innocent common dir still allows", async () => {
    git(fx.ws, "worktree", "add", "-q", "wt1");
    await expectAllow("git -C wt1 status");
    await expectAllow("git status", fx.at("wt1"));
  });

  it("a linked worktree whose config.worktree runs a program asks", async () => {
    git(fx.ws, "worktree", "add", "-q", "wt2");
    await fs.writeFile(fx.at(".git/worktrees/wt2/config.worktree"), `[core]\n# x \\\n\tfsmonitor = ${RUN}\n`);
    await expectAsk("git -C wt2 status");
  });

  it("a linked worktree whose commondir is rewritten asks", async () => {
    git(fx.ws, "worktree", "add", "-q", "wt3");
    await fs.writeFile(fx.at(".git/worktrees/wt3/commondir"), "../../../evil-plain\n");
    await expectAsk("git -C wt3 status");
  });

  it("an innocent repository allows git status and git log, at the root and below", async () => {
    await expectAllow("git status");
    await expectAllow("git log -1");
    await expectAllow("git log --oneline", fx.ws);
  });
});
