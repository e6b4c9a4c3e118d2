import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { mcpOutputSchema, toCallToolResult } from "@/lib/mcp/tool-mapping";
import { failure, success } from "@/lib/result";
import { errorBody } from "@/lib/errors";
import { annotationsOf, RISK_ANNOTATIONS, type ToolDefinition } from "@/lib/tools/define-tool";
import { getTool, listTools, outputJsonSchema, TOOLS } from "@/lib/tools/registry";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";
import { startLoopbackServers, tableResolver, type LoopbackServers } from "@/tests/net/loopback-servers";
import { setTestNetwork } from "@/tests/helpers/test-network";

// fetch_url's resolver and allowances come from the test (tests/helpers/test-network.ts).
vi.mock("@/lib/net/network-options", async (importOriginal) => (await import("@/tests/helpers/test-network")).withTestNetwork(await importOriginal()));

/**
 * Every tool's output schema against what its `run` really returns: each tool runs (several ways
 * where the result's shape varies) and its `data` must validate against the JSON Schema the doors
 * advertise (`GET /api/tools` output_schema, MCP `outputSchema`), with the same validator MCP
 * clients use (Ajv, through the SDK). get_call needs the database; the MCP door test covers it.
 */

const validator = new AjvJsonSchemaValidator();
let fx: Fixture;
let ctx: TestContext;
let servers: LoopbackServers;
let restoreNet: () => void = () => {};

beforeAll(async () => {
  fx = await makeFixture();
  ctx = makeToolContext(fx.ws);
  servers = await startLoopbackServers();
  restoreNet = setTestNetwork({ resolve: tableResolver({ "public.test": ["127.0.0.1"] }), allowAddresses: ["127.0.0.1"] });
  await fx.put("src/app.ts", "const a = 1;\nconst b = 2;\n");
  await fx.put("data.json", '[{"a":1},{"a":2}]');
  await fx.put("crlf.txt", "one\r\ntwo\r\n");
  await fx.put("link-target.txt", "x");
});

afterAll(async () => {
  restoreNet();
  await servers.close();
  await fx.cleanup();
});

/** Runs a tool through its zod input schema and `run`, like the pipeline does after approval. */
async function run(name: string, args: Record<string, unknown>): Promise<unknown> {
  const tool = getTool(name)!;
  return tool.run(tool.input.parse(args), ctx);
}

function expectValid(tool: ToolDefinition, data: unknown) {
  const verdict = validator.getValidator(outputJsonSchema(tool))(data);
  expect(verdict.errorMessage ?? null, `${tool.name}: ${JSON.stringify(data).slice(0, 300)}`).toBeNull();
  expect(verdict.valid).toBe(true);
  // The MCP schema admits the same data (success branch) …
  expect(validator.getValidator(mcpOutputSchema(tool) as object)(toCallToolResult(success("call_x", data)).structuredContent).valid).toBe(true);
}

const samples: Array<[string, Record<string, unknown>]> = [
  ["read_file", { path: "notes.txt" }],
  ["read_file", { path: "crlf.txt", offset: 1, limit: 1, include_line_numbers: false }],
  ["write_file", { path: "new/dir/file.md", content: "hello\n" }],
  ["write_file", { path: "crlf.txt", content: "one\ntwo\nthree\n" }],
  ["edit_file", { path: "src/app.ts", old_string: "const a = 1;", new_string: "const a = 10;" }],
  ["list_directory", { path: "." }],
  ["list_directory", { path: "src", depth: 2, offset: 0, limit: 1 }],
  ["search_files", { query: "const" }],
  ["search_files", { pattern: "*.ts" }],
  ["run_command", { command: "echo out; echo err >&2; exit 3" }],
  ["transform", { input: "@data.json", from: "json", to: "csv" }],
  ["transform", { input: "a: 1\nb: [1, 2]\n", from: "yaml", to: "json" }],
  ["list_backups", {}],
  ["list_backups", { path: "crlf.txt" }],
];

describe("every tool's data validates against its advertised output schema", () => {
  it.each(samples)("%s %j", async (name, args) => {
    expectValid(getTool(name)!, await run(name, args));
  });

  it("restore_backup", async () => {
    const listed = (await run("list_backups", { path: "crlf.txt" })) as { backups: Array<{ id: string }> };
    expect(listed.backups.length).toBeGreaterThan(0);
    expectValid(getTool("restore_backup")!, await run("restore_backup", { backup_id: listed.backups[0].id }));
  });

  it.each([
    ["text", "/text", true],
    ["html as text", "/html", true],
    ["raw html", "/html", false],
    ["json", "/json", true],
  ])("fetch_url (%s)", async (_label, pathname, extract) => {
    const data = await run("fetch_url", { url: `http://public.test:${servers.port}${pathname}`, extract_text: extract });
    expectValid(getTool("fetch_url")!, data);
  });

  it("covers every tool of the registry (get_call through the MCP door test, revert_call through the effects door test)", () => {
    const covered = new Set([...samples.map(([name]) => name), "restore_backup", "fetch_url", "get_call", "revert_call"]);
    expect(TOOLS.map((t) => t.name).filter((n) => !covered.has(n))).toEqual([]);
  });
});

describe("output schemas as listed", () => {
  it("every tool lists an object output schema that allows fields added later", () => {
    for (const listing of listTools()) {
      expect(listing.output_schema.type, listing.name).toBe("object");
      expect(listing.output_schema.additionalProperties, listing.name).not.toBe(false);
    }
  });

  it("the MCP output schema also admits the error envelope, so isError results validate too", () => {
    for (const tool of TOOLS) {
      const envelope = failure("call_x", errorBody("not_found", "No such file: x", { path: "x" }));
      const result = toCallToolResult(envelope);
      expect(validator.getValidator(mcpOutputSchema(tool) as object)(result.structuredContent).valid, tool.name).toBe(true);
      // … while an arbitrary object is not taken for either.
      expect(validator.getValidator(mcpOutputSchema(tool) as object)({ unrelated: true }).valid, tool.name).toBe(false);
    }
  });
});

describe("annotations come from the definition", () => {
  it("derive from the risk level, with the definition's overrides on top", () => {
    for (const tool of TOOLS) expect(annotationsOf(tool)).toEqual({ ...RISK_ANNOTATIONS[tool.risk], ...tool.annotations });
    expect(annotationsOf(getTool("read_file")!)).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(annotationsOf(getTool("write_file")!)).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(annotationsOf(getTool("edit_file")!)).toMatchObject({ destructiveHint: true, idempotentHint: false });
    expect(annotationsOf(getTool("run_command")!)).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(annotationsOf(getTool("fetch_url")!)).toMatchObject({ readOnlyHint: true, openWorldHint: true });
  });
});
