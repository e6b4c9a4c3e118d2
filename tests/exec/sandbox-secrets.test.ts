import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { getConfig, useConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { ToolError } from "@/lib/errors";
import { resetSandboxStatus, sandboxStatus } from "@/lib/exec/sandbox";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import type { PolicyRuleData } from "@/lib/policy/types";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";

/**
 * The workspace's own secrets are masked inside the box: every spelling of a read a policy cannot
 * see through (rev, base32, an interpreter computing the name, links, archives, git, /proc) reads
 * an empty file; writes fail; and the mask never reaches the change set or the real files.
 * Real bwrap, real overlay capture, real SQLite (backups), as run_command runs a command.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
  resetSandboxStatus();
  expect(sandboxStatus().available).toBe(true);
});

/** Every secret holds this marker; no command's output may show it, forwards or backwards. */
const MARK = "S3CR3TMARK";
const SECRETS: Record<string, string> = {
  ".env": `API_KEY=${MARK}-root-env\n`,
  ".env.production": `DB=${MARK}-production\n`,
  "sub/dir/.env.local": `TOKEN=${MARK}-nested\n`,
  "id_rsa": `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARK}-id-rsa\n`,
  "certs/server.pem": `-----BEGIN PRIVATE KEY-----\n${MARK}-pem\n`,
  "config/app.key": `${MARK}-key\n`,
  ".npmrc": `//registry.npmjs.org/:_authToken=${MARK}-npmrc\n`,
  ".ssh/id_ed25519": `${MARK}-ssh\n`,
  ".ssh/config": `Host x # ${MARK}-ssh-config\n`,
  ".aws/credentials": `aws_secret_access_key=${MARK}-aws\n`,
  "weird name/with space/.env": `${MARK}-space\n`,
  "uni/ünïcødé/.env": `${MARK}-unicode\n`,
  "nl\ndir/.env": `${MARK}-newline\n`,
  // Copies under other names, and credential files of other tools.
  "#.env#": `${MARK}-emacs-autosave\n`,
  "..env.swp": `${MARK}-vim-swap\n`,
  "env.backup": `${MARK}-backup\n`,
  "certs/server.pem.bak": `${MARK}-pem-bak\n`,
  "certs/.server.pem.swp": `${MARK}-pem-swap\n`,
  ".id_rsa.swp": `${MARK}-key-swap\n`,
  "deploy/prod.env": `${MARK}-named-env\n`,
  ".pgpass": `db:5432:*:u:${MARK}-pgpass\n`,
  ".git-credentials": `https://u:${MARK}-gitcred@github.com\n`,
  "gcp/credentials.json": `{"k":"${MARK}-gcp"}\n`,
  "infra/prod.tfvars": `db_password = "${MARK}-tfvars"\n`,
  "infra/terraform.tfstate": `{"v":"${MARK}-tfstate"}\n`,
  ".docker/config.json": `{"auths":{"x":{"auth":"${MARK}-docker"}}}\n`,
  ".dev.vars": `KEY=${MARK}-devvars\n`,
  "apple/AuthKey.p8": `${MARK}-p8\n`,
  ".m2/settings.xml": `<password>${MARK}-maven</password>\n`,
  // Other letter cases (Windows exports, a case-insensitive disk): still secrets.
  ".ENV": `CASE_SECRET=${MARK}-upper-env\n`,
  ".Env.prod": `X=${MARK}-mixed-env\n`,
  "certs/LEGACY.PEM": `-----BEGIN PRIVATE KEY-----\n${MARK}-upper-pem\n`,
  "certs/client.Key": `${MARK}-mixed-key\n`,
  "ID_RSA": `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARK}-upper-id-rsa\n`,
  "certs/store.P12": `${MARK}-upper-p12\n`,
  "CERT.PFX": `${MARK}-upper-pfx\n`,
  // VPN profiles and PGP private keys.
  "vpn/office.ovpn": `<key>\n${MARK}-ovpn\n</key>\n`,
  "gpg/private.asc": `-----BEGIN PGP PRIVATE KEY BLOCK-----\n${MARK}-asc\n`,
  "gpg/secring.gpg": `${MARK}-secring\n`,
};
const TEMPLATE = "API_KEY=put-yours-here\n";

const put = (rel: string, content: string) => {
  const abs = path.join(ws.root, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
};
const real = (rel: string) => fs.readFileSync(path.join(ws.root, rel), "utf8");

function plantAll(): void {
  for (const [rel, content] of Object.entries(SECRETS)) put(rel, content);
  put(".env.example", TEMPLATE);
  put("README.md", "hello\n");
}

const reversed = [...MARK].reverse().join("");
const encodings = [MARK, reversed, Buffer.from(MARK).toString("base64").slice(0, 12), Buffer.from(MARK).toString("hex"), "S3CR3", "MARK-"];

/** Runs `command` boxed with capture and checks that nothing secret came out or went back. */
async function boxed(command: string, opts: { secretRules?: readonly PolicyRuleData[] } = {}) {
  const r = await runBoxed(ws, command, { sandbox: true, ...opts });
  const out = r.result.stdout + r.result.stderr;
  for (const e of encodings) expect(out, `${command} leaked (${e}):\n${out}`).not.toContain(e);
  // The real secrets are untouched and no change set names them.
  for (const [rel, content] of Object.entries(SECRETS)) expect(real(rel), `${command} changed ${rel}`).toBe(content);
  for (const f of r.changes?.files ?? []) expect(Object.keys(SECRETS), `${command}: the change set names ${f.path}`).not.toContain(f.path);
  const rows = await db().fileChange.findMany({ where: { callId: r.callId } }).catch(() => [] as Array<{ path: string }>);
  for (const row of rows) expect(Object.keys(SECRETS)).not.toContain(row.path);
  return { ...r, out };
}

beforeEach(() => {
  emptyWorkspace(ws);
  plantAll();
});

describe("every spelling of a read sees the secret empty", () => {
  it.each([
    ["cat", "cat .env"],
    ["rev", "rev .env"],
    ["base32", "base32 .env"],
    ["base64", "base64 .env"],
    ["xxd", "xxd .env"],
    ["tac", "tac .env"],
    ["head", "head -c 4096 .env"],
    ["tail", "tail -n 5 .env"],
    ["dd", "dd if=.env status=none"],
    ["redirect", "while read -r l; do echo \"$l\"; done < .env"],
    ["python3 computed name", `python3 -c "import sys; sys.stdout.write(open('.e'+'nv').read())"`],
    ["node fs", `node -e "process.stdout.write(require('fs').readFileSync(['.', 'e', 'n', 'v'].join('')))"`],
    ["perl", `perl -e 'open(F, "." . "env"); print <F>'`],
    ["nested .env.local", "cat sub/dir/.env.local"],
    [".env.production", "cat .env.production"],
    ["id_rsa", "cat id_rsa"],
    ["*.pem", "cat certs/server.pem"],
    ["*.key", "cat config/app.key"],
    [".npmrc", "cat .npmrc"],
    ["copies and other credential files", `for f in '#.env#' ..env.swp env.backup certs/server.pem.bak certs/.server.pem.swp .id_rsa.swp deploy/prod.env .pgpass .git-credentials gcp/credentials.json infra/prod.tfvars infra/terraform.tfstate .docker/config.json .dev.vars apple/AuthKey.p8 .m2/settings.xml; do rev "$f"; done`],
    ["a path with spaces", 'cat "weird name/with space/.env"'],
    ["a unicode path", "cat uni/ünïcødé/.env"],
    ["a path with a newline", `cat "$(printf 'nl\\ndir')/.env"`],
    // (A link to a secret left in the workspace holds its change set, round 8: these remove theirs, or make it in the box's /tmp.)
    ["symlink", "ln -s .env x && cat x; rm x"],
    ["symlink to a nested secret", "ln -s sub/dir/.env.local y && cat y; rm y"],
    ["symlink in the box's /tmp", 'ln -s "$PWD/.env" /tmp/x && cat /tmp/x'],
    ["cp", "cp .env copy && cat copy"],
    ["/proc/self/cwd", "cat /proc/self/cwd/.env"],
    ["/proc/self/root", `cat "/proc/self/root$PWD/.env"`],
    ["/proc/$$/root", `cat "/proc/$$/root$PWD/.env"`],
  ])("%s: %s", async (_name, command) => {
    const r = await boxed(command);
    expect(r.result.exit_code, r.out).toBe(0);
    expect(r.result.stdout).toBe("");
  });

  it("the mask cannot be unmounted, nor a namespace made to step around it", async () => {
    const r = await boxed("umount .env; umount -l .env; unshare -rm cat .env; cat .env; true");
    expect(r.result.stdout).toBe("");
  });

  it("without change capture (the command on the workspace itself) the masks hold as well", async () => {
    const { runCommand } = await import("@/lib/exec/run-command");
    const r = await runCommand({
      command: "cat .env sub/dir/.env.local; rev .env; echo x > .env; echo status=$?",
      cwd: ws.root,
      timeoutMs: 30_000,
      maxOutputChars: 10_000,
      env: { PATH: "/usr/bin:/bin" },
      sandbox: { workspaceRoot: ws.root, home: null, network: false },
    });
    expect(r.stdout).toBe("status=1\n");
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(r.sandbox.masked).toEqual(expect.arrayContaining([".env", "sub/dir/.env.local", ".ssh", ".aws"]));
    expect(real(".env")).toBe(SECRETS[".env"]);
  });

  it("od shows an empty file", async () => {
    expect((await boxed("od -c .env")).result.stdout).toBe("0000000\n");
  });

  it("a hard link cannot be made across the mask", async () => {
    const r = await boxed("ln .env hard; echo status=$?; cat hard 2>/dev/null; true");
    expect(r.result.stdout).toContain("status=1");
    expect(r.out).toMatch(/cross-device|Invalid/i);
  });

  it("tar of the whole workspace holds no secret", async () => {
    const r = await boxed("tar cf - . | grep -a -c MARK; true");
    expect(r.result.stdout).toBe("0\n");
  });

  it("find -exec cat over every .env* file shows only the template", async () => {
    const r = await boxed("find . -name '.env*' -type f -exec cat {} +");
    expect(r.result.stdout).toBe(TEMPLATE);
  });

  it("grep -r finds nothing", async () => {
    const r = await boxed("grep -r MARK . ; echo status=$?");
    expect(r.result.stdout).toBe("status=1\n");
  });

  it("git add -A on the workspace itself (no capture) stages .env as the empty blob", async () => {
    const { runCommand } = await import("@/lib/exec/run-command");
    const r = await runCommand({
      command: "git init -q . && git add -A && git show :.env | wc -c && git ls-files -s .env",
      cwd: ws.root,
      timeoutMs: 30_000,
      maxOutputChars: 10_000,
      env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" },
      sandbox: { workspaceRoot: ws.root, home: null, network: false },
    });
    expect(r.exit_code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^0\n100\d{3} e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\t\.env\n$/);
    for (const e of encodings) expect(r.stdout + r.stderr).not.toContain(e);
    expect(real(".env")).toBe(SECRETS[".env"]);
  });

  it("git sees .env as the empty blob; staging that empty file (a later checkout would write it) is held", async () => {
    const r = await boxed("git hash-object .env");
    expect(r.result.stdout).toBe("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n");
    await expect(runBoxed(ws, "git init -q . && git add -A", { sandbox: true })).rejects.toThrow(/left "running"/);
    expect(real(".env")).toBe(SECRETS[".env"]);
    expect(fs.existsSync(path.join(ws.root, ".git"))).toBe(false);
    const set = await db().changeSet.findFirst({ where: { status: "held" }, orderBy: { createdAt: "desc" } });
    expect(JSON.stringify(JSON.parse(set!.summaryJson).hold_reasons)).toContain(".env");
  });

  it("secret directories are empty and their files absent", async () => {
    const r = await boxed("ls -A .ssh .aws; cat .ssh/id_ed25519 .aws/credentials 2>&1; true");
    expect(r.result.stdout).toContain("No such file");
    expect(r.result.stdout).not.toContain("id_ed25519\n");
  });

  it("ls -la still lists .env, empty, and the command succeeds", async () => {
    const r = await boxed("ls -la");
    expect(r.result.exit_code).toBe(0);
    expect(r.result.stdout).toMatch(/-r--r--r-- .* 0 .* \.env\n/);
    expect(r.result.stdout).toMatch(/ \.env\.example\n/);
  });

  it("templates stay readable", async () => {
    expect((await boxed("cat .env.example")).result.stdout).toBe(TEMPLATE);
  });

  it("the workspace's other files are untouched by the masks", async () => {
    expect((await boxed("cat README.md")).result.stdout).toBe("hello\n");
  });
});

describe("other names of a secret made before the command", () => {
  it("a hard link the person made under a harmless name is masked too, also out of a secret directory", async () => {
    fs.mkdirSync(path.join(ws.root, "config"), { recursive: true });
    fs.linkSync(path.join(ws.root, ".env"), path.join(ws.root, "config", "settings.txt"));
    fs.linkSync(path.join(ws.root, ".ssh", "id_ed25519"), path.join(ws.root, "backup-key.txt"));
    const r = await boxed("cat config/settings.txt backup-key.txt; ls -la config/settings.txt backup-key.txt");
    expect(r.result.stdout).toMatch(/^-r--r--r-- .* 0 .*backup-key\.txt\n-r--r--r-- .* 0 .*config\/settings\.txt\n$/);
    expect(real("config/settings.txt")).toBe(SECRETS[".env"]);
  });
});

describe("a secret that vanishes between the scan and the box", () => {
  it("the mount point bwrap had to make is removed: nothing reaches the workspace or the change set", async () => {
    const { prepareBox } = await import("@/lib/exec/sandbox");
    const { spawnSync } = await import("node:child_process");
    const plan = await prepareBox({ workspaceRoot: ws.root, cwd: ws.root, home: null, network: false });
    expect(plan.masked).toContain(".env");
    fs.rmSync(path.join(ws.root, ".env"));
    const run = spawnSync(plan.argv[0], [...plan.argv.slice(1), "/bin/sh", "-c", "wc -c < .env"], { encoding: "utf8" });
    expect(run.stdout.trim()).toBe("0");
    expect(fs.statSync(path.join(ws.root, ".env")).size).toBe(0); // bwrap made it, on the real workspace (no capture here)
    await plan.release();
    expect(fs.existsSync(path.join(ws.root, ".env"))).toBe(false);
    fs.writeFileSync(path.join(ws.root, ".env"), SECRETS[".env"]);
  });
});

describe("secrets that appear after the scan was cached", () => {
  it("a secret created by the person between two commands", async () => {
    await boxed("true");
    put("sub/dir/.env.staging", `${MARK}-late\n`);
    put(".env.late", `${MARK}-late-root\n`);
    SECRETS["sub/dir/.env.staging"] = `${MARK}-late\n`;
    SECRETS[".env.late"] = `${MARK}-late-root\n`;
    try {
      expect((await boxed("cat sub/dir/.env.staging .env.late")).result.stdout).toBe("");
    } finally {
      delete SECRETS["sub/dir/.env.staging"];
      delete SECRETS[".env.late"];
    }
  });

  it("a file renamed into a secret name, and a directory renamed into a secret directory", async () => {
    put("notes.txt", `${MARK}-renamed\n`);
    put("keys/credentials", `${MARK}-renamed-dir\n`);
    expect((await runBoxed(ws, "cat notes.txt keys/credentials", { sandbox: true })).result.stdout).toContain(MARK);
    fs.renameSync(path.join(ws.root, "notes.txt"), path.join(ws.root, "sub", ".env.renamed"));
    fs.renameSync(path.join(ws.root, "keys"), path.join(ws.root, "sub", ".aws"));
    SECRETS["sub/.env.renamed"] = `${MARK}-renamed\n`;
    SECRETS["sub/.aws/credentials"] = `${MARK}-renamed-dir\n`;
    try {
      const r = await boxed("cat sub/.env.renamed; ls -A sub/.aws; cat sub/.aws/credentials 2>/dev/null; true");
      expect(r.result.stdout).toBe("");
    } finally {
      delete SECRETS["sub/.env.renamed"];
      delete SECRETS["sub/.aws/credentials"];
    }
  });

  it("a secret directory created later, deep in a new tree", async () => {
    await boxed("true");
    put("a/b/c/d/.ssh/id_rsa", `${MARK}-deep\n`);
    SECRETS["a/b/c/d/.ssh/id_rsa"] = `${MARK}-deep\n`;
    try {
      expect((await boxed("cat a/b/c/d/.ssh/id_rsa 2>&1; true")).result.stdout).toContain("No such file");
    } finally {
      delete SECRETS["a/b/c/d/.ssh/id_rsa"];
    }
  });
});

describe("writes to a masked secret fail in the box and change nothing", () => {
  it.each([
    ["redirect", "echo x > .env"],
    ["append", "echo x >> .env"],
    ["truncate", "truncate -s 0 .env"],
    ["rm", "rm -f .env"],
    ["mv", "mv .env moved"],
    ["sed -i", "sed -i s/a/b/ .env"],
    ["python", `python3 -c "open('.env','w').write('x')"`],
    ["chmod", "chmod 600 .env"],
    ["a file in a secret directory", "echo x > .ssh/new"],
    ["rm -rf a directory holding a secret", "rm -rf sub"],
  ])("%s: %s", async (_name, command) => {
    const r = await boxed(command);
    expect(r.result.exit_code, r.out).not.toBe(0);
    expect(r.changes?.status === "held" ? "held" : "applied").toBe("applied");
  });

  it("rm -rf of a directory holding a secret deletes the rest and keeps the secret", async () => {
    put("sub/dir/other.txt", "other\n");
    await boxed("rm -rf sub");
    expect(fs.existsSync(path.join(ws.root, "sub", "dir", "other.txt"))).toBe(false);
    expect(real("sub/dir/.env.local")).toBe(SECRETS["sub/dir/.env.local"]);
  });
});

describe("what counts as a secret is the policy's sensitive-path rules", () => {
  it("an operator rule that makes reads of a path ask masks it too; one disabled unmasks", async () => {
    put("private/notes.txt", "operator-private\n");
    const privateRule: PolicyRuleData = { id: "ops:private", priority: 50, tool: "*", pathGlob: "private/**", command: null, decision: "ask", note: "private", enabled: true };
    expect((await boxed("cat private/notes.txt", { secretRules: [...DEFAULT_RULES, privateRule] })).result.stdout).toBe("");
    expect((await boxed("cat private/notes.txt", { secretRules: [...DEFAULT_RULES, { ...privateRule, enabled: false }] })).result.stdout).toBe("operator-private\n");
    // .git internals are kept read-only, not hidden.
    expect((await boxed("git init -q . && cat .git/HEAD", { secretRules: [...DEFAULT_RULES, privateRule] })).result.stdout).toContain("ref:");
  });
});

describe("the operator exposes named secrets", () => {
  let saved: ReturnType<typeof getConfig>;
  beforeEach(() => (saved = getConfig()));
  afterEach(() => useConfig(saved));

  it("AGENT_REACH_SANDBOX_EXPOSE globs leave those secrets visible, the rest masked", async () => {
    put(".env.test", "TEST_DB=sqlite\n");
    put(".ssh/known_hosts", "known\n");
    useConfig({ ...saved, sandboxExpose: [".env.test", "**/.ssh/known_hosts"] });
    // Inside .ssh, only the exposed file shows its bytes; the keys beside it stay masked.
    const r = await boxed("cat .env.test .env .ssh/known_hosts .ssh/id_ed25519 .ssh/config");
    expect(r.result.stdout).toBe("TEST_DB=sqlite\nknown\n");
  });
});

describe("the scan's budget fails closed", () => {
  let saved: ReturnType<typeof getConfig>;
  beforeEach(() => (saved = getConfig()));
  afterEach(() => useConfig(saved));

  it("too many entries: the command does not start, with command_failed_to_start / secret_scan_limit", async () => {
    useConfig({ ...saved, sandboxScanMaxEntries: 5 });
    resetSandboxStatus();
    const err = await runBoxed(ws, "touch ran; cat .env", { sandbox: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ errorName: "command_failed_to_start", detail: { reason: "secret_scan_limit", limit: "entries" } });
    expect((err as Error).message).toMatch(/AGENT_REACH_SANDBOX_SCAN_MAX_ENTRIES/);
    expect(fs.existsSync(path.join(ws.root, "ran"))).toBe(false);
  });
});

describe("names that are not valid UTF-8 are masked, whatever they name", () => {
  /** Workspace-relative byte paths (parent directories valid UTF-8 unless the entry is inside a raw one). */
  const RAW: Array<[string, Buffer, string]> = [
    [".env + 0xff", Buffer.from([...Buffer.from(".env"), 0xff]), "file"],
    ["id_rsa + 0xfe", Buffer.from([...Buffer.from("id_rsa"), 0xfe]), "file"],
    ["latin-1 é", Buffer.from([...Buffer.from("notes"), 0xe9, ...Buffer.from(".txt")]), "file"],
    ["a truncated sequence", Buffer.from([...Buffer.from("cut"), 0xc3]), "file"],
    ["an overlong slash", Buffer.from([0xc0, 0xaf, ...Buffer.from("x")]), "file"],
    ["a UTF-16 surrogate (CESU-8)", Buffer.from([0xed, 0xa0, 0x80]), "file"],
    ["nested a/b/0xff.key", Buffer.from([...Buffer.from("a/b/"), 0xff, ...Buffer.from(".key")]), "file"],
    [".ssh + 0x80 (a directory)", Buffer.from([...Buffer.from(".ssh"), 0x80, ...Buffer.from("/id_ed25519")]), "dir"],
    ["a raw directory holding a plain .env", Buffer.from([...Buffer.from("proj"), 0xfa, ...Buffer.from("/.env")]), "dir"],
  ];
  const abs = (rel: Buffer) => Buffer.concat([Buffer.from(`${ws.root}/`), rel]);
  beforeEach(() => {
    for (const [name, rel] of RAW) {
      const slash = rel.lastIndexOf(0x2f);
      if (slash > 0) fs.mkdirSync(abs(rel.subarray(0, slash)), { recursive: true });
      fs.writeFileSync(abs(rel), `${MARK}-raw ${name}\n`);
    }
    // A link with a raw name to a plain file (whose name says nothing): the target is masked.
    put("data/plain.txt", `${MARK}-link-target\n`);
    fs.symlinkSync("data/plain.txt", abs(Buffer.from([...Buffer.from(".env"), 0xfd])));
  });

  it.each([
    ["cat by glob", "cat .env* id_rsa* notes* cut* a/b/* 2>/dev/null; true"],
    ["a loop over every name", 'for f in * .[!.]* a/b/* proj*/* .ssh*/*; do [ -f "$f" ] && cat "$f"; done; true'],
    ["find -exec cat", "find . -path ./.git -prune -o -type f -exec cat {} + 2>/dev/null; true"],
    ["python by bytes", `python3 -c "import os\nfor d,_,fs in os.walk(b'.'):\n  for f in fs:\n    p=os.path.join(d,f)\n    try: print(open(p,'rb').read())\n    except Exception: pass"`],
    ["tar of the workspace", "tar cf - . 2>/dev/null | strings | grep -c S3C; true"],
    ["grep -ra", "grep -ra MARK . ; true"],
    ["the link", "cat .env?* 2>/dev/null; cat data/plain.txt; true"],
  ])("%s sees nothing: %s", async (_name, command) => {
    const r = await boxed(command);
    expect(r.out).not.toContain("-raw");
    expect(r.out).not.toContain("link-target");
  });

  it("each raw name is listed as masked (escaped), the files are untouched, and bwrap's argument descriptor does not reach the command", async () => {
    const r = await boxed("ls -A /proc/self/fd | sort -n | tr '\\n' ' '");
    expect(r.result.stdout.split("\n")[0].trim().split(" ")).not.toContain("5");
    const masked = r.result.sandbox.masked ?? [];
    expect(masked).toEqual(expect.arrayContaining([".env\\xff", "id_rsa\\xfe", "notes\\xe9.txt", "a/b/\\xff.key", ".ssh\\x80", "proj\\xfa", "data/plain.txt"]));
    for (const [name, rel] of RAW) expect(fs.readFileSync(abs(rel), "utf8")).toBe(`${MARK}-raw ${name}\n`);
  });

  it("a raw name that appears between two commands is masked in the next one", async () => {
    expect((await boxed("cat made* 2>/dev/null; true")).result.stdout).toBe("");
    fs.writeFileSync(abs(Buffer.from([...Buffer.from("made"), 0xff])), "made-later");
    const r = await boxed("cat made*");
    expect(r.result.stdout).toBe("");
  });
});
