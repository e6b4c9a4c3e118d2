import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The sandbox reads the process-wide configuration: point its data directory at a temp dir
// before anything reads it (getConfig is lazy).
const base = fs.realpathSync(os.tmpdir());
// The data directory sits inside a directory that one test uses as a workspace root.
const outer = fs.mkdtempSync(path.join(base, "ar-sbx-outer-"));
const dataDir = path.join(outer, "data");
fs.mkdirSync(dataDir);
process.env.AGENT_REACH_DATA_DIR = dataDir;

const { runCommand } = await import("@/lib/exec/run-command");
const { probeSandbox, resetSandboxStatus, sandboxStatus, secretSystemPaths, literalPrefix } = await import("@/lib/exec/sandbox");
const { acquireCommandSlot } = await import("@/lib/exec/concurrency");

/**
 * The command sandbox against real bwrap: escapes tried with several spellings each (they must
 * fail), real work that must keep working, protected paths, overlay capture with real mounts,
 * and the probe without bwrap.
 */

const mark = crypto.randomBytes(6).toString("hex");
let ws: string;
let home: string;
const secretEtc = `/etc/agent-reach-test-secret-${mark}`;
const secretRoot = `/root/.agent-reach-test-secret-${mark}`;
const auditKey = () => path.join(dataDir, "audit.key");
let listener: net.Server;
let listenerPort = 0;
let connections = 0;

async function box(command: string, extra: { network?: boolean; cwd?: string; timeoutMs?: number } = {}) {
  return runCommand({
    command,
    cwd: extra.cwd ?? ws,
    timeoutMs: extra.timeoutMs ?? 20_000,
    maxOutputChars: 20_000,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" },
    sandbox: { workspaceRoot: ws, home, network: extra.network ?? false },
  });
}

function gitHost(...args: string[]): string {
  return execFileSync("git", args, { cwd: ws, encoding: "utf8", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: home } });
}

beforeAll(async () => {
  ws = fs.mkdtempSync(path.join(base, "ar-sbx-ws-"));
  home = path.join(dataDir, "homes", "0123456789abcdef");
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.writeFileSync(auditKey(), `AUDITKEY-${mark}`, { mode: 0o600 });
  fs.writeFileSync(path.join(dataDir, "agent-reach.db"), `SQLITE-${mark}`, { mode: 0o600 });
  fs.mkdirSync(path.join(dataDir, "homes", "fedcba9876543210"), { recursive: true });
  fs.writeFileSync(path.join(dataDir, "homes", "fedcba9876543210", ".npmrc"), `OTHERHOME-${mark}`);
  fs.writeFileSync(secretEtc, `ETCSECRET-${mark}\n`, { mode: 0o600 });
  fs.writeFileSync(secretRoot, `ROOTSECRET-${mark}\n`, { mode: 0o600 });
  process.env.AR_GATEWAY_SECRET = `GATEWAYENV-${mark}`;
  resetSandboxStatus(); // rescan: the planted /etc file must be masked
  expect(sandboxStatus()).toMatchObject({ available: true, mode: "bwrap" });
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws });
  fs.writeFileSync(path.join(ws, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  fs.writeFileSync(path.join(ws, "README.md"), "hello\n");
  listener = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", () => r()));
  listenerPort = (listener.address() as net.AddressInfo).port;
}, 180_000);

afterAll(async () => {
  for (const f of [secretEtc, secretRoot]) fs.rmSync(f, { force: true });
  delete process.env.AR_GATEWAY_SECRET;
  await new Promise<void>((r) => listener.close(() => r()));
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(outer, { recursive: true, force: true });
});

describe("the probe", () => {
  it("finds bwrap and a working box here, and masks every secret system file it found", async () => {
    const status = sandboxStatus();
    expect(status.available).toBe(true);
    expect(status.version).toMatch(/bubblewrap/);
    const masks = await secretSystemPaths();
    expect(masks.error).toBeNull();
    expect(masks.files).toEqual(expect.arrayContaining(["/etc/shadow", "/etc/gshadow", secretEtc]));
    expect(masks.dirs).toContain("/etc/ssl/private");
  });

  it("fails closed with a reason and a fix when bwrap is missing", () => {
    const missing = probeSandbox({ mode: "auto", bwrap: "/nonexistent/bwrap" });
    expect(missing).toMatchObject({ available: false, mode: "bwrap" });
    expect(missing.problems.join()).toMatch(/not found at \/nonexistent\/bwrap/);
    expect(missing.fix).toMatch(/apt-get install -y bubblewrap/);
    const none = probeSandbox({ mode: "auto", bwrap: null });
    expect(none.problems.join()).toMatch(/not found on PATH/);
  });

  it("finds bwrap on PATH, and nothing on a PATH without it; AGENT_REACH_BWRAP overrides", async () => {
    const { loadConfig } = await import("@/lib/config");
    const cfg = (env: Record<string, string>) => loadConfig(env as unknown as NodeJS.ProcessEnv);
    expect(cfg({ PATH: "/usr/local/bin:/usr/bin:/bin" }).bwrapPath).toBe("/usr/bin/bwrap");
    const without = cfg({ PATH: `${base}:/nonexistent` });
    expect(without.bwrapPath).toBeNull();
    expect(probeSandbox({ mode: without.sandbox, bwrap: without.bwrapPath }).problems.join()).toMatch(/not found on PATH/);
    expect(cfg({ PATH: "/usr/bin", AGENT_REACH_BWRAP: "/opt/bw/bwrap" }).bwrapPath).toBe("/opt/bw/bwrap");
    expect(() => cfg({ AGENT_REACH_SANDBOX_READONLY: "../outside" })).toThrow(/AGENT_REACH_SANDBOX_READONLY/);
    expect(() => cfg({ AGENT_REACH_SANDBOX_READONLY: "*.sh" })).toThrow(/literal name/);
    expect(cfg({ AGENT_REACH_SANDBOX_READONLY: " Makefile, ./.github/workflows/** " }).sandboxReadOnly).toEqual(["Makefile", ".github/workflows/**"]);
  });

  it("reports a bwrap that cannot build a box (not executable as bwrap) instead of trusting it", () => {
    const status = probeSandbox({ mode: "auto", bwrap: "/bin/false" });
    expect(status.available).toBe(false);
    expect(status.problems.join()).toMatch(/trial box failed/);
  });

  it("an operator's opt-out is its own mode, with the way back", () => {
    const off = probeSandbox({ mode: "off", bwrap: "/usr/bin/bwrap" });
    expect(off).toMatchObject({ available: false, mode: "off" });
    expect(off.fix).toMatch(/AGENT_REACH_SANDBOX/);
  });

  it("globs protect their literal prefix", () => {
    expect(literalPrefix(".github/workflows/*.yml")).toBe(".github/workflows");
    expect(literalPrefix("./scripts/**")).toBe("scripts");
    expect(literalPrefix("Makefile")).toBe("Makefile");
  });
});

/** Each class: several spellings; the check says what must hold on the host or in the output. */
const escapes: Array<{ cls: string; spellings: string[]; check: (out: string) => void }> = [
  {
    cls: "read the data directory, the database, the audit key, other workspaces' homes",
    spellings: [
      () => `cat ${auditKey()}`,
      () => `cat ${dataDir}/agent-reach.db; ls -la ${dataDir}`,
      () => `cat /proc/self/root${auditKey()}`,
      () => `cat $HOME/../fedcba9876543210/.npmrc; ls $HOME/..`,
      () => `find / -xdev -name audit.key 2>/dev/null -exec cat {} \\;`,
      () => `cd /tmp/../../../..${dataDir} && cat audit.key`,
    ].map((f) => f()),
    check: (out) => {
      expect(out).not.toContain(`AUDITKEY-${mark}`);
      expect(out).not.toContain(`SQLITE-${mark}`);
      expect(out).not.toContain(`OTHERHOME-${mark}`);
    },
  },
  {
    cls: "read /etc/shadow and other files only root may read",
    spellings: [
      `cat /etc/shadow`,
      `cat ${secretEtc}`,
      `cat /etc/../etc/${path.basename(secretEtc)}`,
      `cp ${secretEtc} ./copy && cat ./copy`,
      `dd if=${secretEtc} 2>/dev/null`,
      `ln ${secretEtc} ./hard 2>&1; cat ./hard`,
      `ln -s ${secretEtc} ./soft; cat ./soft`,
      `cat /proc/1/root${secretEtc}`,
      `python3 -c "print(open('${secretEtc}').read())"`,
      `ls /etc/ssl/private`,
    ],
    check: (out) => {
      expect(out).not.toContain(`ETCSECRET-${mark}`);
      expect(out).not.toMatch(/^root:[^:\n]*:\d+:/m);
    },
  },
  {
    cls: "read the real home's dotfiles",
    spellings: [`cat /root/.bashrc`, `cat ${secretRoot}`, `ls -la /root`, `cat ~root/${path.basename(secretRoot)}`, `cat /home/*/.bashrc`, `cat $HOME/../../../../root/${path.basename(secretRoot)}`],
    check: (out) => {
      expect(out).not.toContain(`ROOTSECRET-${mark}`);
      expect(out).not.toMatch(/~\/\.bashrc: executed by bash/);
    },
  },
  {
    cls: "see the gateway's environment",
    spellings: [`cat /proc/1/environ`, `cat /proc/*/environ`, `env`, `cat /proc/$PPID/environ`, `strings /proc/${process.pid}/environ`, `cat /proc/${process.pid}/environ`],
    check: (out) => expect(out).not.toContain(`GATEWAYENV-${mark}`),
  },
  {
    cls: "see or signal other processes",
    spellings: [
      `ps -e -o pid=,args= | grep -c . ; ps -e -o args=`,
      `ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/*/cmdline | tr '\\0' ' '`,
      `kill -0 ${process.pid} && echo SIGNALLED-${mark}`,
      `kill -9 -1; echo after`,
      `strace -p ${process.pid} 2>&1 | head -2`,
      `gdb -p ${process.pid} -batch 2>&1 | grep -i attach | head -2`,
    ],
    check: (out) => {
      expect(out).not.toContain(`SIGNALLED-${mark}`);
      expect(out).not.toMatch(/vitest|node .*tinypool|next start/);
      expect(out).not.toMatch(/^\s*(\d{2,})\s*$/m); // no long process lists
    },
  },
  {
    cls: "leave the box by namespaces and mounts",
    spellings: [
      `unshare -U -r cat ${secretEtc} 2>&1`,
      `unshare -m sh -c 'umount /etc/shadow && cat /etc/shadow' 2>&1`,
      `umount ${secretEtc} 2>&1; cat ${secretEtc}`,
      `mount -t tmpfs none /mnt 2>&1`,
      `nsenter -t 1 -m -u -n -p cat ${secretEtc} 2>&1`,
      `mount --bind / ./rootview 2>&1; mkdir -p rv && mount --bind / rv 2>&1; ls rv/root 2>&1`,
      `cat /sys/fs/cgroup/cgroup.procs 2>&1; ls /sys 2>&1`,
    ],
    check: (out) => {
      expect(out).not.toContain(`ETCSECRET-${mark}`);
      expect(out).not.toContain(path.basename(secretRoot));
    },
  },
  {
    cls: "change the host kernel's settings or read host-wide kernel state through /proc (harmless knobs only)",
    spellings: [
      `echo 1 > /proc/sys/vm/drop_caches && echo WROTE-${mark}`,
      `printf 1 | tee /proc/sys/vm/compact_memory >/dev/null && echo WROTE-${mark}`,
      `sysctl -w vm.drop_caches=1 2>&1 && echo WROTE-${mark}`,
      `cd /proc/sys/vm && echo 1 > drop_caches && echo WROTE-${mark}`,
      `cat /proc/timer_list | head -40`,
      `echo 1000 > /proc/self/oom_score_adj && echo WROTE-${mark}`,
    ],
    check: (out) => {
      expect(out).not.toContain(`WROTE-${mark}`);
      expect(out).not.toMatch(/vitest|node/);
    },
  },
];

describe.each(escapes)("an escape fails: $cls", ({ spellings, check }) => {
  it.each(spellings)("%s", async (command) => {
    const r = await box(command);
    check(r.stdout + r.stderr);
    expect(r.sandbox).toMatchObject({ boxed: true, network: false });
  });
});

describe("a workspace that contains the gateway's data directory", () => {
  it("sees the data directory empty and read-only, while HOME inside it still works", async () => {
    fs.writeFileSync(path.join(outer, "project.txt"), "project\n");
    const r = await runCommand({
      command: `cat project.txt; ls -A data; cat data/audit.key data/agent-reach.db; echo x > data/new 2>&1; echo home > $HOME/h && cat $HOME/h`,
      cwd: outer,
      timeoutMs: 10_000,
      maxOutputChars: 5000,
      env: { PATH: "/usr/bin:/bin", HOME: home },
      sandbox: { workspaceRoot: outer, home, network: false },
    });
    expect(r.stdout).toContain("project\n");
    expect(r.stdout).toContain("home\n");
    const out = r.stdout + r.stderr;
    expect(out).not.toContain(`AUDITKEY-${mark}`);
    expect(out).not.toContain(`SQLITE-${mark}`);
    expect(out).toMatch(/data\/new: Read-only file system/);
    expect(fs.existsSync(path.join(dataDir, "new"))).toBe(false);
    expect(r.stdout).not.toMatch(/agent-reach\.db|audit\.key|fedcba/);
  });
});

describe("writes outside the workspace do not land on the host", () => {
  const targets = () => [`/tmp/ar-escape-${mark}`, path.join(path.dirname(ws), `ar-escape-${mark}`), `/root/ar-escape-${mark}`, path.join(dataDir, `ar-escape-${mark}`), `/etc/ar-escape-${mark}`, `/usr/local/ar-escape-${mark}`];
  it.each([
    ["redirection", (t: string) => `echo x > ${t}`],
    ["a path with ..", (t: string) => `echo x > ${ws}/../../../..${t}`],
    ["a symlink in the workspace pointing out", (t: string) => `ln -sf ${t} ./out-link && echo x > ./out-link`],
    ["cp and touch", (t: string) => `touch ${t}; cp README.md ${t}`],
    ["python", (t: string) => `python3 -c "open('${t}','w').write('x')"`],
    ["/proc/self/root", (t: string) => `echo x > /proc/self/root${t}`],
  ])("%s", async (_name, spell) => {
    for (const t of targets()) await box(`${spell(t)} 2>/dev/null; true`);
    for (const t of targets()) expect(fs.existsSync(t), t).toBe(false);
  });
});

describe("the host's loopback is unreachable", () => {
  it.each([
    () => `echo hi > /dev/tcp/127.0.0.1/${listenerPort}`,
    () => `curl -sS --max-time 2 http://127.0.0.1:${listenerPort}/`,
    () => `curl -sS --max-time 2 http://localhost:${listenerPort}/`,
    () => `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${listenerPort}), 2)"`,
    () => `node -e "require('net').connect(${listenerPort}, '127.0.0.1').on('error', e => { console.log(e.code); process.exit(1) })"`,
  ])("%s", async (spell) => {
    const before = connections;
    const r = await box(spell());
    expect(r.exit_code).not.toBe(0);
    expect(connections).toBe(before);
  });

  it("a granted network reaches it (the grant is what widens the box, and it is recorded)", async () => {
    const before = connections;
    const r = await box(`echo hi > /dev/tcp/127.0.0.1/${listenerPort}`, { network: true });
    expect(r.exit_code).toBe(0);
    expect(r.sandbox.network).toBe(true);
    await new Promise((res) => setTimeout(res, 200));
    expect(connections).toBe(before + 1);
  });
});

describe("no process outlives its command", () => {
  it.each([
    (m: string) => `nohup sleep ${m} >/dev/null 2>&1 &`,
    (m: string) => `setsid sleep ${m} >/dev/null 2>&1 &`,
    (m: string) => `(sleep ${m} &) ; disown -a`,
    (m: string) => `sleep ${m} & disown`,
    (m: string) => `setsid -f sh -c 'sleep ${m}' </dev/null >/dev/null 2>&1`,
    (m: string) => `python3 -c "import os,time
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
os.execvp('sleep', ['sleep', '${m}'])"`,
  ])("%s", async (spell) => {
    const marker = `97.${Math.floor(Math.random() * 1e6)}`;
    const r = await box(spell(marker));
    expect(r.exit_code).toBe(0);
    await new Promise((res) => setTimeout(res, 300));
    const alive = fs
      .readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
        } catch {
          return false;
        }
      });
    expect(alive).toEqual([]);
  });
});

describe("files that run later with the person's rights stay read-only", () => {
  const hostState = () => ({
    config: fs.readFileSync(path.join(ws, ".git", "config"), "utf8"),
    hooks: fs.readdirSync(path.join(ws, ".git", "hooks")).sort().join(","),
    preCommit: fs.readFileSync(path.join(ws, ".git", "hooks", "pre-commit"), "utf8"),
  });
  it.each([
    `echo 'rm -rf ~' > .git/hooks/pre-commit`,
    `echo x > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`,
    `rm -rf .git/hooks; mkdir .git/hooks; echo x > .git/hooks/pre-push`,
    `git config core.fsmonitor 'touch /tmp/pwned'`,
    `git config core.hooksPath .evil-hooks`,
    `printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config`,
    `cp README.md .git/config`,
    `ln -sf ../README.md .git/config`,
    `chmod 666 .git/config`,
    `mv .git .git-moved && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit`,
    `mv .git/hooks .git/hooks-old`,
    `mv .git/config .git/config.old; echo evil > .git/config`,
    `cd .git && rm -f config && echo evil > config`,
  ])("%s", async (command) => {
    const before = hostState();
    await box(command);
    expect(hostState()).toEqual(before);
    expect(fs.existsSync(path.join(ws, ".git-moved"))).toBe(false);
  });

  it("a missing .git/hooks cannot be created, and nothing is left behind", async () => {
    const other = fs.mkdtempSync(path.join(base, "ar-sbx-ws2-"));
    execFileSync("git", ["init", "-q"], { cwd: other });
    fs.rmSync(path.join(other, ".git", "hooks"), { recursive: true });
    const r = await runCommand({
      command: "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit; ls -la .git/hooks",
      cwd: other,
      timeoutMs: 10_000,
      maxOutputChars: 5000,
      env: { PATH: "/usr/bin:/bin", HOME: home },
      sandbox: { workspaceRoot: other, home, network: false },
    });
    expect(r.stdout + r.stderr).toMatch(/Read-only file system/);
    expect(fs.existsSync(path.join(other, ".git", "hooks"))).toBe(false);
    fs.rmSync(other, { recursive: true, force: true });
  });

  describe("every git file that names config or code to run later is read-only", () => {
    let repo: string;
    /** Every file and directory under .git except objects/refs/logs/index, with contents. */
    const gitState = () => {
      const out: string[] = [];
      const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
          const p = path.join(d, e.name);
          const rel = path.relative(repo, p);
          // git's own data, and .git/info apart from attributes (exclude, sparse-checkout, refs are writable)
          if (/^\.git\/(objects\/(?!info)|refs|logs|index|info\/(?!attributes$))/.test(rel)) continue;
          if (e.isDirectory()) {
            out.push(`${rel}/`);
            walk(p);
          } else out.push(`${rel}=${e.isSymbolicLink() ? `->${fs.readlinkSync(p)}` : fs.readFileSync(p, "utf8")}`);
        }
      };
      walk(path.join(repo, ".git"));
      return out;
    };
    beforeAll(() => {
      repo = fs.mkdtempSync(path.join(base, "ar-sbx-git-"));
      execFileSync("git", ["init", "-q"], { cwd: repo });
      const g = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(repo, ".git", rel)), { recursive: true });
        fs.writeFileSync(path.join(repo, ".git", rel), text);
      };
      g("commondir", ".\n"); // present: read-only (a missing one is left to the change-set hold)
      g("info/attributes", "*.txt text\n");
      g("worktrees/w1/commondir", "../..\n");
      g("worktrees/w1/gitdir", `${repo}/w1/.git\n`);
      g("worktrees/w1/config.worktree", "[core]\n\tbare = false\n");
      g("modules/m/config", "[core]\n\tbare = false\n");
      g("modules/m/hooks/README", "x\n");
      g("config.worktree", "[core]\n\tbare = false\n");
      g("objects/info/alternates", "");
      g("objects/info/http-alternates", "");
    });
    afterAll(() => fs.rmSync(repo, { recursive: true, force: true }));
    const inRepo = (command: string) =>
      runCommand({ command, cwd: repo, timeoutMs: 10_000, maxOutputChars: 5000, env: { PATH: "/usr/bin:/bin", HOME: home }, sandbox: { workspaceRoot: repo, home, network: false } });

    it.each([
      `echo ../evil > .git/commondir`,
      `rm -f .git/commondir; echo ../evil > .git/commondir`,
      `echo ../evil > /tmp/cd && mv -f /tmp/cd .git/commondir`,
      `echo '* filter=evil' >> .git/info/attributes`,
      `echo '* filter=evil' > .git/info/attributes.new && mv .git/info/attributes.new .git/info/attributes`,
      `mv .git/info .git/info-old; mkdir .git/info && echo '* filter=evil' > .git/info/attributes`,
      `rm -rf .git/info`,
      `echo /tmp/evil > .git/worktrees/w1/commondir`,
      `echo 'gitdir: /tmp/x' > .git/worktrees/w1/gitdir`,
      `printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/worktrees/w1/config.worktree`,
      `mkdir .git/worktrees/w2 && echo ../evil > .git/worktrees/w2/commondir`,
      `mv .git/worktrees .git/wt-old; mkdir -p .git/worktrees/w1 && echo ../evil > .git/worktrees/w1/commondir`,
      `printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/modules/m/config`,
      `echo evil > .git/modules/m/hooks/pre-commit`,
      `mkdir -p .git/modules/n/hooks && echo evil > .git/modules/n/hooks/post-checkout`,
      `mv .git/modules .git/modules-old`,
      `printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config.worktree`,
      `rm -f .git/config.worktree; echo evil > .git/config.worktree`,
      `mv .git/config.worktree .git/cw-old`,
      `echo /tmp/objects > .git/objects/info/alternates`,
      `echo http://x > .git/objects/info/http-alternates`,
      `mv .git/objects/info .git/objects/info-old`,
      `mv .git/objects .git/objects-old && mkdir -p .git/objects/info && echo /tmp > .git/objects/info/alternates`,
      `mv .git .git-moved && mkdir -p .git/info && echo evil > .git/info/attributes`,
    ])("refused: %s", async (command) => {
      const before = gitState();
      await inRepo(command);
      expect(gitState()).toEqual(before);
      expect(fs.existsSync(path.join(repo, ".git-moved"))).toBe(false);
    });

    it("missing worktrees and modules directories cannot be created, a missing info/attributes is moved out, and nothing is left behind", async () => {
      const other = fs.mkdtempSync(path.join(base, "ar-sbx-ws3-"));
      execFileSync("git", ["init", "-q"], { cwd: other });
      fs.rmSync(path.join(other, ".git", "info"), { recursive: true, force: true });
      const r = await runCommand({
        command: "mkdir -p .git/info .git/worktrees/x .git/modules/m; echo '* filter=evil' > .git/info/attributes; echo ../e > .git/worktrees/x/commondir; echo x > .git/modules/m/config; git status --short >/dev/null && echo git-ok",
        cwd: other,
        timeoutMs: 10_000,
        maxOutputChars: 5000,
        env: { PATH: "/usr/bin:/bin", HOME: home },
        sandbox: { workspaceRoot: other, home, network: false },
      });
      expect(r.stdout + r.stderr).toMatch(/Read-only file system/);
      expect(r.stdout).toMatch(/git-ok/);
      for (const d of ["info/attributes", "worktrees", "modules"]) expect(fs.existsSync(path.join(other, ".git", d)), d).toBe(false);
      expect(r.sandbox.removed?.map((e) => e.path)).toEqual([".git/info/attributes"]);
      fs.rmSync(other, { recursive: true, force: true });
    });
  });

  it("the operator's list is read-only too (a glob protects its literal prefix), missing or not", async () => {
    fs.mkdirSync(path.join(ws, ".github", "workflows"), { recursive: true });
    fs.writeFileSync(path.join(ws, ".github", "workflows", "ci.yml"), "on: push\n");
    const r = await runCommand({
      command: "echo evil >> .github/workflows/ci.yml; echo x > .github/workflows/new.yml; mkdir -p .vscode && echo '{}' > .vscode/settings.json; echo ok > notes.txt",
      cwd: ws,
      timeoutMs: 10_000,
      maxOutputChars: 5000,
      env: { PATH: "/usr/bin:/bin", HOME: home },
      sandbox: { workspaceRoot: ws, home, network: false, readOnly: [".github/workflows/*.yml", ".vscode/settings.json"] },
    });
    expect(r.sandbox.read_only).toEqual(expect.arrayContaining([".github/workflows", ".vscode"]));
    expect(fs.readFileSync(path.join(ws, ".github", "workflows", "ci.yml"), "utf8")).toBe("on: push\n");
    expect(fs.existsSync(path.join(ws, ".github", "workflows", "new.yml"))).toBe(false);
    expect(fs.existsSync(path.join(ws, ".vscode"))).toBe(false);
    expect(fs.readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("ok\n");
    fs.rmSync(path.join(ws, ".github"), { recursive: true });
    fs.rmSync(path.join(ws, "notes.txt"));
  });
});

describe("real work succeeds in the box", () => {
  it("git status, add, commit, diff in the workspace; git init of a new project in a subfolder", async () => {
    const r = await box(
      [
        "git config --global user.email agent@example.test && git config --global user.name agent",
        "echo 'line 1' > work.txt && git add work.txt && git commit -qm 'add work' && echo 'line 2' >> work.txt",
        "git status --short && git diff --stat && git log --oneline | head -3",
        "mkdir -p newproj && cd newproj && git init -q && echo a > a && git add a && git commit -qm first && git log --oneline",
      ].join(" && "),
    );
    expect(r.stderr).toBe("");
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toMatch(/M work\.txt/);
    expect(r.stdout).toMatch(/1 file changed, 1 insertion/);
    expect(gitHost("log", "--oneline")).toMatch(/add work/);
    expect(fs.statSync(path.join(ws, "work.txt")).uid).toBe(fs.statSync(ws).uid);
  });

  it("a small package's npm test", async () => {
    fs.mkdirSync(path.join(ws, "pkg"));
    fs.writeFileSync(path.join(ws, "pkg", "package.json"), JSON.stringify({ name: "pkg", version: "1.0.0", scripts: { test: "node test.js" } }));
    fs.writeFileSync(path.join(ws, "pkg", "test.js"), "const assert = require('assert'); assert.equal(1 + 1, 2); console.log('tests passed');\n");
    const r = await box("npm test --silent", { cwd: path.join(ws, "pkg"), timeoutMs: 60_000 });
    expect(r.stdout).toContain("tests passed");
    expect(r.exit_code).toBe(0);
  });

  it("a python3 script, and writes in the workspace and in /tmp (private)", async () => {
    fs.writeFileSync(path.join(ws, "hello.py"), "import sys\nopen('py-out.txt','w').write('from python')\nprint('python', sys.version_info[0])\n");
    const r = await box(`python3 hello.py && echo tmp > /tmp/t-${mark} && cat /tmp/t-${mark} && echo ws > ws-file.txt`);
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toMatch(/python 3\ntmp\n/);
    expect(fs.readFileSync(path.join(ws, "py-out.txt"), "utf8")).toBe("from python");
    expect(fs.readFileSync(path.join(ws, "ws-file.txt"), "utf8")).toBe("ws\n");
    expect(fs.existsSync(`/tmp/t-${mark}`)).toBe(false); // the box's /tmp is its own
  });

  it("HOME is writable; its caches persist between commands of the workspace, its dotfiles start fresh", async () => {
    await box("echo remembered > ~/.cache/note && echo dotfile > ~/.note");
    const r = await box("cat ~/.cache/note; cat ~/.note 2>/dev/null; true");
    expect(r.stdout).toBe("remembered\n");
  });
});

describe("overlay capture: the real workspace stays untouched; the change set is in the upper directory", () => {
  it("create, modify, delete (whiteout), rename, chmod, symlink, mkdir, rmdir (opaque or whiteout)", async () => {
    const lower = fs.mkdtempSync(path.join(base, "ar-sbx-cap-ws-"));
    fs.writeFileSync(path.join(lower, "keep.txt"), "keep\n");
    fs.writeFileSync(path.join(lower, "modify.txt"), "before\n");
    fs.writeFileSync(path.join(lower, "delete.txt"), "gone\n");
    fs.writeFileSync(path.join(lower, "rename.txt"), "moved\n");
    fs.writeFileSync(path.join(lower, "mode.sh"), "#!/bin/sh\n", { mode: 0o644 });
    fs.mkdirSync(path.join(lower, "olddir"));
    fs.writeFileSync(path.join(lower, "olddir", "x"), "x\n");
    execFileSync("git", ["init", "-q"], { cwd: lower });
    const snapshot = execFileSync("sh", ["-c", "find . -printf '%p %m %s\\n' | sort; cat keep.txt modify.txt"], { cwd: lower, encoding: "utf8" });
    const capDir = fs.mkdtempSync(path.join(dataDir, "capture-"));
    const r = await runCommand({
      command: "echo new > created.txt && echo after >> modify.txt && rm delete.txt && mv rename.txt renamed.txt && chmod 755 mode.sh && ln -s keep.txt link && mkdir newdir && echo y > newdir/y && rm -rf olddir && cat modify.txt && echo evil > .git/hooks/pre-commit; git config core.fsmonitor evil; ls",
      cwd: lower,
      timeoutMs: 20_000,
      maxOutputChars: 5000,
      env: { PATH: "/usr/bin:/bin", HOME: home },
      sandbox: { workspaceRoot: lower, home, network: false },
      capture: { dir: capDir },
    });
    expect(r.sandbox.capture).toBe(true);
    expect(r.stdout).toContain("before\nafter\n");
    // The real workspace is exactly as it was.
    expect(execFileSync("sh", ["-c", "find . -printf '%p %m %s\\n' | sort; cat keep.txt modify.txt"], { cwd: lower, encoding: "utf8" })).toBe(snapshot);
    const upper = path.join(capDir, "upper");
    const st = (p: string) => fs.lstatSync(path.join(upper, p));
    expect(fs.readFileSync(path.join(upper, "created.txt"), "utf8")).toBe("new\n");
    expect(fs.readFileSync(path.join(upper, "modify.txt"), "utf8")).toBe("before\nafter\n"); // whole file, no metacopy
    const whiteout = (p: string) => st(p).isCharacterDevice() && st(p).rdev === 0;
    expect(whiteout("delete.txt")).toBe(true);
    expect(whiteout("rename.txt")).toBe(true);
    expect(fs.readFileSync(path.join(upper, "renamed.txt"), "utf8")).toBe("moved\n");
    expect(st("mode.sh").mode & 0o777).toBe(0o755);
    expect(fs.readFileSync(path.join(upper, "mode.sh"), "utf8")).toBe("#!/bin/sh\n");
    expect(st("link").isSymbolicLink() && fs.readlinkSync(path.join(upper, "link"))).toBe("keep.txt");
    expect(fs.readFileSync(path.join(upper, "newdir", "y"), "utf8")).toBe("y\n");
    expect(whiteout("olddir")).toBe(true);
    expect(fs.existsSync(path.join(upper, "keep.txt"))).toBe(false);
    // Protected paths were read-only on the merged view too.
    expect(fs.existsSync(path.join(upper, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(fs.existsSync(path.join(upper, ".git", "config"))).toBe(false);
    // The overlay was private to the command: nothing is mounted on the host afterwards.
    expect(fs.readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(capDir);
    fs.rmSync(lower, { recursive: true, force: true });
  });

  it("refuses a capture directory inside the workspace", async () => {
    await expect(
      runCommand({ command: "true", cwd: ws, timeoutMs: 5000, maxOutputChars: 1000, env: { PATH: "/usr/bin:/bin" }, sandbox: { workspaceRoot: ws, home: null, network: false }, capture: { dir: path.join(ws, "cap") } }),
    ).rejects.toMatchObject({ errorName: "command_failed_to_start", detail: { reason: "capture_failed" } });
  });
});

describe("a ceiling on commands running at once", () => {
  it("a command waits its turn, says how long, and one whose timeout passes while waiting never runs", async () => {
    const run = (command: string, timeoutMs: number, onQueued?: (n: number) => void) =>
      runCommand({ command, cwd: ws, timeoutMs, maxOutputChars: 1000, env: { PATH: "/usr/bin:/bin" }, sandbox: { workspaceRoot: ws, home: null, network: false }, maxConcurrent: 1, onQueued });
    let queued = -1;
    const first = run("sleep 1.5", 10_000);
    await new Promise((r) => setTimeout(r, 100));
    const second = run("echo second", 10_000, (n) => (queued = n));
    const third = run(`echo never-${mark} > never.txt`, 300);
    const [a, b, c] = await Promise.all([first, second, third]);
    expect(a.queued_ms).toBe(0);
    expect(queued).toBeGreaterThanOrEqual(1);
    expect(b.queued_ms).toBeGreaterThan(500);
    expect(b.stdout).toBe("second\n");
    expect(c).toMatchObject({ timed_out: true, limit: "time", exit_code: null });
    expect(c.stderr).toMatch(/did not start: it waited \d+ ms for a free command slot/);
    expect(fs.existsSync(path.join(ws, "never.txt"))).toBe(false);
  }, 30_000);

  it("an aborted wait holds no slot", async () => {
    const hold = await acquireCommandSlot(1, { timeoutMs: 1000 });
    const ac = new AbortController();
    const waiting = acquireCommandSlot(1, { timeoutMs: 5000, signal: ac.signal });
    ac.abort();
    expect(await waiting).toBeNull();
    hold!.release();
    const next = await acquireCommandSlot(1, { timeoutMs: 100 });
    expect(next).not.toBeNull();
    next!.release();
  });
});
