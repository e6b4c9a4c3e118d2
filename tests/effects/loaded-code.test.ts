import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { createAgentToken } from "@/lib/auth/tokens";
import { maxDeletions } from "@/lib/effects/stage";
import { callTool } from "@/lib/gateway/call-tool";
import { setWorkspacePreset } from "@/lib/policy/preset-store";
import { seedDefaultRules } from "@/lib/policy/rule-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace } from "@/tests/effects/run-boxed";

/**
 * What a command leaves that replaces reviewed code without looking like it, through the
 * in-process gateway under balanced, real bwrap and overlay capture, real SQLite:
 * - bytecode an interpreter loads instead of the source beside it (Python's `__pycache__`, a `.pyc`
 *   beside the source) is held for a reviewer, however it is written; ordinary Python runs in the
 *   box write none into the workspace (the box's environment), so they apply nothing and hold nothing;
 * - files emptied or replaced by links count against the large-deletion hold and the agent's
 *   budget like deleted ones.
 */

let ws: Workspace;
beforeAll(async () => {
  await useFreshDatabase();
  await seedDefaultRules();
  ws = await currentWorkspace();
  await setWorkspacePreset(ws.id, "balanced", "test");
});
beforeEach(() => emptyWorkspace(ws));

async function run(command: string, agent: { id: string; name: string } | null = null, session = "loaded-code"): Promise<any> {
  const env: any = await callTool({ door: "http", agent: agent && { ...agent, workspaceId: null }, sessionKey: session }, "run_command", { command, timeout_ms: 60_000 }, { waitMs: 0 });
  expect(env.ok, JSON.stringify(env)).toBe(true);
  return env.data;
}

/**
 * A Python loop over files as a script in the workspace, the way an agent writes one with
 * write_file and runs it (a shell loop's `$f` would ask first). Returns the command that runs it;
 * the script is written when the command is made, after the workspace was emptied.
 */
function script(body: string): () => string {
  return () => {
    fs.writeFileSync(path.join(ws.root, "loop.py"), `import os\n${body}\n`);
    return "python3 loop.py";
  };
}

/** A script that writes bytecode for src/mod.py whose header matches the source on disk, at `target`. */
const PLANT = (target: string) =>
  [
    "import os, sys, struct, marshal, importlib.util",
    'st = os.stat("src/mod.py")',
    'code = compile("open(\\"/tmp/planted\\", \\"w\\").close()\\nprint(\\"clean module\\")\\n", "src/mod.py", "exec")',
    `t = ${JSON.stringify(target)}.replace("TAG", sys.implementation.cache_tag)`,
    "os.makedirs(os.path.dirname(t) or '.', exist_ok=True)",
    'open(t, "wb").write(importlib.util.MAGIC_NUMBER + struct.pack("<III", 0, int(st.st_mtime), st.st_size & 0xFFFFFFFF) + marshal.dumps(code))',
  ].join("\n");

describe("bytecode loaded instead of the reviewed source", () => {
  beforeEach(() => {
    fs.mkdirSync(path.join(ws.root, "src"));
    fs.writeFileSync(path.join(ws.root, "src", "mod.py"), 'print("clean module")\n');
    fs.writeFileSync(path.join(ws.root, "src", "app.py"), "import mod\n");
  });

  it.each([
    ["python3 -c 'import mod' from its directory", "cd src && python3 -c 'import mod'"],
    ["a script importing it", "python3 src/app.py"],
    ["python3 -m py_compile", "python3 -m py_compile src/mod.py"],
    ["python3 -m compileall", "python3 -m compileall -q src"],
    ["python3 -m with the directory on the path", "cd src && python3 -m mod"],
  ])("%s: prints, applies nothing, holds nothing", async (_, command) => {
    const data = await run(command);
    expect(data.exit_code, data.stderr).toBe(0);
    expect(data.changes).toMatchObject({ status: "applied", total_files: 0 });
    expect(fs.existsSync(path.join(ws.root, "src", "__pycache__"))).toBe(false);
  }, 120_000);

  it("a unittest run importing test modules and the source applies nothing and leaves no bytecode", async () => {
    fs.writeFileSync(path.join(ws.root, "src", "test_mod.py"), "import unittest\nimport mod\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(1 + 1, 2)\n");
    const data = await run("cd src && python3 -m unittest -q test_mod");
    expect(data.exit_code, data.stdout + data.stderr).toBe(0);
    expect(data.changes).toMatchObject({ status: "applied", total_files: 0 });
    expect(fs.existsSync(path.join(ws.root, "src", "__pycache__"))).toBe(false);
  }, 120_000);

  it.each([
    ["__pycache__ with a matching header", "src/__pycache__/mod.TAG.pyc"],
    ["an optimised level", "src/__pycache__/mod.TAG.opt-1.pyc"],
    ["a lone .pyc beside the sources", "src/json.pyc"],
    ["a nested package", "src/pkg/__pycache__/__init__.TAG.pyc"],
  ])("planted %s: held, named, the workspace untouched", async (_, target) => {
    fs.writeFileSync(path.join(ws.root, "plant.py"), PLANT(target));
    const data = await run("python3 plant.py");
    expect(data.exit_code, data.stderr).toBe(0);
    expect(data.changes.status).toBe("held");
    expect(data.changes.bulky).toBeUndefined();
    const rel = data.changes.files.map((f: { path: string }) => f.path).find((p: string) => p.endsWith(".pyc"));
    expect(rel).toMatch(/\.pyc$/);
    expect(data.changes.hold_reasons.join(" | ")).toContain(`writes ${rel} (compiled code an interpreter loads instead of the reviewed source`);
    expect(fs.existsSync(path.join(ws.root, rel))).toBe(false);
  }, 120_000);

  it("the legacy spelling (compileall -b, bytecode beside the source) is held", async () => {
    const data = await run("python3 -m compileall -q -b src");
    expect(data.changes.status).toBe("held");
    expect(data.changes.hold_reasons.join(" | ")).toMatch(/writes src\/(app|mod)\.pyc/);
  }, 120_000);

  it("an agent that turns the box's setting off is held all the same", async () => {
    const data = await run("cd src && env -u PYTHONPYCACHEPREFIX -u PYTHONDONTWRITEBYTECODE python3 -c 'import mod'");
    expect(data.changes.status).toBe("held");
    expect(data.changes.hold_reasons.join(" | ")).toMatch(/writes src\/__pycache__\/mod\.cpython-\d+\.pyc/);
  }, 120_000);

  it("a virtual environment's pyvenv.cfg pointed at a planted standard library is held", async () => {
    fs.mkdirSync(path.join(ws.root, ".venv", "bin"), { recursive: true });
    fs.writeFileSync(path.join(ws.root, ".venv", "pyvenv.cfg"), "home = /usr/bin\ninclude-system-site-packages = false\n");
    const data = await run(`python3 -c 'import os; os.makedirs(".venv/lib/pyhome/bin"); open(".venv/pyvenv.cfg", "w").write("home = " + os.getcwd() + "/.venv/lib/pyhome/bin\\n")'`);
    expect(data.changes.status).toBe("held");
    expect(data.changes.hold_reasons.join(" | ")).toContain(".venv/pyvenv.cfg");
    expect(fs.readFileSync(path.join(ws.root, ".venv", "pyvenv.cfg"), "utf8")).toMatch(/^home = \/usr\/bin/);
  }, 120_000);

  it("removing bytecode the person's own runs left applies without a reviewer", async () => {
    fs.mkdirSync(path.join(ws.root, "src", "__pycache__"));
    for (let i = 0; i < maxDeletions() + 5; i++) fs.writeFileSync(path.join(ws.root, "src", "__pycache__", `m${i}.cpython-312.pyc`), `pyc ${i}`);
    const data = await run("rm -rf src/__pycache__");
    expect(data.changes.status).toBe("applied");
    expect(fs.existsSync(path.join(ws.root, "src", "__pycache__"))).toBe(false);
  }, 120_000);
});

describe("content destroyed without deleting", () => {
  const COUNT = maxDeletions() + 20;
  beforeEach(() => {
    fs.mkdirSync(path.join(ws.root, "big"));
    fs.mkdirSync(path.join(ws.root, "src"));
    fs.writeFileSync(path.join(ws.root, "src", "a.js"), "module.exports = 1;\n");
    for (let i = 0; i < COUNT; i++) fs.writeFileSync(path.join(ws.root, "big", `f${i}.js`), `// file ${i}\n${"x();\n".repeat(9)}`);
  });
  const unchanged = () => Array.from({ length: COUNT }, (_, i) => fs.readFileSync(path.join(ws.root, "big", `f${i}.js`), "utf8")).every((t, i) => t.startsWith(`// file ${i}\n`));

  it.each([
    ["replaced by links (python)", `python3 -c 'import os\nfor n in sorted(os.listdir("big")):\n    p="big/"+n; os.unlink(p); os.symlink("../src/a.js", p)'`, /replaced by links/],
    ["replaced by links (os.replace over a new link)", script(`for n in os.listdir("big"):\n    os.symlink("../src/a.js", "big/.tmp"); os.replace("big/.tmp", "big/" + n)`), /replaced by links/],
    ["truncated (python)", `python3 -c 'import os\nfor n in os.listdir("big"): open("big/"+n,"w").close()'`, /emptied/],
    ["truncated (os.truncate)", script(`for n in os.listdir("big"): os.truncate("big/" + n, 0)`), /emptied/],
    ["truncate -s 0", "truncate -s 0 big/*", /emptied/],
    ["cut to one line", script(`for n in os.listdir("big"):\n    p = "big/" + n; first = open(p).readline(); open(p, "w").write(first)`), /cut to less than half/],
  ])("%s: held as destroyed content, nothing applied", async (_, command, how) => {
    const data = await run(typeof command === "string" ? command : command());
    expect(data.changes.status).toBe("held");
    const reason = data.changes.hold_reasons.find((r: string) => r.startsWith("destroys"));
    expect(reason).toMatch(new RegExp(`^destroys ${COUNT} files' content: `));
    expect(reason).toMatch(how);
    expect(data.changes.destroyed).toBe(COUNT);
    expect(unchanged()).toBe(true);
  }, 120_000);

  it("replaced by directories: each file reads as deleted, and the deletion hold names them", async () => {
    const data = await run(script(`for n in os.listdir("big"):\n    os.unlink("big/" + n); os.mkdir("big/" + n)`)());
    expect(data.changes.status).toBe("held");
    expect(data.changes.hold_reasons).toContain(`deletes ${COUNT} files (more than ${maxDeletions()})`);
    expect(data.changes.destroyed).toBe(COUNT);
    expect(unchanged()).toBe(true);
  }, 120_000);

  it("split over two commands of one agent, the budget holds the second", async () => {
    const { agent } = await createAgentToken("truncator");
    const half = Math.floor(COUNT / 2);
    const first = await run(script(`for i in range(${half}): open(f"big/f{i}.js", "w").close()`)(), agent, "t-1");
    expect(first.changes).toMatchObject({ status: "applied", destroyed: half });
    const second = await run(script(`for i in range(${half}, ${COUNT}):\n    os.unlink(f"big/f{i}.js"); os.symlink("../src/a.js", f"big/f{i}.js")`)(), agent, "t-2");
    expect(second.changes.status).toBe("held");
    expect(second.changes.hold_reasons.join(" | ")).toMatch(new RegExp(`destroys ${COUNT - half} files' content: ${COUNT - half} replaced by links .*and this agent's commands destroyed the content of ${half} more in the last 30 minutes`));
  }, 180_000);

  it("an ordinary rewrite of many files (a formatter) applies", async () => {
    const data = await run(script(`for n in os.listdir("big"):\n    p = "big/" + n; t = open(p).read(); open(p, "w").write(t.replace("x();", "x(); // ok"))`)());
    expect(data.changes).toMatchObject({ status: "applied", modified: COUNT });
    expect(data.changes.destroyed).toBeUndefined();
  }, 120_000);
});
