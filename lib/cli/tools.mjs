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
  return (await fetchToolList(client)).tools;
}

/**
 * The server's tool list and how long it waits for a reviewer (`approval_wait`, seconds: the
 * default without `Prefer: wait`, and the most; undefined from a server that does not say).
 * @param {import("./client.mjs").ClientOptions} client
 * @returns {Promise<{tools: any[], approvalWait: {default_s: number, max_s: number} | undefined}>}
 * @throws CliError fetch_failed / fetch_timeout / internal.
 */
export async function fetchToolList(client) {
  const res = await request(client, "GET", "/api/tools", { auth: false, timeoutMs: 30_000 });
  if (res.status === 200 && Array.isArray(res.json?.tools)) {
    const wait = res.json.approval_wait;
    const approvalWait = wait && Number.isFinite(wait.default_s) && Number.isFinite(wait.max_s) ? { default_s: wait.default_s, max_s: wait.max_s } : undefined;
    return { tools: res.json.tools, approvalWait };
  }
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

/** Longest single long-poll while following a queued call (s); the server bounds it again. */
const FOLLOW_POLL_S = 60;

/**
 * Calls a tool: POST /api/tools/{name} with the agent token and `X-Agent-Session` when --session
 * was given, and prints nothing but what `emitEnvelope` prints of the result, as before.
 *
 * So that a person can find a call's outcome even when this process stops (Ctrl-C, a lost
 * connection, a server restart), the call id is made known on stderr as soon as the server has
 * one: the call is sent with `Prefer: wait=0`; when it is queued for a reviewer (601) and there
 * is time left to wait (--wait N, else the server's default from `approvalWait`), one line names
 * the call and how to follow it, and the CLI then waits on GET /api/calls/{id} for what the
 * call's own request would have answered (the result, the held result of a command whose file
 * changes a reviewer must decide, or the 601 when the wait ran out). A SIGINT meanwhile prints
 * the call id again and exits 130; the call stays queued. A SIGINT before the server answered
 * says the call (if it started) is not cancelled and where to look.
 * With a server that does not publish its default wait, the call is sent as before (one request
 * with `Prefer: wait=N` when --wait was given).
 * @param {import("./client.mjs").ClientOptions} client
 * @param {string} toolName wire name.
 * @param {Record<string, unknown>} args the tool's arguments.
 * @param {unknown} waitSeconds --wait, when given.
 * @param {{default_s: number, max_s: number}} [approvalWait] the server's waits (GET /api/tools).
 * @returns {Promise<object>} the envelope.
 */
export async function callToolOverHttp(client, toolName, args, waitSeconds, approvalWait) {
  const onInterrupt = interruptNotice(client, null);
  try {
    if (approvalWait === undefined) {
      /** @type {Record<string, string>} */
      const headers = waitSeconds !== undefined ? { prefer: `wait=${waitSeconds}` } : {};
      return asEnvelope(await request(client, "POST", `/api/tools/${encodeURIComponent(toolName)}`, { body: args, headers }), toolName);
    }
    const budgetS = Math.max(0, Math.min(waitSeconds !== undefined ? Number(waitSeconds) : approvalWait.default_s, approvalWait.max_s));
    const first = asEnvelope(await request(client, "POST", `/api/tools/${encodeURIComponent(toolName)}`, { body: args, headers: { prefer: "wait=0" } }), toolName);
    const callId = first.call_id;
    if (first.ok || first.error?.name !== "approval_pending" || typeof callId !== "string" || !(budgetS > 0)) return first;
    onInterrupt.callId = callId;
    process.stderr.write(
      `[agent-reach] call ${callId} waits for a reviewer's approval (up to ${budgetS} s here). If this stops, the call stays queued: follow it with \`agent-reach wait ${callId}\` (or get_call, or GET /api/calls/${callId}).\n`,
    );
    try {
      return await followQueuedCall(client, callId, first, Date.now() + budgetS * 1000);
    } catch (err) {
      // The server went away while the call waited (a restart): the call is still in its queue.
      if (err instanceof CliError) {
        err.detail = { ...err.detail, call_id: callId };
        err.message = `${err.message} Call ${callId} is not cancelled; its outcome later: agent-reach wait ${callId}.`;
      }
      throw err;
    }
  } finally {
    onInterrupt.remove();
  }
}

/**
 * Waits on GET /api/calls/{id} until the call is decided and done, its command ran with file
 * changes held for a reviewer, or `deadline` (ms since the epoch) passed.
 * @returns {Promise<object>} the envelope the call's own request would have answered (the status
 *   route's extra members removed): the result, the held result, or the last 601.
 */
async function followQueuedCall(client, callId, pending, deadline) {
  let last = pending;
  for (;;) {
    const pollS = Math.max(0, Math.min(FOLLOW_POLL_S, Math.ceil((deadline - Date.now()) / 1000)));
    if (pollS === 0) return last;
    const res = await request(client, "GET", `/api/calls/${encodeURIComponent(callId)}?wait=${pollS}`, { timeoutMs: (pollS + 30) * 1000 });
    const { call: _call, held_result: held, ...envelope } = /** @type {any} */ (asEnvelope(res, `GET /api/calls/${callId}`));
    if (held && typeof held === "object") return held;
    if (envelope.ok || envelope.error?.name !== "approval_pending") return envelope;
    last = envelope;
  }
}

/**
 * While a call is in flight, Ctrl-C (SIGINT) prints on stderr what became of it before exiting
 * with 130: the call id with how to follow it once the server has given one, else that the call
 * (if it started) is not cancelled and the dashboard's sessions page shows it.
 * @param {import("./client.mjs").ClientOptions} client
 * @param {string | null} callId the call, when already known.
 * @returns {{callId: string | null, remove(): void}} set `callId` once known; `remove` when done.
 */
export function interruptNotice(client, callId) {
  const state = {
    callId,
    remove() {
      process.removeListener("SIGINT", onSignal);
    },
  };
  function onSignal() {
    const session = client.session ? ` (session ${JSON.stringify(client.session)})` : "";
    process.stderr.write(
      state.callId
        ? `[agent-reach] interrupted: call ${state.callId} is not cancelled (it stays queued for a reviewer, or runs to its end); its outcome: \`agent-reach wait ${state.callId}\` (or get_call, or GET /api/calls/${state.callId}).\n`
        : `[agent-reach] interrupted before the server answered: the call, if it started, is not cancelled; the dashboard's sessions page shows it${session}.\n`,
    );
    process.exit(130);
  }
  process.on("SIGINT", onSignal);
  return state;
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
