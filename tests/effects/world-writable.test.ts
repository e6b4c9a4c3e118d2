import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { callTool } from "@/lib/gateway/call-tool";
import { setWorkspacePreset } from "@/lib/policy/preset-store";
import { seedDefaultRules } from "@/lib/policy/rule-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace } from "@/tests/effects/run-boxed";

/**
 * A command that makes a path writable by every user of the machine is held (red team round 7,
 * H11: `chmod 777 .git` applied at once, and any local user then planted a config the person's
 * git ran as root). Through the in-process gateway under balanced, real bwrap and overlay capture.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  await seedDefaultRules();
  ws = await currentWorkspace();
});
beforeEach(async () => {
  emptyWorkspace(ws);
  fs.mkdirSync(path.join(ws.root, ".git"), { mode: 0o755 });
  fs.writeFileSync(path.join(ws.root, ".git", "description"), "x\n");
  fs.mkdirSync(path.join(ws.root, "src"), { mode: 0o755 });
  fs.writeFileSync(path.join(ws.root, "src", "a.js"), "a\n", { mode: 0o644 });
  fs.chmodSync(path.join(ws.root, "src", "a.js"), 0o644);
  await setWorkspacePreset(ws.id, "balanced", "test");
});

async function run(command: string): Promise<any> {
  const env: any = await callTool({ door: "http", agent: null, sessionKey: "world-writable" }, "run_command", { command }, { waitMs: 0 });
  expect(env.ok, JSON.stringify(env)).toBe(true);
  return env.data.changes;
}

describe("modes that let every local user write", () => {
  it.each([
    // Named literally, `chmod 777 .git` asks by the policy already; a program that does it does not.
    [`python3 -c "import os; os.chmod('.git', 0o777)"`, ".git (0777)"],
    ["chmod 0757 src", "src (0757)"],
    ["chmod o+w src/a.js", "src/a.js (0646)"],
    ["mkdir pub && chmod 777 pub", "pub (0777)"],
    ["umask 000 && echo hi > open.txt", "open.txt (0666)"],
    ["mkdir -p t && chmod 1777 t", "t (1777)"],
    // Group write added to a path that exists (round 8, J1): any member of its group could rewrite it.
    [`python3 -c "import os; os.chmod('.g'+'it', 0o775)"`, ".git (0775)"],
    ["chmod 775 src", "src (0775)"],
    ["chmod g+w src/a.js", "src/a.js (0664)"],
  ])("%s is held", async (command, named) => {
    const changes = await run(command);
    expect(changes.status).toBe("held");
    expect(changes.hold_reasons.join(" ")).toContain(`makes ${named}`);
    expect(changes.hold_reasons.join(" ")).toContain("writable by other users of this machine");
    expect(fs.statSync(path.join(ws.root, ".git")).mode & 0o777).toBe(0o755);
  }, 60_000);

  it.each(["umask 002 && echo hi > group.txt", "umask 002 && mkdir newdir", "chmod 700 src", "chmod 644 src/a.js", "echo more >> src/a.js"])("%s applies (a new path's group write, or no write added for others)", async (command) => {
    const changes = await run(command);
    expect(changes.status, JSON.stringify(changes.hold_reasons)).toBe("applied");
  }, 60_000);

  it("a file that was already writable by everyone may change its content", async () => {
    fs.chmodSync(path.join(ws.root, "src", "a.js"), 0o666);
    const changes = await run("echo more >> src/a.js");
    expect(changes.status, JSON.stringify(changes.hold_reasons)).toBe("applied");
  }, 60_000);
});

describe("round 8: new names for what runs or what is secret", () => {
  it.each([
    ["ln -s .env w2", "w2 → .env"],
    ["mkdir -p d && ln -s ../id_rsa d/notes.txt", "d/notes.txt → ../id_rsa"],
    ["ln -s Makefile build.txt", "build.txt → Makefile"],
  ])("a link to a secret or a runs-later file is held: %s", async (command, named) => {
    fs.writeFileSync(path.join(ws.root, ".env"), "S=1\n");
    fs.writeFileSync(path.join(ws.root, "id_rsa"), "KEY\n");
    fs.writeFileSync(path.join(ws.root, "Makefile"), "all:\n");
    const changes = await run(command);
    expect(changes.status).toBe("held");
    expect(changes.hold_reasons.join(" ")).toContain(`links ${named}`);
  }, 60_000);

  it.each([
    ["conftest.cpython-311-x86_64-linux-gnu.so"],
    ["src/mod.abi3.so"],
    ["src/_speedups.pyd"],
    ["build/Release/addon.node"],
  ])("a native module is held: %s", async (rel) => {
    const changes = await run(`python3 -c "import os; os.makedirs(os.path.dirname('${rel}') or '.', exist_ok=True); open('${rel}', 'wb').write(b'ELF')"`);
    expect(changes.status).toBe("held");
    expect(changes.hold_reasons.join(" ")).toContain(rel);
  }, 60_000);

  it("a link to an ordinary file still applies", async () => {
    fs.mkdirSync(path.join(ws.root, "docs"));
    fs.writeFileSync(path.join(ws.root, "docs", "guide.md"), "# g\n");
    const changes = await run("ln -s docs/guide.md GUIDE.md");
    expect(changes.status, JSON.stringify(changes.hold_reasons)).toBe("applied");
  }, 60_000);
});
