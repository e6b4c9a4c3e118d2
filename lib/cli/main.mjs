import { parseCommandArgs, splitCommandLine } from "./argv.mjs";
import { clientOptions } from "./client.mjs";
import { generalHelp, hookCommand, listToolsCommand, selfCheckCommand, serveCommand, waitCommand } from "./commands.mjs";
import { CliError } from "./errors.mjs";
import { commandExitStatus, emitEnvelope } from "./output.mjs";
import { callToolOverHttp, fetchToolList, findTool, toolHelp, toolsForHelp } from "./tools.mjs";

/**
 * agent-reach: the CLI door, one of the three doors over the one pipeline (docs/ARCHITECTURE.md).
 * It speaks HTTP to the server only; tool subcommands and their flags are generated from GET
 * /api/tools.
 */

const BUILTINS = {
  "list-tools": listToolsCommand,
  "self-check": selfCheckCommand,
  wait: waitCommand,
  serve: serveCommand,
  hook: hookCommand,
};

/**
 * Runs the CLI.
 * @param {string[]} argv arguments after the script name.
 * @param {NodeJS.ProcessEnv} env environment (AGENT_REACH_URL, AGENT_REACH_TOKEN, AGENT_REACH_SESSION).
 * @returns {Promise<number>} the exit status (0 ok, 2 arguments, 3 file system, 4 network,
 *   5 data format, 6 supervision, 1 internal).
 */
export async function main(argv, env = process.env) {
  /** @type {Record<string, unknown>} */
  let globals = {};
  try {
    const split = splitCommandLine(argv);
    globals = split.globals;
    const { command, rest } = split;
    if (command === null || command === "help") {
      const asked = command === "help" || globals.help === true;
      (asked ? process.stdout : process.stderr).write(generalHelp());
      return asked ? 0 : 2;
    }
    const builtin = BUILTINS[command];
    if (builtin) return await builtin(rest, globals, env);
    return await toolCommand(command, rest, globals, env);
  } catch (err) {
    const error = err instanceof CliError ? err : new CliError("internal", `Unexpected failure: ${err?.message ?? err}`);
    if (!(err instanceof CliError) && globals.debug) process.stderr.write(`${err?.stack ?? err}\n`);
    return emitEnvelope(error.toEnvelope(), globals.format === "text" ? "text" : "json");
  }
}

/** A tool subcommand: schema from the server → typed arguments → POST /api/tools/{name}. */
async function toolCommand(command, rest, globals, env) {
  const connection = { ...globals, ...peekConnectionOptions(rest) };
  if (globals.help || rest.includes("--help") || rest.includes("-h")) {
    // Help works offline: the server's tool list when it answers, else the one shipped with the CLI.
    const { tools, source } = await toolsForHelp(clientOptions(connection, env));
    process.stdout.write(toolHelp(findTool(tools, command), source));
    return 0;
  }
  const { tools, approvalWait } = await fetchToolList(clientOptions(connection, env));
  const tool = findTool(tools, command);
  const args = await parseCommandArgs(rest, tool.input_schema ?? {}, globals);
  const envelope = await callToolOverHttp(clientOptions(globals, env), tool.name, args, globals.wait, approvalWait);
  const status = emitEnvelope(envelope, globals.format === "text" ? "text" : "json");
  return globals.exit_code === true && envelope.ok ? (commandExitStatus(envelope.data) ?? status) : status;
}

/**
 * `--server` and `--debug` given after the command, needed before the command's schema (which
 * comes from the server) can be used to parse the rest.
 */
function peekConnectionOptions(rest) {
  const found = {};
  rest.forEach((token, i) => {
    if (token === "--debug") found.debug = true;
    if (token === "--server" && rest[i + 1] !== undefined) found.server = rest[i + 1];
    if (token.startsWith("--server=")) found.server = token.slice("--server=".length);
  });
  return found;
}
