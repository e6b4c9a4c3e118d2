import { createRequire } from "node:module";
import { flagName, GLOBAL_OPTIONS, typesOf } from "./argv.mjs";
import { asEnvelope, request } from "./client.mjs";
import { CliError } from "./errors.mjs";

/**
 * Tool subcommands, generated from GET /api/tools: every tool is a subcommand named by the
 * kebab-case of its wire name (`read_file` → `read-file`), plus short names for
 * three of them. Nothing about a tool is written here; the server's registry is the one source.
 */

/** Seed 002's short subcommand names; the kebab-case full name works too. */
const SHORT_NAMES = { run_command: "run", list_directory: "list-dir", search_files: "search" };

/**
 * The subcommand names of a tool, preferred first.
 * @param {string} toolName wire name, e.g. "run_command".
 * @returns {string[]} e.g. ["run", "run-command"].
 */
export function commandNames(toolName) {
  const kebab = toolName.replace(/_/g, "-");
  return SHORT_NAMES[toolName] ? [SHORT_NAMES[toolName], kebab] : [kebab];
}

/**
 * The tool list of the server (public endpoint, no token needed).
 * @param {import("./client.mjs").ClientOptions} client
 * @returns {Promise<Array<{name: string, title: string, description: string, input_schema: any, risk: string, annotations: object}>>}
 * @throws CliError fetch_failed / fetch_timeout / internal.
 */
export async function fetchTools(client) {
  const res = await request(client, "GET", "/api/tools", { auth: false, timeoutMs: 30_000 });
  if (res.status === 200 && Array.isArray(res.json?.tools)) return res.json.tools;
  throw new CliError("internal", `GET /api/tools answered HTTP ${res.status} without a tool list.`, {
    status: res.status,
    ...(res.json?.error && { error: res.json.error }),
  });
}

/**
 * The tool list shipped with the CLI (lib/cli/tools.json, written from the server's registry by
 * scripts/gen-cli-tools.ts and checked against it by tests/cli/tools-json.test.ts).
 * @returns {Array<{name: string, title: string, description: string, input_schema: any, risk: string, annotations: object}>}
 */
export function shippedTools() {
  return createRequire(import.meta.url)("./tools.json").tools;
}

/** How long help waits for the server's tool list before using the shipped one (ms). */
const HELP_FETCH_TIMEOUT_MS = 1500;

/**
 * The tool list for help texts: the server's when it answers within `HELP_FETCH_TIMEOUT_MS`
 * (it may be newer than this CLI), else the list shipped with the CLI, so help works offline.
 * @returns {Promise<{tools: any[], source: "server" | "shipped"}>}
 */
export async function toolsForHelp(client) {
  try {
    const res = await request(client, "GET", "/api/tools", { auth: false, timeoutMs: HELP_FETCH_TIMEOUT_MS });
    if (res.status === 200 && Array.isArray(res.json?.tools)) return { tools: res.json.tools, source: "server" };
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
  }
  return { tools: shippedTools(), source: "shipped" };
}

/**
 * The tool a subcommand names.
 * @throws CliError unknown_tool, listing the commands there are.
 */
export function findTool(tools, command) {
  const tool = tools.find((t) => commandNames(t.name).includes(command) || t.name === command);
  if (tool) return tool;
  const known = tools.map((t) => commandNames(t.name)[0]);
  throw new CliError("unknown_tool", `Unknown command "${command}". Commands: ${[...known, ...BUILTIN_COMMANDS].join(", ")}.`, { command });
}

/** The CLI's own commands, for help and error messages. */
export const BUILTIN_COMMANDS = ["list-tools", "self-check", "wait", "serve", "hook", "help"];

/**
 * Calls a tool: POST /api/tools/{name} with the agent token, `Prefer: wait=N` when --wait was
 * given and `X-Agent-Session` when --session was.
 * @returns {Promise<object>} the envelope.
 */
export async function callToolOverHttp(client, toolName, args, waitSeconds) {
  /** @type {Record<string, string>} */
  const headers = waitSeconds !== undefined ? { prefer: `wait=${waitSeconds}` } : {};
  const res = await request(client, "POST", `/api/tools/${encodeURIComponent(toolName)}`, { body: args, headers });
  return asEnvelope(res, toolName);
}

/**
 * Usage text of one tool subcommand, from its JSON Schema.
 * @returns {string}
 */
export function toolHelp(tool, source = "server") {
  const schema = tool.input_schema ?? {};
  const required = new Set(schema.required ?? []);
  const lines = [
    `agent-reach ${commandNames(tool.name).join(" | ")} [options]   (tool ${tool.name})`,
    "",
    tool.description,
    "",
    "Options:",
    ...Object.entries(schema.properties ?? {}).map(([key, prop]) => optionLine(key, prop, required.has(key))),
    "",
    globalHelp(),
    ...(source === "shipped" ? ["", "(The server did not answer: this help is from the tool list shipped with the CLI.)"] : []),
  ];
  return `${lines.join("\n")}\n`;
}

/** The global options block of the help texts. */
export function globalHelp() {
  return [
    "Global options:",
    ...Object.entries(GLOBAL_OPTIONS).map(([key, spec]) => `  ${flagName(key).padEnd(28)} ${spec.description}`),
    "",
    "Values: @path reads a local file (UTF-8), - reads standard input, @@x is a literal @x.",
    "Exit status: 0 ok, 2 arguments, 3 file system, 4 network, 5 data format, 6 supervision, 1 internal.",
    "A command that ran is a successful tool call (exit 0) whatever its own exit code; with --exit-code",
    "the CLI exits with the command's status instead (124 when it timed out, 128+n when signal n or a",
    "limit ended it).",
  ].join("\n");
}

function optionLine(key, prop, isRequired) {
  const types = [...typesOf(prop)].filter((t) => t !== "null");
  const boolean = types.length === 1 && types[0] === "boolean";
  const name = boolean ? `${flagName(key)}, --no-${key.replace(/_/g, "-")}` : `${flagName(key)} <${types.join("|") || "value"}>`;
  const notes = [isRequired ? "required" : null, prop.default !== undefined ? `default ${JSON.stringify(prop.default)}` : null].filter(Boolean);
  return `  ${name.padEnd(28)} ${notes.length ? `(${notes.join(", ")}) ` : ""}${prop.description ?? ""}`;
}
