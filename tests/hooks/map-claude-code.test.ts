import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { hookOutput, mapClaudeCodeCall, PreToolUsePayload } from "@/lib/hooks/claude-code";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * How Claude Code's tool calls map onto registry tools (lib/hooks/claude-code.ts), from the
 * payloads in tests/fixtures/hooks, and the decision JSON the hook prints.
 */

const FIXTURES = path.resolve(__dirname, "../fixtures/hooks");
let root: string;

function fixture(name: string, change: (p: any) => void = () => {}): PreToolUsePayload {
  const value = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8").replaceAll("/home/dev/acme-app", root));
  change(value);
  return PreToolUsePayload.parse(value);
}

beforeAll(async () => {
  ({ workspace: root } = await useFreshDatabase());
  fs.mkdirSync(path.join(root, "src"));
  fs.writeFileSync(path.join(root, "src/app.ts"), 'const port = 3000;\r\nconsole.log("listening");\r\n');
});

describe("mapClaudeCodeCall", () => {
  it.each([
    ["bash-git-status", "run_command", () => ({ command: "git status --short", cwd: root })],
    ["write", "write_file", () => ({ path: `${root}/src/config.json`, content: '{\n  "port": 8080,\n  "greeting": "Grüß Gott"\n}\n' })],
    [
      "edit",
      "edit_file",
      () => ({ path: `${root}/src/app.ts`, old_string: "const port = 3000;", new_string: "const port = Number(process.env.PORT ?? 3000);", replace_all: false }),
    ],
    ["read", "read_file", () => ({ path: `${root}/src/app.ts` })],
  ])("maps %s onto %s", async (name, tool, args) => {
    expect(await mapClaudeCodeCall(fixture(name))).toEqual({ tool, args: args() });
  });

  it.each([
    ["without a cwd", (p: any): void => void delete p.cwd, () => "the hook call names no working directory (cwd), so Claude Code's real one is unknown"],
    ["with an empty cwd", (p: any) => (p.cwd = ""), () => "the hook call names no working directory (cwd), so Claude Code's real one is unknown"],
    ["with a cwd outside the workspace", (p: any) => (p.cwd = "/etc"), () => "the hook call's working directory /etc is outside the workspace"],
    ["with a cwd that climbs out", (p: any) => (p.cwd = `${root}/..`), () => `the hook call's working directory ${root}/.. is outside the workspace`],
    ["with a relative cwd", (p: any) => (p.cwd = "src"), () => 'the hook call\'s working directory "src" is not an absolute path'],
  ])("maps Bash %s onto run_command without a cwd, saying why the directory is unknown", async (_what, change, why) => {
    expect(await mapClaudeCodeCall(fixture("bash-git-status", change))).toEqual({ tool: "run_command", args: { command: "git status --short" }, cwdUnknown: why() });
  });

  it("keeps a Bash cwd inside the workspace", async () => {
    expect(await mapClaudeCodeCall(fixture("bash-git-status", (p) => (p.cwd = `${root}/src`)))).toEqual({
      tool: "run_command",
      args: { command: "git status --short", cwd: `${root}/src` },
    });
  });

  it("maps WebFetch onto fetch_url and leaves unsupervised tools alone", async () => {
    const web = fixture("read", (p) => ((p.tool_name = "WebFetch"), (p.tool_input = { url: "https://example.com/", prompt: "summarise" })));
    expect(await mapClaudeCodeCall(web)).toEqual({ tool: "fetch_url", args: { url: "https://example.com/" } });
    expect(await mapClaudeCodeCall(fixture("glob"))).toBeNull();
    expect(await mapClaudeCodeCall(fixture("read", (p) => (p.tool_name = "mcp__agent-reach__read_file")))).toBeNull();
  });

  it("passes a malformed tool_input through for the tool's schema to refuse", async () => {
    expect(await mapClaudeCodeCall(fixture("write", (p) => (p.tool_input = { file_path: 42 })))).toEqual({
      tool: "write_file",
      args: { path: 42, content: undefined },
    });
  });

  it("maps a MultiEdit onto one edit_file from the whole text before to the whole text after, keeping CRLF", async () => {
    expect(await mapClaudeCodeCall(fixture("multi-edit"))).toEqual({
      tool: "edit_file",
      args: {
        path: `${root}/src/app.ts`,
        old_string: 'const port = 3000;\r\nconsole.log("listening");\r\n',
        new_string: "const port = 4000;\r\nconsole.log(`listening on ${port}`);\r\n",
      },
    });
  });

  it.each([
    ["an edit that does not match", (p: any) => (p.tool_input.edits[1].old_string = "nowhere")],
    ["a path outside the workspace", (p: any) => (p.tool_input.file_path = "/etc/hosts")],
    ["a missing file", (p: any) => (p.tool_input.file_path = `${root}/src/missing.ts`)],
  ])("falls back to the first edit for %s, so the gateway records and answers it", async (_label, change) => {
    const payload = fixture("multi-edit", change);
    const mapped = await mapClaudeCodeCall(payload);
    expect(mapped).toEqual({
      tool: "edit_file",
      args: { path: payload.tool_input.file_path, old_string: "const port = 3000;", new_string: "const port = 4000;" },
    });
  });

  it("refuses payloads that are not PreToolUse events", () => {
    expect(PreToolUsePayload.safeParse({ hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: {} }).success).toBe(false);
    expect(PreToolUsePayload.safeParse({ hook_event_name: "PreToolUse", tool_input: {} }).success).toBe(false);
  });
});

describe("hookOutput", () => {
  it.each(["allow", "deny", "ask"] as const)("writes Claude Code's PreToolUse decision JSON for %s", (decision) => {
    expect(hookOutput(decision, "why")).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: "why" },
    });
  });
});
