import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { usePreset } from "@/tests/helpers/dashboard";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * Through the HTTP door under `balanced`: a repository planted over two run_command calls (in
 * either order) is held at the second, and the paths the person's own git configuration runs —
 * its core.hooksPath directory, a config file it includes — ask for write_file and hold a
 * command's change set; a root config that includes a workspace file with live keys makes git
 * commands ask. Ordinary git work applies at once.
 */

let server: TestServer;
const WAIT0 = { prefer: "wait=0" };
const ws = (rel: string) => path.join(server.workspace, rel);

beforeAll(async () => {
  server = await startTestServer();
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: server.workspace });
  execFileSync("git", ["config", "core.hooksPath", "githooks-local"], { cwd: server.workspace });
  execFileSync("git", ["config", "include.path", "../shared.gitconfig"], { cwd: server.workspace });
  execFileSync("git", ["config", "user.name", "t"], { cwd: server.workspace });
  execFileSync("git", ["config", "user.email", "t@example.com"], { cwd: server.workspace });
  fs.writeFileSync(ws("notes.txt"), "hello\n");
  await usePreset(server, "balanced");
}, 1_200_000);
afterAll(async () => {
  await server?.stop();
});

async function run(command: string): Promise<any> {
  const r = await server.call("run_command", { command, timeout_ms: 30_000 }, WAIT0);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

async function reject(callId: string): Promise<void> {
  expect((await server.reviewer("POST", `/api/approvals/${callId}/reject`, { reason: "test" })).status).toBe(200);
}

describe("a repository planted in two commands", () => {
  it.each([
    ["shape, then config", "mkdir -p lib/objects lib/refs/heads && echo 'ref: refs/heads/main' > lib/HEAD && echo 'export const x = 1' > lib/index.js", `printf '[core]\\n\\tbare = false\\n\\tfsmonitor = "touch /tmp/gs-pwned; false"\\n' > lib/config`, "lib/config", /lib\/config is the config of a repository planted at lib\//],
    ["config, then shape", "mkdir -p pkg && printf '[alias]\\n\\tst = !touch /tmp/gs-pwned2\\n' > pkg/config", "mkdir -p pkg/objects pkg/refs && echo 'ref: refs/heads/main' > pkg/HEAD", "pkg/HEAD", /pkg\/config was already there and pkg now has the shape of a git repository/],
    ["shape, then a hook", "mkdir -p deep/er/r/objects deep/er/r/refs && echo 'ref: refs/heads/main' > deep/er/r/HEAD", "mkdir -p deep/er/r/hooks && printf '#!/bin/sh\\ntouch /tmp/gs-pwned3\\n' > deep/er/r/hooks/post-checkout", "deep/er/r/hooks/post-checkout", /installs a git hook/],
  ])("%s: the first applies, the second is held", async (_name, first, second, absent, want) => {
    const one = await run(first);
    expect(one.data.changes.status, JSON.stringify(one.data.changes)).toBe("applied");
    const before = treeHash(server.workspace);
    const two = await run(second);
    expect(two.data.changes.status).toBe("held");
    expect(two.data.changes.hold_reasons.join("\n")).toMatch(want);
    expect(treeHash(server.workspace)).toBe(before);
    await reject(two.call_id);
    expect(fs.existsSync(ws(absent))).toBe(false);
  }, 120_000);
});

describe("paths the person's git configuration runs", () => {
  it.each([
    [{ path: "githooks-local/pre-commit", content: "#!/bin/sh\ntouch /tmp/gs-pwned5\n", create_dirs: true }],
    [{ path: "shared.gitconfig", content: "[core]\n\tfsmonitor = \"touch /tmp/gs-pwned6; false\"\n" }],
  ])("write_file %j asks", async (args) => {
    const r = await server.call("write_file", args, WAIT0);
    expect(r.body.error?.name, JSON.stringify(r.body)).toBe("approval_pending");
    await reject(r.body.call_id);
    expect(fs.existsSync(ws(args.path))).toBe(false);
  });

  it("a command writing a hook there is held", async () => {
    const r = await run("mkdir -p githooks-local && printf '#!/bin/sh\\ntouch /tmp/gs-pwned5\\n' > githooks-local/pre-commit && chmod +x githooks-local/pre-commit");
    expect(r.data.changes.status).toBe("held");
    expect(r.data.changes.hold_reasons.join("\n")).toMatch(/githooks-local\/pre-commit is below githooks-local, which is the hooks directory/);
    await reject(r.call_id);
    expect(fs.existsSync(ws("githooks-local"))).toBe(false);
  }, 120_000);

  it("ordinary work applies: an edit, git add and commit", async () => {
    const w = await server.call("write_file", { path: "notes.txt", content: "hello, world\n" }, WAIT0);
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const r = await run("git add notes.txt && git commit -qm notes && git log --oneline | wc -l");
    expect(r.data.changes.status, JSON.stringify(r.data.changes.hold_reasons)).toBe("applied");
    expect(r.data.stdout.trim()).toBe("1");
  }, 120_000);

  it("once the included file sets a live key, git commands ask", async () => {
    fs.writeFileSync(ws("shared.gitconfig"), "[core]\n\tfsmonitor = \"touch /tmp/gs-pwned6; false\"\n");
    const r = await server.call("run_command", { command: "git status --short" }, WAIT0);
    expect(r.body.error?.name, JSON.stringify(r.body)).toBe("approval_pending");
    await reject(r.body.call_id);
    fs.rmSync(ws("shared.gitconfig"));
  });
});

describe("a file the person's git config loads by a bare name, created after the config was read", () => {
  it.each([
    ["core.pager", "sh pagerx", "printf 'touch /tmp/gs-pager\\ncat\\n' > pagerx", "pagerx"],
    ["core.fsmonitor", "python3 -m rt7mon", "printf 'import os\\n' > rt7mon.py", "rt7mon.py"],
    ["core.fsmonitor", "python3 -m rt7pkg.cli", "mkdir -p rt7pkg && printf 'import os\\n' > rt7pkg/__init__.py", "rt7pkg/__init__.py"],
    ["gpg.program", "perl -MRt7::Gpg -e 1", "mkdir -p Rt7 && echo 1 > Rt7/Gpg.pm", "Rt7/Gpg.pm"],
    ["diff.x.textconv", "node conv", "mkdir -p conv && echo 1 > conv/index.js", "conv/index.js"],
  ])("%s = %s: a command creating it is held", async (key, value, command, created) => {
    // The configuration is read first, while the file does not exist.
    execFileSync("git", ["config", key, value], { cwd: server.workspace });
    try {
      const w = await server.call("write_file", { path: "notes.txt", content: `before ${key}\n` }, WAIT0);
      expect(w.status, JSON.stringify(w.body)).toBe(200);
      const before = treeHash(server.workspace);
      const r = await run(command);
      expect(r.data.changes.status, JSON.stringify(r.data.changes)).toBe("held");
      expect(r.data.changes.hold_reasons.join("\n")).toMatch(new RegExp(`${created.replace(/[.]/g, "\\.")} is .*${key.toLowerCase().replace(/[.]/g, "\\.")}`));
      expect(treeHash(server.workspace)).toBe(before);
      await reject(r.call_id);
      expect(fs.existsSync(ws(created))).toBe(false);
    } finally {
      execFileSync("git", ["config", "--unset", key], { cwd: server.workspace });
    }
  }, 120_000);

  it("ordinary work beside it applies", async () => {
    execFileSync("git", ["config", "core.pager", "sh pagerx"], { cwd: server.workspace });
    try {
      const r = await run("mkdir -p src && echo 'export const p = 1;' > src/pagerx.ts && echo x > pagerx-notes.md");
      expect(r.data.changes.status, JSON.stringify(r.data.changes.hold_reasons)).toBe("applied");
    } finally {
      execFileSync("git", ["config", "--unset", "core.pager"], { cwd: server.workspace });
    }
  }, 120_000);
});
