import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import { buildChildEnv } from "@/lib/exec/child-env";
import { runCommandTool, RunCommandInput } from "@/lib/tools/run-command";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";

/** run_command as a tool: schema, cwd fencing (C01-5, C23-10), output, environment (C21-9). */

let fx: Fixture;
let ctx: TestContext;
let dataDir: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  // HOME of child processes lives under the data directory; keep it in a temp dir for tests.
  dataDir = await fs.mkdtemp(path.join((await import("node:os")).tmpdir(), "ar-data-"));
  process.env.AGENT_REACH_DATA_DIR = dataDir;
  process.env.GATEWAY_DB_URL = "postgres://gw:s3cret@db/x";
  process.env.ANTHROPIC_API_KEY = "test-key-123";
});
afterAll(async () => {
  process.env = savedEnv;
  await fs.rm(dataDir, { recursive: true, force: true });
});
beforeEach(async () => {
  fx = await makeFixture();
  await fs.mkdir(fx.at("sub"));
  await fs.symlink(path.join(fx.root, "proj-out"), fx.at("ext"));
  ctx = makeToolContext(fx.ws);
});
afterEach(async () => {
  await fx.cleanup();
});

function run(args: Record<string, unknown>) {
  return runCommandTool.run(RunCommandInput.parse(args), ctx);
}

async function refusal(args: Record<string, unknown>): Promise<ToolError> {
  const err = await run(args).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

describe("schema", () => {
  it("fills the documented defaults", () => {
    expect(RunCommandInput.parse({ command: "ls" })).toEqual({ command: "ls", timeout_ms: 120_000, max_output_chars: 30_000, network: false });
  });

  it.each<[Record<string, unknown>, string]>([
    [{}, "command missing"],
    [{ command: "" }, "empty command"],
    [{ command: "ls\u0000rm" }, "NUL byte"],
    [{ command: "ls", timeout_ms: 600_001 }, "timeout above 600000"],
    [{ command: "ls", timeout_ms: 0 }, "timeout 0"],
    [{ command: "ls", max_output_chars: 10 }, "tiny output cap"],
    [{ command: "ls", shell: "zsh" }, "unknown key"],
  ])("rejects %j (%s)", (args) => {
    expect(RunCommandInput.safeParse(args).success).toBe(false);
  });

  it("describes every field for a model and steers file work to the file tools", () => {
    const shape = RunCommandInput.shape;
    for (const field of Object.values(shape)) expect(field.description?.length).toBeGreaterThan(20);
    expect(runCommandTool.description).toMatch(/read_file/);
    expect(runCommandTool.description).toMatch(/edit_file/);
    expect(runCommandTool.description).toMatch(/sed -i/);
  });

  it("subject is the raw command and cwd", () => {
    expect(runCommandTool.subject(RunCommandInput.parse({ command: "ls -la", cwd: "../x" }), ctx)).toEqual({ command: { command: "ls -la", cwd: "../x" } });
    expect(runCommandTool.subject(RunCommandInput.parse({ command: "ls" }), ctx)).toEqual({ command: { command: "ls" } });
  });
});

describe("running", () => {
  it("runs in the workspace root by default", async () => {
    const data = await run({ command: "pwd; echo hi" });
    expect(data).toMatchObject({ command: "pwd; echo hi", cwd: ".", exit_code: 0, signal: null, timed_out: false, truncated: false, stdout: `${fx.ws}\nhi\n`, stderr: "" });
    expect(ctx.notes).toMatchObject({ target: "pwd; echo hi", pathResolved: fx.ws, truncated: false });
    expect(ctx.notes.summary).toMatch(/^exit 0 after \d+ ms \(boxed\)$/);
  });

  it("runs in a relative or absolute cwd inside the workspace", async () => {
    expect(await run({ command: "pwd", cwd: "sub" })).toMatchObject({ cwd: "sub", stdout: `${fx.at("sub")}\n` });
    expect(await run({ command: "pwd", cwd: fx.at("sub") })).toMatchObject({ cwd: "sub", stdout: `${fx.at("sub")}\n` });
  });

  it("reports a failing command as a result, not an error", async () => {
    const data = await run({ command: "echo oops >&2; exit 7" });
    expect(data).toMatchObject({ exit_code: 7, stderr: "oops\n" });
    expect(ctx.notes.summary).toMatch(/^exit 7/);
  });

  it("caps output with head, tail and the original length", async () => {
    const data = await run({ command: "seq 1 100000", max_output_chars: 500 });
    expect(data.truncated).toBe(true);
    expect(data.original_length.stdout).toBe(588_895);
    expect(data.stdout).toMatch(/^1\n2\n[\s\S]*bytes omitted[\s\S]*100000\n$/);
    expect(ctx.notes).toMatchObject({ truncated: true, bytesOut: 588_895 });
  });

  it("stops at the timeout", async () => {
    const data = await run({ command: "sleep 30", timeout_ms: 200 });
    expect(data).toMatchObject({ timed_out: true, exit_code: null });
    expect(ctx.notes.summary).toMatch(/^timed out/);
  });

  it("prints single-quoted text literally (C21-4)", async () => {
    const data = await run({ command: "echo '$(touch pwned)'" });
    expect(data.stdout).toBe("$(touch pwned)\n");
    await expect(fs.stat(fx.at("pwned"))).rejects.toThrow();
  });
});

describe("the environment (C21-9)", () => {
  it("echo $GATEWAY_DB_URL prints an empty line", async () => {
    expect((await run({ command: "echo $GATEWAY_DB_URL" })).stdout).toBe("\n");
  });

  it("env, printenv and /proc/self/environ hold no gateway secret", async () => {
    const data = await run({ command: "env; printenv; tr '\\0' '\\n' < /proc/self/environ" });
    for (const s of ["GATEWAY_DB_URL", "s3cret", "ANTHROPIC_API_KEY", "test-key-123", "AGENT_REACH_DATA_DIR"]) expect(data.stdout).not.toContain(s);
  });

  it("HOME is the same per-workspace directory the policy resolves, and it exists", async () => {
    const data = await run({ command: 'echo "$HOME"; test -d "$HOME" && echo exists' });
    const home = buildChildEnv(ctx.workspace.root).HOME;
    expect(data.stdout).toBe(`${home}\nexists\n`);
    expect(home.startsWith(dataDir)).toBe(true);
  });
});

describe("cwd is fenced before anything runs (C01-5, C23-10)", () => {
  it.each([
    [(f: Fixture) => path.join(f.root, "proj-out"), "lexical"],
    [() => "../proj-out", "lexical"],
    [() => "sub/../../proj-out", "lexical"],
    [() => "ext", "symlink"],
    [() => "/", "lexical"],
  ])("cwd %# → path_outside_workspace (%s)", async (cwd, reason) => {
    const err = await refusal({ command: "touch pwned", cwd: cwd(fx) });
    expect(err.errorName).toBe("path_outside_workspace");
    expect(err.detail.reason).toBe(reason);
    await expect(fs.stat(path.join(fx.root, "proj-out", "pwned"))).rejects.toThrow();
    await expect(fs.stat(path.join(fx.root, "pwned"))).rejects.toThrow();
    await expect(fs.stat(fx.at("pwned"))).rejects.toThrow();
  });

  it("a cwd that is a file is refused", async () => {
    expect((await refusal({ command: "ls", cwd: "notes.txt" })).errorName).toBe("invalid_arguments");
  });

  it("a cwd that does not exist is refused", async () => {
    expect((await refusal({ command: "ls", cwd: "missing" })).errorName).toBe("not_found");
  });

  it("a cwd with a control character is invalid", async () => {
    expect((await refusal({ command: "ls", cwd: "sub\n" })).errorName).toBe("path_invalid");
  });
});
