import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { runApproving, usePreset } from "@/tests/helpers/dashboard";

/**
 * Through the real product's HTTP door (`next start`), under the presets where commands run
 * without asking: a secret whose name is not UTF-8 reads empty; the repository's configuration
 * shows no credential while git works; and git configuration one command plants in the box HOME
 * does not run in the next command, while a cache there persists.
 */

const mark = crypto.randomBytes(6).toString("hex");
const TOKEN = `ghp_DOOR${mark}`;
let server: TestServer;
const ws = () => server.workspace;

beforeAll(async () => {
  server = await startTestServer();
  const root = Buffer.from(`${ws()}/`);
  fs.writeFileSync(Buffer.concat([root, Buffer.from(".env"), Buffer.from([0xff])]), `RAW=${mark}-raw\n`);
  fs.mkdirSync(Buffer.concat([root, Buffer.from(".ssh"), Buffer.from([0x80])]));
  fs.writeFileSync(Buffer.concat([root, Buffer.from(".ssh"), Buffer.from([0x80]), Buffer.from("/id_rsa")]), `${mark}-rawdir\n`);
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: ws() });
  fs.writeFileSync(path.join(ws(), "a.txt"), "one\n");
  execFileSync("git", ["add", "a.txt"], { cwd: ws() });
  execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one"], { cwd: ws() });
  fs.appendFileSync(
    path.join(ws(), ".git", "config"),
    `[remote "origin"]\n\turl = https://user:${TOKEN}@github.com/o/r.git\n[http]\n\textraheader = AUTHORIZATION: bearer ${TOKEN}\n[credential]\n\thelper = "!echo password=${TOKEN}"\n`,
  );
}, 900_000);

afterAll(async () => {
  await server?.stop();
});

const run = (command: string) => runApproving(server, command);

describe.each(["balanced", "autonomous"] as const)("under %s", (preset) => {
  beforeAll(() => usePreset(server, preset));

  it("a secret named with bytes that are not UTF-8 reads empty, however it is read", async () => {
    for (const command of ["cat .env*", "for f in .ssh*/*; do cat \"$f\"; done", "grep -ra . .env* .ssh* ; true", `python3 -c "import os\nfor n in os.listdir(b'.'):\n  p=os.path.join(b'.',n)\n  print(open(p,'rb').read() if os.path.isfile(p) else b'')"`]) {
      const r = await run(command);
      expect(r.ok, `${command}: ${JSON.stringify(r.error)}`).toBe(true);
      expect(r.data.stdout + r.data.stderr, command).not.toContain(mark);
    }
    const listed = await run("true");
    expect(listed.data.sandbox.masked).toEqual(expect.arrayContaining([".env\\xff", ".ssh\\x80"]));
  });

  it("the repository's configuration shows no credential, and git works", async () => {
    for (const command of ["cat .git/config", "git remote -v", "git config --list --show-origin", "grep -ra DOOR .git ; true", "git ls-remote origin 2>&1; true"]) {
      const r = await run(command);
      expect(r.ok, `${command}: ${JSON.stringify(r.error)}`).toBe(true);
      expect(r.data.stdout + r.data.stderr, command).not.toContain(mark);
    }
    const r = await run("git remote get-url origin && git status --short --untracked-files=no && git log --oneline | wc -l");
    expect(r.data.stdout).toBe("https://github.com/o/r.git\n1\n");
    expect(fs.readFileSync(path.join(ws(), ".git", "config"), "utf8")).toContain(TOKEN);
  });

  it("git configuration planted in HOME does not run in the next command; a cache persists", async () => {
    // Written by a program (the policy refuses a shell write outside the workspace, `> ~/x`).
    const planted = await run(
      `python3 -c "import os; h=os.path.expanduser('~'); open(h+'/.gitconfig','a').write('[core]\\n\\tfsmonitor = touch PWNED-${preset}\\n[alias]\\n\\tst = !touch PWNED-alias\\n'); os.makedirs(h+'/.cache/t', exist_ok=True); open(h+'/.cache/t/f','w').write('kept\\n')"; git status >/dev/null; ls PWNED* 2>/dev/null; true`,
    );
    expect(planted.ok, JSON.stringify(planted.error)).toBe(true);
    // Within its own command the plant works (the check below is meaningful).
    expect(planted.data.stdout).toContain(`PWNED-${preset}`);
    for (const f of fs.readdirSync(ws())) if (f.startsWith("PWNED")) fs.rmSync(path.join(ws(), f));
    const later = await run("git status >/dev/null; git st 2>/dev/null; ls PWNED* 2>/dev/null; cat ~/.cache/t/f; true");
    expect(later.ok, JSON.stringify(later.error)).toBe(true);
    expect(later.data.stdout).toBe("kept\n");
    expect(fs.readdirSync(ws()).filter((f) => f.startsWith("PWNED"))).toEqual([]);
  });
});
