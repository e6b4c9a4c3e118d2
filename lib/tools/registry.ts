import { z } from "zod";
import { annotationsOf, type ToolAnnotations, type ToolDefinition } from "@/lib/tools/define-tool";
import { editFileTool } from "@/lib/tools/edit-file";
import { fetchUrlTool } from "@/lib/tools/fetch-url";
import { getCallTool } from "@/lib/tools/get-call";
import { listBackupsTool } from "@/lib/tools/list-backups";
import { listDirectoryTool } from "@/lib/tools/list-directory";
import { readFileTool } from "@/lib/tools/read-file";
import { restoreBackupTool } from "@/lib/tools/restore-backup";
import { revertCallTool } from "@/lib/tools/revert-call";
import { runCommandTool } from "@/lib/tools/run-command";
import { searchFilesTool } from "@/lib/tools/search-files";
import { transformTool } from "@/lib/tools/transform";
import { writeFileTool } from "@/lib/tools/write-file";

/**
 * The one registry of tools. Every door (HTTP, MCP, CLI) and the JSON Schema list read it;
 * adding a tool here is all it takes to expose it everywhere.
 */
export const TOOLS: readonly ToolDefinition[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  listDirectoryTool,
  searchFilesTool,
  runCommandTool,
  fetchUrlTool,
  transformTool,
  listBackupsTool,
  restoreBackupTool,
  revertCallTool,
  getCallTool,
] as ToolDefinition[];

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** The tool named `name`, or undefined. */
export function getTool(name: string): ToolDefinition | undefined {
  return BY_NAME.get(name);
}

/**
 * Names of the tools whose successful calls change the workspace the given way
 * (ToolDefinition.changes): `"file"` for one file through the write pipeline, `"change_set"` for
 * a journaled change set. In registry order.
 */
export function toolNamesChanging(kind: NonNullable<ToolDefinition["changes"]>): string[] {
  return TOOLS.filter((t) => t.changes === kind).map((t) => t.name);
}

/** Names of the tools a grant can be made for (ToolDefinition.grant), in registry order. */
export function grantToolNames(): string[] {
  return TOOLS.filter((t) => t.grant !== undefined).map((t) => t.name);
}

/** A tool as listed for function calling (OpenAI `tools[].function`, Anthropic `tools[]`, MCP `tools/list`). */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the arguments, from the zod schema (`z.toJSONSchema`). */
  input_schema: Record<string, unknown>;
  /** JSON Schema (draft 2020-12) of `data` in a successful call's envelope. */
  output_schema: Record<string, unknown>;
  risk: ToolDefinition["risk"];
  annotations: ToolAnnotations;
}

/** JSON Schema of a tool's arguments as the caller sends them (defaults optional). */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** JSON Schema of a tool's `data` on success, from its zod output schema. */
export function outputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.output, { io: "output", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** Every tool with its JSON Schema and description. */
export function listTools(): ToolListing[] {
  return TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    input_schema: inputJsonSchema(tool),
    output_schema: outputJsonSchema(tool),
    risk: tool.risk,
    annotations: annotationsOf(tool),
  }));
}
