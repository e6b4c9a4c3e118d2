import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { decodeUtf8, parseCommandArgs, readStdin } from "./argv.mjs";
import { asEnvelope, clientOptions, request } from "./client.mjs";
import { CliError } from "./errors.mjs";
import { emitEnvelope } from "./output.mjs";
import { commandNames, fetchTools, globalHelp, interruptNotice, shippedTools } from "./tools.mjs";

/**
 * The CLI's own commands: list-tools, self-check, wait, serve and
 * `hook claude-code`. Each takes the arguments after its name and the global options, prints its
 * result and returns the exit status.
 */

/**
 * `list-tools`: every tool with its subcommand names and JSON Schema (from GET /api/tools).
 * @returns {Promise<number>} exit status.
 */
export async function listToolsCommand(rest, globals, env) {
  await parseCommandArgs(rest, {}, globals);
  const tools = (await fetchTools(clientOptions(globals, env))).map((t) => ({ command: commandNames(t.name)[0], ...t }));
  if (globals.format === "text") {
    const width = Math.max(...tools.map((t) => t.command.length));
    process.stdout.write(`${tools.map((t) => `${t.command.padEnd(width)}  ${t.title} (${t.name}, ${t.risk})`).join("\n")}\n`);
    return 0;
  }
  return emitEnvelope({ ok: true, call_id: null, data: { tools } }, "json");
}

/** A probe id no call has, used to check a token without recording a call. */
const TOKEN_PROBE = "call_self_check_probe";

/**
 * `self-check`: the server answers, the token is accepted, and the server's own health
 * checks (database, workspace readable and writable, disk space, the command sandbox) pass; a
 * standing warning (the sandbox turned off by the operator) prints WARN and does not fail. The token is checked by
 * asking for a call that does not exist (GET /api/calls/…: 404 with a valid token, 401 without),
 * so a self-check leaves nothing in the audit log.
 * @returns {Promise<number>} 0 when every check passes; else 4 (server unreachable), 6 (token),
 *   3 (workspace or disk), 1 (database or anything else).
 */
export async function selfCheckCommand(rest, globals, env) {
  await parseCommandArgs(rest, {}, globals);
  const client = clientOptions(globals, env);
  /** @type {{name: string, ok: boolean, detail: string, warning?: boolean, fix?: string}[]} */
  const checks = [];
  const started = Date.now();
  try {
    const health = await request(client, "GET", "/api/health", { auth: false, timeoutMs: 15_000 });
    checks.push({ name: "server", ok: true, detail: `${client.server} answered in ${Date.now() - started} ms` });
    for (const c of health.json?.checks ?? []) checks.push({ name: c.name, ok: c.ok, detail: c.detail, ...(c.warning && { warning: true }), ...(c.fix && { fix: c.fix }) });
    if (!Array.isArray(health.json?.checks)) checks.push({ name: "health", ok: false, detail: `GET /api/health answered HTTP ${health.status}` });
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    checks.push({ name: "server", ok: false, detail: err.message });
  }
  if (checks[0].ok) checks.push(await checkToken(client));
  const failed = checks.filter((c) => !c.ok);
  if (globals.format === "text") {
    process.stdout.write(`${checks.map((c) => `${c.ok ? (c.warning ? "WARN" : "ok  ") : "FAIL"}  ${c.name.padEnd(10)} ${c.detail}`).join("\n")}\n`);
  }
  if (failed.length === 0) return globals.format === "text" ? 0 : emitEnvelope({ ok: true, call_id: null, data: { server: client.server, checks } }, "json");
  const name = { server: "fetch_failed", token: "unauthorized", workspace: "write_failed", disk: "write_failed" }[failed[0].name] ?? "internal";
  const error = new CliError(name, `self-check failed: ${failed.map((c) => `${c.name}: ${c.detail}`).join("; ")}`, { server: client.server, checks });
  return emitEnvelope(error.toEnvelope(), globals.format === "text" ? "text" : "json");
}

async function checkToken(client) {
  if (!client.token) return { name: "token", ok: false, detail: "no agent token: set AGENT_REACH_TOKEN or pass --token" };
  const res = await request(client, "GET", `/api/calls/${TOKEN_PROBE}`, { timeoutMs: 15_000 });
  if (res.status === 401) return { name: "token", ok: false, detail: "the server rejected the agent token (unknown or revoked)" };
  if (res.status === 404) return { name: "token", ok: true, detail: "agent token accepted" };
  return { name: "token", ok: false, detail: `unexpected HTTP ${res.status} while checking the token` };
}

const WAIT_SCHEMA = { properties: { call_id: { type: "string", description: "The call to wait for." } }, required: ["call_id"] };
/** Longest single long-poll (s); the server bounds it again (AGENT_REACH_APPROVAL_WAIT_MAX_S). */
const POLL_S = 60;

/**
 * `wait <call_id>`: long-polls GET /api/calls/{id} until the call has finished, then prints its
 * envelope like the original call would have (same exit status). `--wait N` gives up after N
 * seconds with the 601 envelope (exit 6); without it, waits until the call finishes or expires.
 * @returns {Promise<number>} exit status.
 */
export async function waitCommand(rest, globals, env) {
  const callId = /** @type {string | undefined} */ ((await parseCommandArgs(rest, WAIT_SCHEMA, globals)).call_id);
  if (!callId) throw new CliError("invalid_arguments", "Usage: agent-reach wait <call_id> [--wait N]");
  const client = clientOptions(globals, env);
  const deadline = globals.wait !== undefined ? Date.now() + Number(globals.wait) * 1000 : Infinity;
  // Ctrl-C says the call goes on and how to come back to it.
  const onInterrupt = interruptNotice(client, callId);
  try {
    for (;;) {
      const pollS = Math.max(0, Math.min(POLL_S, Math.ceil((deadline - Date.now()) / 1000)));
      const res = await request(client, "GET", `/api/calls/${encodeURIComponent(callId)}?wait=${pollS}`, { timeoutMs: (pollS + 30) * 1000 });
      const envelope = asEnvelope(res, `GET /api/calls/${callId}`);
      const pending = !envelope.ok && envelope.error?.name === "approval_pending";
      if (!pending || Date.now() >= deadline) return emitEnvelope(envelope, globals.format ?? "json");
    }
  } finally {
    onInterrupt.remove();
  }
}

const SERVE_SCHEMA = { properties: { dev: { type: "boolean", description: "Run the development server (npm run dev)." } } };

/**
 * `serve`: runs `npm start` (or `npm run dev` with --dev) in the repository this CLI belongs to,
 * with the terminal attached; signals are passed on.
 * @returns {Promise<number>} the server's exit status.
 */
export async function serveCommand(rest, globals) {
  const { dev } = await parseCommandArgs(rest, SERVE_SCHEMA, globals);
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const child = spawn(npm, dev ? ["run", "dev"] : ["start"], { cwd: root, stdio: "inherit", shell: process.platform === "win32" });
  const forward = (signal) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  return new Promise((resolve) => {
    child.on("error", (err) => {
      process.stderr.write(`${JSON.stringify(new CliError("internal", `Cannot start npm: ${err.message}`).toEnvelope())}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const HOOK_SCHEMA = {
  properties: {
    agent: { type: "string", enum: ["claude-code"], description: "Which agent's hook protocol: claude-code." },
    fail_open: { type: "boolean", description: "When the gateway cannot decide (unreachable, bad token), give no decision instead of deny." },
    on_timeout: { type: "string", enum: ["deny", "ask"], description: "When no reviewer decides in time: deny (default) or ask the user in Claude Code." },
  },
  required: ["agent"],
};
/** Default wait for a reviewer (s): well inside Claude Code's default hook timeout of 60 s. */
const HOOK_WAIT_S = 30;

/**
 * `hook claude-code`: a Claude Code PreToolUse hook. Reads the hook payload on stdin, asks the
 * gateway (POST /api/hooks/claude-code) and prints the decision JSON Claude Code reads
 * (`hookSpecificOutput.permissionDecision`), exit status 0. Fails closed: when the gateway cannot
 * decide (unreachable, timeout, bad token, malformed payload) it prints a deny with the reason
 * (and the error envelope on stderr); with --fail-open it prints `{}` instead, which leaves the
 * call to Claude Code's own permission rules.
 * @returns {Promise<number>} 0 (the decision is in the output); 2 for a bad command line.
 */
export async function hookCommand(rest, globals, env) {
  const opts = await parseCommandArgs(rest, HOOK_SCHEMA, globals);
  if (opts.agent !== "claude-code") throw new CliError("invalid_arguments", `Unknown hook "${opts.agent}". Supported: claude-code.`);
  if (opts.on_timeout !== undefined && !["deny", "ask"].includes(/** @type {string} */ (opts.on_timeout))) {
    throw new CliError("invalid_arguments", "--on-timeout must be deny or ask.");
  }
  const client = clientOptions(globals, env);
  const waitS = globals.wait ?? HOOK_WAIT_S;
  let output = null;
  let failure = null;
  try {
    const payload = decodeUtf8(await readStdin(), "the hook payload on stdin");
    const res = await request(client, "POST", `/api/hooks/claude-code?on_timeout=${opts.on_timeout ?? "deny"}`, {
      rawBody: payload,
      headers: { prefer: `wait=${waitS}` },
      timeoutMs: (Number(waitS) + 15) * 1000,
    });
    if (res.status === 200 && res.json?.hook_output) output = res.json.hook_output;
    else failure = asEnvelope(res, "POST /api/hooks/claude-code");
  } catch (err) {
    failure = (err instanceof CliError ? err : new CliError("internal", String(err?.message ?? err))).toEnvelope();
  }
  if (failure) {
    process.stderr.write(`${JSON.stringify(failure)}\n`);
    output = opts.fail_open
      ? {}
      : {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: `Agent Reach could not decide this call, so it is denied (the hook fails closed): ${failure.error.message}`,
          },
        };
  }
  process.stdout.write(`${JSON.stringify(output)}\n`);
  return 0;
}

/**
 * `text` broken into lines of at most `width` characters at spaces.
 * @param {string} text
 * @param {number} width
 * @returns {string[]}
 */
function wrap(text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** `help` / no command: usage of the whole CLI; the tool commands are those shipped with it (lib/cli/tools.json). */
export function generalHelp() {
  return `${[
    "agent-reach: call Agent Reach's supervised tools from the shell (over HTTP).",
    "",
    "Usage:",
    "  agent-reach <tool-command> [--option value ...]   call a tool; list them with list-tools",
    "  agent-reach <tool-command> --help                 a tool's options (from its JSON Schema)",
    "  agent-reach list-tools                            every tool with its options",
    "  agent-reach self-check                            server reachable, token valid, workspace ok",
    "  agent-reach wait <call_id>                        wait for a call that awaits approval",
    "  agent-reach serve [--dev]                         start the server (npm start)",
    "  agent-reach hook claude-code [--fail-open] [--on-timeout deny|ask]",
    "                                                    Claude Code PreToolUse hook (stdin → decision)",
    "",
    ...wrap(`Tool commands: ${shippedTools().map((t) => commandNames(t.name)[0]).join(", ")} (and any tool the server adds).`, 100),
    "",
    "Examples:",
    "  agent-reach read-file --path src/app.ts --offset 80 --limit 40",
    "  agent-reach edit-file --path README.md --old-string @old.txt --new-string @new.txt",
    "  git diff | agent-reach write-file --path notes/diff.txt --content -",
    "  agent-reach run --command 'npm test' --wait 60 --format text",
    "",
    globalHelp(),
  ].join("\n")}\n`;
}
