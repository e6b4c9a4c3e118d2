import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePreset } from "@/tests/helpers/dashboard";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

/**
 * Bytecode planted by a command, through the doors an agent uses (write_file and run_command over
 * HTTP, `balanced`): Python loads `__pycache__/<mod>.<tag>.pyc` instead of `<mod>.py` when the
 * header's source mtime and size match, so a command that writes one replaces a reviewed source's
 * code. The change set is held, named, and once rejected the person's own `import` runs the
 * source. An ordinary import in the box writes no bytecode and applies nothing.
 */

let server: TestServer;
const WAIT0 = { prefer: "wait=0" };
const ws = (rel: string) => path.join(server.workspace, rel);
const marker = path.join(os.tmpdir(), `agent-reach-pyc-${crypto.randomBytes(4).toString("hex")}`);

beforeAll(async () => {
  server = await startTestServer();
  await usePreset(server, "balanced");
}, 900_000);
afterAll(async () => {
  fs.rmSync(marker, { force: true });
  await server?.stop();
});

async function call(tool: string, args: Record<string, unknown>): Promise<any> {
  const r = await server.call(tool, args, WAIT0);
  expect(r.status, `${tool}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body.data;
}

const PLANT = [
  "import os, sys, struct, marshal, importlib.util",
  'st = os.stat("src/mod.py")',
  `code = compile("open(${JSON.stringify(JSON.stringify(marker)).slice(1, -1)}, 'w').close()\\nprint('clean module')\\n", "src/mod.py", "exec")`,
  'os.makedirs("src/__pycache__", exist_ok=True)',
  'target = f"src/__pycache__/mod.{sys.implementation.cache_tag}.pyc"',
  'open(target, "wb").write(importlib.util.MAGIC_NUMBER + struct.pack("<III", 0, int(st.st_mtime), st.st_size & 0xFFFFFFFF) + marshal.dumps(code))',
  "print(target)",
].join("\n");

describe("bytecode that replaces a reviewed source", () => {
  it("an ordinary import in the box prints the module and changes nothing", async () => {
    await call("write_file", { path: "src/mod.py", content: 'print("clean module")\n' });
    const data = await call("run_command", { command: "cd src && python3 -c 'import mod'" });
    expect(data.stdout).toBe("clean module\n");
    expect(data.changes).toMatchObject({ status: "applied", total_files: 0 });
    expect(fs.existsSync(ws("src/__pycache__"))).toBe(false);
  });

  it("a planted pyc with a matching header is held and named; rejected, the person's import runs the source", async () => {
    await call("write_file", { path: "tools/pyc.py", content: `${PLANT}\n` });
    const data = await call("run_command", { command: "python3 tools/pyc.py" });
    const target = data.stdout.trim();
    expect(target).toMatch(/^src\/__pycache__\/mod\.[a-z]+-\d+\.pyc$/);
    expect(data.changes.status).toBe("held");
    expect(data.changes.bulky).toBeUndefined();
    expect(data.changes.files.map((f: { path: string }) => f.path)).toContain(target);
    expect(data.changes.hold_reasons.join(" | ")).toContain(`writes ${target} (compiled code an interpreter loads instead of the reviewed source`);
    const res = await server.reviewer("POST", `/api/approvals/${data.changes.call_id}/reject`, { reason: "bytecode" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(fs.existsSync(ws(target))).toBe(false);
    // The person's own run, on the host, with Python's defaults (bytecode beside the source).
    const out = execFileSync("python3", ["-c", "import mod"], { cwd: ws("src"), env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } as unknown as NodeJS.ProcessEnv, encoding: "utf8" });
    expect(out).toBe("clean module\n");
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("emptying many files in one command is held as destroyed content", async () => {
    await call("write_file", { path: "tools/mk.py", content: 'import os\nos.makedirs("big", exist_ok=True)\nfor i in range(60):\n    open(f"big/f{i}.txt", "w").write("a\\nb\\nc\\n")\n' });
    expect((await call("run_command", { command: "python3 tools/mk.py" })).changes.status).toBe("applied");
    await call("write_file", { path: "tools/tr.py", content: 'import os\nfor n in os.listdir("big"):\n    os.unlink("big/" + n); open("big/" + n, "w").close()\n' });
    const data = await call("run_command", { command: "python3 tools/tr.py" });
    expect(data.changes.status).toBe("held");
    expect(data.changes.hold_reasons.join(" | ")).toMatch(/^destroys 60 files' content: 60 emptied \(/m);
    expect(fs.readFileSync(ws("big/f0.txt"), "utf8")).toBe("a\nb\nc\n");
  });
});
