import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const base = fs.realpathSync(os.tmpdir());
const dataDir = fs.mkdtempSync(path.join(base, "ar-sbxcfg-data-"));
process.env.AGENT_REACH_DATA_DIR = dataDir;

const { runCommand } = await import("@/lib/exec/run-command");
const { resetSandboxStatus, sandboxStatus } = await import("@/lib/exec/sandbox");

/**
 * The repository's configuration in the box has no credentials: a token in a remote URL,
 * `http.extraHeader`, credential helpers, `url.<base>.insteadOf` with userinfo, a token key, an
 * included file in the workspace, a nested clone's and a submodule's config, a worktree's
 * `config.worktree` — read every way a command can — while git keeps working. Real bwrap, git,
 * overlays.
 */

const TOKEN = "ghp_T0KENmark";
const B64 = Buffer.from(`x:${TOKEN}`).toString("base64");
const home = path.join(dataDir, "home");
const env = { PATH: "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", GIT_CONFIG_NOSYSTEM: "1" };
const made: string[] = [];

const CONFIG = [
  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false",
  `[remote "origin"]\n\turl = https://user:${TOKEN}@github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tpushurl = https://${TOKEN}@github.com/o/r.git`,
  `[remote "mirror"]\n\turl = "https://x-access-token:${TOKEN}@gitlab.example/o/r.git"`,
  '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main',
  `[http]\n\textraheader = AUTHORIZATION: bearer ${TOKEN}`,
  `[http "https://github.com/"]\n\textraHeader = Authorization: Basic ${B64}`,
  `[credential]\n\thelper = "!f() { echo username=x; echo password=${TOKEN}; }; f"`,
  `[credential "https://github.com"]\n\tusername = ${TOKEN}`,
  `[url "https://u:${TOKEN}@github.com/"]\n\tinsteadOf = gh:`,
  `[gitlab]\n\ttoken = ${TOKEN}`,
  // Userinfo without a scheme, password keys of other names, a token under an innocent key.
  `[http]\n\tproxy = proxyuser:${TOKEN}@proxy.corp:3128`,
  `[sendemail]\n\tsmtpPass = ${TOKEN}\n\tsmtpUser = person`,
  `[imap]\n\tpass = ${TOKEN}`,
  `[deploy]\n\tkey = ${TOKEN}\n\tnote = ghp_ValueOnlyTok3nXYZ1234567890abcdefAB`,
  "[include]\n\tpath = ../creds.inc",
].join("\n");

function newRepo(): string {
  const ws = fs.mkdtempSync(path.join(base, "ar-sbxcfg-ws-"));
  made.push(ws);
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws });
  fs.writeFileSync(path.join(ws, "a.txt"), "one\n");
  execFileSync("git", ["add", "a.txt"], { cwd: ws });
  execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one"], { cwd: ws });
  fs.writeFileSync(path.join(ws, ".git", "config"), `${CONFIG}\n`);
  fs.writeFileSync(path.join(ws, "creds.inc"), `[http]\n\textraheader = PRIVATE-TOKEN: ${TOKEN}\n[user]\n\tname = included\n`);
  fs.writeFileSync(path.join(ws, ".git", "config.worktree"), `[remote "wt"]\n\turl = https://wt:${TOKEN}@h/x\n`);
  // Legacy remote files git still reads.
  fs.mkdirSync(path.join(ws, ".git", "remotes"), { recursive: true });
  fs.writeFileSync(path.join(ws, ".git", "remotes", "upstream"), `URL: https://person:${TOKEN}@github.com/o/up.git\nPull: refs/heads/main:refs/heads/upstream\n`);
  fs.mkdirSync(path.join(ws, ".git", "branches"), { recursive: true });
  fs.writeFileSync(path.join(ws, ".git", "branches", "old"), `https://old:${TOKEN}@github.com/o/old.git#main\n`);
  // A submodule's repository, a linked worktree's config, and a nested clone.
  fs.mkdirSync(path.join(ws, ".git", "modules", "libs", "sub"), { recursive: true });
  fs.writeFileSync(path.join(ws, ".git", "modules", "libs", "sub", "HEAD"), "ref: refs/heads/main\n");
  fs.writeFileSync(path.join(ws, ".git", "modules", "libs", "sub", "config"), `[remote "origin"]\n\turl = https://s:${TOKEN}@h/sub\n`);
  fs.mkdirSync(path.join(ws, ".git", "worktrees", "wt2"), { recursive: true });
  fs.writeFileSync(path.join(ws, ".git", "worktrees", "wt2", "config.worktree"), `[http]\n\textraheader = Authorization: token ${TOKEN}\n`);
  fs.mkdirSync(path.join(ws, "vendor", "lib"), { recursive: true });
  execFileSync("git", ["init", "-q"], { cwd: path.join(ws, "vendor", "lib") });
  fs.appendFileSync(path.join(ws, "vendor", "lib", ".git", "config"), `[remote "origin"]\n\turl = https://n:${TOKEN}@h/nested\n`);
  // A copy an editor or a person left beside the config; a bare mirror; a `.git` file naming a
  // git directory elsewhere in the workspace.
  fs.writeFileSync(path.join(ws, ".git", "config.bak"), `${CONFIG}\n`);
  fs.mkdirSync(path.join(ws, "mirrors"), { recursive: true });
  execFileSync("git", ["init", "-q", "--bare", "r.git"], { cwd: path.join(ws, "mirrors") });
  fs.appendFileSync(path.join(ws, "mirrors", "r.git", "config"), `[remote "origin"]\n\turl = https://b:${TOKEN}@h/bare\n`);
  fs.mkdirSync(path.join(ws, "linked"), { recursive: true });
  fs.mkdirSync(path.join(ws, "store"), { recursive: true });
  execFileSync("git", ["init", "-q", "--separate-git-dir", path.join(ws, "store", "linked.git"), path.join(ws, "linked")]);
  fs.appendFileSync(path.join(ws, "store", "linked.git", "config"), `[remote "origin"]\n\turl = https://l:${TOKEN}@h/linked\n`);
  return ws;
}

async function run(ws: string, command: string, capture: boolean) {
  const capDir = capture ? fs.mkdtempSync(path.join(dataDir, "cap-")) : null;
  return runCommand({
    command,
    cwd: ws,
    timeoutMs: 30_000,
    maxOutputChars: 50_000,
    env,
    sandbox: { workspaceRoot: ws, home, network: false },
    ...(capDir && { capture: { dir: capDir } }),
  });
}

let ws: string;
beforeAll(() => {
  fs.mkdirSync(home, { recursive: true });
  resetSandboxStatus();
  expect(sandboxStatus().available).toBe(true);
  ws = newRepo();
});
afterAll(() => {
  for (const d of [...made, dataDir]) fs.rmSync(d, { recursive: true, force: true });
});

const leaks = (out: string) => ["ValueOnlyTok3n", TOKEN, TOKEN.split("").reverse().join(""), B64, Buffer.from(TOKEN).toString("base64").slice(0, 12), Buffer.from(TOKEN).toString("hex")].filter((m) => out.includes(m));

describe("no spelling of a read shows a credential from git's configuration", () => {
  it.each([
    ["cat", "cat .git/config .git/config.worktree"],
    ["git remote -v", "git remote -v"],
    ["git config --list --show-origin", "git config --list --show-origin"],
    ["git config --get-all", "git config --get-all http.extraheader; git config --get-regexp 'credential|token|url'; git config remote.origin.url"],
    ["the included file", "cat creds.inc; git config --includes --list"],
    ["a submodule's config", "cat .git/modules/libs/sub/config"],
    ["a linked worktree's config", "cat .git/worktrees/wt2/config.worktree"],
    ["a nested clone", "git -C vendor/lib remote -v; cat vendor/lib/.git/config"],
    ["a copy beside the config", "cat .git/config.bak"],
    ["a bare mirror", "cat mirrors/r.git/config; git -C mirrors/r.git remote -v"],
    ["a .git file's git directory", "git -C linked remote -v; cat store/linked.git/config"],
    ["grep -r .git", "grep -ra T0KEN . ; true"],
    ["tar", "tar cf - . | strings | grep -c T0KEN; true"],
    ["cp then rev", "cp .git/config /tmp/c && rev /tmp/c"],
    ["base64 and python", `base64 .git/config; python3 -c "print(open('.git/config').read()[::-1])"`],
    ["/proc/self/root", `cat "/proc/self/root$PWD/.git/config"`],
    ["git ls-remote (no network, the URL is in the error)", "git ls-remote origin 2>&1; git fetch mirror 2>&1; true"],
    ["legacy remote files", "cat .git/remotes/upstream .git/branches/old; git ls-remote upstream 2>&1; git ls-remote old 2>&1; true"],
    ["proxy, smtp and imap passwords, a token under any key", "git config http.proxy; git config sendemail.smtppass; git config imap.pass; git config deploy.key; git config --list | rev"],
  ])("%s: %s", async (_name, command) => {
    for (const capture of [true, false]) {
      const r = await run(ws, command, capture);
      const out = r.stdout + r.stderr;
      expect(leaks(out), `${command} (capture ${capture}):\n${out}`).toEqual([]);
    }
  });
});

describe("git keeps working on the sanitized configuration", () => {
  it("remotes, branches and core settings stay; status, log, commit work", async () => {
    const r = await run(ws, "git remote; git remote get-url origin; git config branch.main.merge; git config core.bare; git config user.name; git status --short --untracked-files=no; git -c user.email=a@b commit -q --allow-empty -m two; git log --oneline | wc -l", true);
    expect(r.exit_code, r.stderr).toBe(0);
    expect(r.stdout).toBe("mirror\norigin\nhttps://github.com/o/r.git\nrefs/heads/main\nfalse\nincluded\n2\n");
  });

  it("the proxy keeps its host, and the legacy remote files their URLs, without credentials", async () => {
    const r = await run(ws, "git config http.proxy; git config sendemail.smtpuser; cat .git/remotes/upstream .git/branches/old", true);
    expect(r.stdout).toBe("proxy.corp:3128\nperson\nURL: https://github.com/o/up.git\nPull: refs/heads/main:refs/heads/upstream\nhttps://github.com/o/old.git#main\n");
    expect(fs.readFileSync(path.join(ws, ".git", "remotes", "upstream"), "utf8")).toContain(TOKEN);
  });

  it("the real files are unchanged", () => {
    expect(fs.readFileSync(path.join(ws, ".git", "config"), "utf8")).toBe(`${CONFIG}\n`);
    expect(fs.readFileSync(path.join(ws, "creds.inc"), "utf8")).toContain(TOKEN);
  });

  it("a config without credentials is shown as it is, byte for byte", async () => {
    const plain = newRepo();
    const text = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n# a comment the person keeps\n";
    fs.writeFileSync(path.join(plain, ".git", "config"), text);
    fs.rmSync(path.join(plain, ".git", "config.worktree"));
    expect((await run(plain, "cat .git/config", true)).stdout).toBe(text);
  });

  it("a config git cannot read is masked whole (fail closed), and a change to the real file shows in the next command", async () => {
    const broken = newRepo();
    fs.writeFileSync(path.join(broken, ".git", "config"), `[remote "origin"\n\turl = https://u:${TOKEN}@h/x\n`);
    const r = await run(broken, "cat .git/config; wc -c < .git/config", true);
    expect(leaks(r.stdout + r.stderr)).toEqual([]);
    expect(r.stdout).toBe("0\n");
    fs.writeFileSync(path.join(broken, ".git", "config"), `[remote "origin"]\n\turl = https://u:${TOKEN}@h/fixed\n`);
    expect((await run(broken, "git remote get-url origin", true)).stdout).toBe("https://h/fixed\n");
  });
});
