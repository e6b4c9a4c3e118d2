import { spawn, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const base = fs.realpathSync(os.tmpdir());
const dataDir = fs.mkdtempSync(path.join(base, "ar-masks-data-"));
process.env.AGENT_REACH_DATA_DIR = dataDir;

const { runCommand } = await import("@/lib/exec/run-command");
const { maskArgs, resetSandboxStatus, sandboxStatus, secretSystemPaths } = await import("@/lib/exec/sandbox");

/**
 * The masks over secret (not world-readable) system files follow the system as it changes: a
 * masked file that vanishes or changes type never breaks a command, and a secret that appears in
 * /etc (the watched directory) is masked in the very next command. Real files under /etc, real
 * bwrap; everything created here is removed in afterAll.
 */

const mark = crypto.randomBytes(6).toString("hex");
const etc = (name: string) => `/etc/agent-reach-masks-${name}-${mark}`;
const made: string[] = [];
let ws: string;
let churn: ChildProcess | null = null;

function plant(file: string, text: string, mode = 0o600): void {
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
  made.push(file);
}

async function box(command: string) {
  return runCommand({
    command,
    cwd: ws,
    timeoutMs: 20_000,
    maxOutputChars: 20_000,
    env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
    sandbox: { workspaceRoot: ws, home: null, network: false },
  });
}

beforeAll(async () => {
  ws = fs.mkdtempSync(path.join(base, "ar-masks-ws-"));
  resetSandboxStatus();
  expect(sandboxStatus().available).toBe(true);
  await secretSystemPaths(); // the first scan, before anything below is planted
}, 120_000);

afterAll(() => {
  churn?.kill("SIGKILL");
  for (const p of made.reverse()) fs.rmSync(p, { recursive: true, force: true });
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("maskArgs builds masks from what exists now", () => {
  it("skips entries that vanished, masks by the current type, leaves symlinks alone", () => {
    const dir = fs.mkdtempSync(path.join(base, "ar-masks-unit-"));
    made.push(dir);
    fs.writeFileSync(path.join(dir, "file"), "x");
    fs.mkdirSync(path.join(dir, "was-file-now-dir"));
    fs.writeFileSync(path.join(dir, "was-dir-now-file"), "x");
    fs.symlinkSync("/etc/shadow", path.join(dir, "link"));
    const { args, dirs } = maskArgs({
      files: [path.join(dir, "file"), path.join(dir, "gone"), path.join(dir, "was-file-now-dir"), path.join(dir, "link")],
      dirs: [path.join(dir, "gone-dir"), path.join(dir, "was-dir-now-file")],
    });
    expect(args).toEqual([
      "--ro-bind", "/dev/null", path.join(dir, "file"),
      "--tmpfs", path.join(dir, "was-file-now-dir"),
      "--ro-bind", "/dev/null", path.join(dir, "was-dir-now-file"),
    ]);
    expect(dirs).toEqual([path.join(dir, "was-file-now-dir")]);
  });
});

describe("a masked system file that vanishes never breaks a command", () => {
  it("deleted right after a command masked it: the next commands run", async () => {
    const f = etc("vanish");
    plant(f, `VANISH-${mark}\n`);
    const masked = await box(`cat ${f} 2>&1; echo done`);
    expect(masked.stdout).not.toContain(`VANISH-${mark}`);
    expect(masked.stdout).toContain("done");
    fs.rmSync(f);
    for (const command of ["echo ok", `ls ${f} 2>&1; echo ok`, `test -e ${f} || echo absent`]) {
      const r = await box(command);
      expect(r.exit_code, `${command}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/ok|absent/);
    }
  });

  it("a stale scan that still lists a vanished file or directory (no watch event seen) does not break a command", async () => {
    const scan = await secretSystemPaths();
    scan.files.push(etc("never-there"));
    scan.dirs.push(etc("never-there-dir"));
    try {
      const r = await box("echo still-runs");
      expect(r.exit_code, r.stderr).toBe(0);
      expect(r.stdout).toBe("still-runs\n");
    } finally {
      scan.files.pop();
      scan.dirs.pop();
    }
  });

  it("a masked file replaced by a directory of the same name, and back, is masked as what it is now", async () => {
    const p = etc("retype");
    plant(p, `RETYPE-FILE-${mark}\n`);
    expect((await box(`cat ${p} 2>&1`)).stdout).not.toContain("RETYPE-FILE");
    fs.rmSync(p);
    fs.mkdirSync(p, { mode: 0o700 });
    fs.writeFileSync(path.join(p, "inner"), `RETYPE-DIR-${mark}\n`, { mode: 0o644 });
    const asDir = await box(`cat ${p}/inner 2>/dev/null; ls -A ${p} 2>/dev/null; echo ok`);
    expect(asDir.exit_code, asDir.stderr).toBe(0);
    expect(asDir.stdout).toBe("ok\n");
    fs.rmSync(p, { recursive: true });
    plant(p, `RETYPE-AGAIN-${mark}\n`);
    const again = await box(`cat ${p} 2>&1; echo ok`);
    expect(again.exit_code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain("RETYPE-AGAIN");
  });

  // (A file that appears while a command runs is in that command's live view of /etc: the
  // guarantee is for the next command, so only "every command runs" is asserted here.)
  it("a secret file that appears and vanishes over and over while commands run: every command runs", async () => {
    const f = etc("churn");
    made.push(f);
    churn = spawn("/bin/sh", ["-c", `while :; do ( umask 077; echo CHURN-${mark} > ${f} ); sleep 0.02; rm -f ${f}; sleep 0.02; done`], { stdio: "ignore" });
    try {
      for (let i = 0; i < 12; i++) {
        const r = await box(`cat ${f} 2>/dev/null; echo run-${i}`);
        expect(r.exit_code, r.stderr).toBe(0);
        expect(r.stdout).toContain(`run-${i}`);
      }
    } finally {
      churn.kill("SIGKILL");
      churn = null;
    }
  }, 120_000);
});

describe("a secret that appears in /etc is masked in the very next command", () => {
  it("a world-readable file made private (chmod) after a command read it", async () => {
    const p = etc("chmod");
    plant(p, `PUBLIC-THEN-PRIVATE-${mark}\n`, 0o644);
    expect((await box(`cat ${p}`)).stdout).toContain("PUBLIC-THEN-PRIVATE");
    fs.chmodSync(p, 0o600);
    const r = await box(`cat ${p} 2>&1; echo ok`);
    expect(r.stdout).not.toContain("PUBLIC-THEN-PRIVATE");
  });

  it.each([
    ["a new file without world read", (p: string) => plant(p, `NEW-${mark}\n`)],
    ["a file in a new subdirectory", (p: string) => {
      fs.mkdirSync(p, { mode: 0o755 });
      made.push(p);
      plant(path.join(p, "key"), `NEW-${mark}\n`);
    }],
    ["a new private directory", (p: string) => {
      fs.mkdirSync(p, { mode: 0o700 });
      made.push(p);
      fs.writeFileSync(path.join(p, "key"), `NEW-${mark}\n`, { mode: 0o644 });
    }],
    ["a file renamed into place", (p: string) => {
      const tmp = `${p}.tmp`;
      plant(tmp, `NEW-${mark}\n`);
      fs.renameSync(tmp, p);
      made.push(p);
    }],
  ])("%s", async (_name, create) => {
    const p = etc(`new-${crypto.randomBytes(3).toString("hex")}`);
    await box("true"); // the scan is current
    create(p);
    const r = await box(`cat ${p} ${p}/key 2>&1; echo ok`);
    expect(r.exit_code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(`NEW-${mark}`);
  });
});
