import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { gitIdentity } from "@/lib/exec/box-home";

const base = fs.realpathSync(os.tmpdir());
const dataDir = fs.mkdtempSync(path.join(base, "ar-sbxhome-data-"));
process.env.AGENT_REACH_DATA_DIR = dataDir;

const { runCommand } = await import("@/lib/exec/run-command");
const { resetSandboxStatus, sandboxStatus } = await import("@/lib/exec/sandbox");
const { buildChildEnv, ensureChildHome } = await import("@/lib/exec/child-env");

/**
 * The box HOME: what one command plants in its dotfiles (git's global configuration above all:
 * core.fsmonitor, aliases, hooksPath, pagers, diff drivers, includes; rc files of other tools) is
 * gone for the next command, while caches and package stores persist, `git config --global
 * user.email` lasts, and commands running at once do not see each other's dotfiles. Real bwrap,
 * real git, the child environment run_command uses.
 */

const made: string[] = [];
let ws: string;
let env: Record<string, string>;

async function run(command: string, opts: { capture?: boolean } = {}) {
  const capDir = opts.capture ? fs.mkdtempSync(path.join(dataDir, "cap-")) : null;
  const r = await runCommand({
    command,
    cwd: ws,
    timeoutMs: 30_000,
    maxOutputChars: 20_000,
    env,
    sandbox: { workspaceRoot: ws, home: env.HOME, network: false },
    ...(capDir && { capture: { dir: capDir } }),
  });
  return r;
}

const pwned = () => fs.readdirSync(ws).filter((n) => n.startsWith("PWNED"));
const clear = () => {
  for (const n of pwned()) fs.rmSync(path.join(ws, n), { force: true });
};

beforeAll(async () => {
  resetSandboxStatus();
  expect(sandboxStatus().available).toBe(true);
  ws = fs.mkdtempSync(path.join(base, "ar-sbxhome-ws-"));
  made.push(ws);
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws });
  fs.writeFileSync(path.join(ws, "a.txt"), "one\n");
  execFileSync("git", ["add", "a.txt"], { cwd: ws });
  execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one"], { cwd: ws });
  env = buildChildEnv(ws, { base: { PATH: "/usr/bin:/bin" } });
  await ensureChildHome(env);
});
beforeEach(clear);
afterAll(() => {
  for (const d of [...made, dataDir]) fs.rmSync(d, { recursive: true, force: true });
});

describe("git configuration planted in HOME does not run in a later command", () => {
  it.each([
    ["core.fsmonitor", `git config --global core.fsmonitor "touch $PWD/PWNED-fsmonitor"`, "git status"],
    ["an alias", `git config --global alias.st "!touch $PWD/PWNED-alias"`, "git st"],
    ["core.hooksPath", `mkdir -p plant/hooks && printf '#!/bin/sh\\ntouch ${"$"}PWD/PWNED-hook\\n' > plant/hooks/pre-commit && chmod +x plant/hooks/pre-commit && git config --global core.hooksPath "$PWD/plant/hooks"`, "git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x"],
    ["gpg.program with commit.gpgsign", `mkdir -p plant && printf '#!/bin/sh\\ntouch ${"$"}PWD/PWNED-gpg\\nexit 1\\n' > plant/gpg && chmod +x plant/gpg && git config --global gpg.program "$PWD/plant/gpg" && git config --global commit.gpgsign true`, "git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x 2>/dev/null"],
    ["diff.external", `mkdir -p plant && printf '#!/bin/sh\\ntouch ${"$"}PWD/PWNED-diff\\n' > plant/d.sh && chmod +x plant/d.sh && git config --global diff.external "$PWD/plant/d.sh"; echo two >> a.txt`, "git diff"],
    ["a textconv driver", `mkdir -p plant && printf '#!/bin/sh\\ntouch ${"$"}PWD/PWNED-textconv; cat "$1"\\n' > plant/t.sh && chmod +x plant/t.sh && git config --global diff.tc.textconv "$PWD/plant/t.sh" && mkdir -p ~/.config/git && echo '*.txt diff=tc' > ~/.config/git/attributes; echo two >> a.txt`, "git diff"],
    ["an include of another file", `printf '[core]\\n\\tfsmonitor = touch %s/PWNED-include\\n' "$PWD" > ~/.evil && git config --global include.path ~/.evil`, "git status"],
    ["~/.gitconfig written directly", `printf '[core]\\n\\tfsmonitor = touch %s/PWNED-direct\\n' "$PWD" > ~/.gitconfig`, "git status"],
    ["~/.config/git/config", `mkdir -p ~/.config/git && printf '[core]\\n\\tfsmonitor = touch %s/PWNED-xdg\\n' "$PWD" > ~/.config/git/config`, "git status"],
    ["a filter with attributes in ~/.config/git", `mkdir -p ~/.config/git && echo '* filter=evil' > ~/.config/git/attributes && git config --global filter.evil.clean "touch $PWD/PWNED-filter; cat"; echo three >> a.txt`, "git add -A && git status --short"],
  ])("%s", async (_name, plant, later) => {
    // The plant works within its own command (the test is meaningful)…
    await run(`${plant}; ${later}; true`);
    expect(pwned().length, "the plant did not work within its own command").toBeGreaterThan(0);
    clear();
    // …and is gone for the next one, with capture and without.
    for (const capture of [false, true]) {
      // (On the overlay the command's files are not in the workspace: it lists them itself.)
      const r = await run(`${later}; ls -d PWNED* 2>/dev/null; true`, { capture });
      expect(pwned(), `${later} (capture ${capture}): ${r.stderr}`).toEqual([]);
      expect(r.stdout).not.toContain("PWNED");
    }
    execFileSync("git", ["checkout", "-q", "--", "a.txt"], { cwd: ws });
    execFileSync("git", ["reset", "-q"], { cwd: ws });
  });

  it("the workspace's HOME on disk keeps only inert keys", () => {
    const file = path.join(env.HOME, ".gitconfig");
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    expect(text).not.toMatch(/fsmonitor|alias|hookspath|pager|external|include|filter|PWNED/i);
  });
});

describe("what normal work needs persists", () => {
  it("with no identity set in the box, a commit carries the gateway person's git identity (or the fallback)", async () => {
    const id = gitIdentity();
    const r = await run("git commit -q --allow-empty -m identity && git log -1 --format='%an <%ae>'", { capture: true });
    expect(r.stdout, r.stderr).toBe(`${id.name} <${id.email}>\n`);
  });

  it("git config --global user.name / user.email last, and a commit uses them", async () => {
    await run("git config --global user.email agent@example.test && git config --global user.name 'The Agent' && git config --global init.defaultBranch trunk");
    const r = await run("git config --global user.email; git config --global init.defaultBranch; git commit -q --allow-empty -m persisted && git log -1 --format=%an", { capture: true });
    expect(r.stdout, r.stderr).toBe("agent@example.test\ntrunk\nThe Agent\n");
  });

  it("caches and package stores persist (~/.cache, ~/.npm, pip --user), dotfiles and ~/.config do not", async () => {
    const site = (await run("python3 -m site --user-site")).stdout.trim();
    expect(site.startsWith(env.HOME)).toBe(true);
    await run(
      `mkdir -p ~/.cache/tool ~/.npm/_cacache "${site}" ~/.cargo/registry ~/.config/pip && echo kept > ~/.cache/tool/f && echo npm > ~/.npm/_cacache/x && echo 'VALUE = 42' > "${site}/agentmod.py" && echo reg > ~/.cargo/registry/r && echo x > ~/.bashrc && echo x > ~/.npmrc && echo x > ~/.config/pip/pip.conf && echo x > ~/.cargo/config.toml`,
    );
    const r = await run(`cat ~/.cache/tool/f ~/.npm/_cacache/x ~/.cargo/registry/r; python3 -c 'import agentmod; print(agentmod.VALUE)'; ls -A ~ | tr '\\n' ' '; ls -A ~/.cargo`);
    expect(r.stdout).toMatch(/^kept\nnpm\nreg\n42\n/);
    expect(r.stdout).not.toMatch(/\.bashrc|\.npmrc|\.config|config\.toml/);
  });

  it("commands at once do not see each other's dotfiles", async () => {
    const [a, b] = await Promise.all([run("echo a > ~/.x; sleep 1; cat ~/.x"), run("sleep 0.3; echo b > ~/.x; cat ~/.x")]);
    expect(a.stdout).toBe("a\n");
    expect(b.stdout).toBe("b\n");
  });

  it("the scratch HOMEs are removed when their commands end", async () => {
    await run("echo x > ~/big");
    expect(fs.readdirSync(path.join(dataDir, "sandbox", "homes"))).toEqual([]);
  });
});

describe("the persistent directories cannot be turned into doors", () => {
  it("a kept directory replaced by a symlink (left by an unboxed run) is not bound into the box", async () => {
    const outside = fs.mkdtempSync(path.join(base, "ar-sbxhome-outside-"));
    made.push(outside);
    fs.writeFileSync(path.join(outside, "host-secret"), "HOSTSECRET\n");
    fs.rmSync(path.join(env.HOME, ".cache"), { recursive: true, force: true });
    fs.symlinkSync(outside, path.join(env.HOME, ".cache"));
    try {
      const r = await run("ls -A ~/.cache; cat ~/.cache/host-secret; true");
      expect(r.stdout + r.stderr).not.toContain("HOSTSECRET");
      expect(r.stdout).not.toContain("host-secret");
    } finally {
      fs.rmSync(path.join(env.HOME, ".cache"));
    }
  });
});

describe("a link inside the workspace HOME is never followed when making the kept directories", () => {
  it("a parent of a kept directory that is a symlink: nothing is made through it, nothing bound", async () => {
    const outside = fs.mkdtempSync(path.join(base, "ar-sbxhome-parent-"));
    made.push(outside);
    fs.rmSync(path.join(env.HOME, ".gradle"), { recursive: true, force: true });
    fs.symlinkSync(outside, path.join(env.HOME, ".gradle"));
    try {
      const r = await run("ls -A ~/.gradle 2>&1; true");
      expect(fs.readdirSync(outside)).toEqual([]);
      expect(r.stdout).not.toMatch(/caches|wrapper/);
    } finally {
      fs.rmSync(path.join(env.HOME, ".gradle"));
    }
  });
});
