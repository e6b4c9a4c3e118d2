import { createRequire } from "node:module";
import { CliError } from "./errors.mjs";

/**
 * The CLI's only way to the gateway: HTTP to the server (never the database or the workspace).
 */

export const DEFAULT_SERVER = "http://127.0.0.1:3000";

/** `agent-reach-cli/<version>`, sent as User-Agent so the server can tell the CLI door apart. */
export const USER_AGENT = `agent-reach-cli/${createRequire(import.meta.url)("../../package.json").version}`;

/**
 * @typedef {object} ClientOptions
 * @property {string} server base URL, e.g. http://127.0.0.1:3000.
 * @property {string | undefined} token agent token.
 * @property {string | undefined} session X-Agent-Session value.
 * @property {boolean} debug trace to stderr.
 */

/**
 * Connection settings from global options and the environment.
 * @param {Record<string, unknown>} globals parsed global options.
 * @param {NodeJS.ProcessEnv} env
 * @returns {ClientOptions}
 */
export function clientOptions(globals, env) {
  const server = String(globals.server ?? env.AGENT_REACH_URL ?? DEFAULT_SERVER).replace(/\/+$/, "");
  return {
    server,
    token: /** @type {string | undefined} */ (globals.token ?? (env.AGENT_REACH_TOKEN || undefined)),
    session: /** @type {string | undefined} */ (globals.session ?? (env.AGENT_REACH_SESSION || undefined)),
    debug: globals.debug === true,
  };
}

/**
 * One HTTP request to the server.
 * @param {ClientOptions} client
 * @param {string} method
 * @param {string} pathname e.g. "/api/tools/read_file".
 * @param {{body?: unknown, rawBody?: string, headers?: Record<string, string>, timeoutMs?: number, auth?: boolean}} [options]
 *   `auth: false` sends no token; `rawBody` is sent as is (JSON); `timeoutMs` bounds the whole exchange.
 * @returns {Promise<{status: number, headers: Record<string, string | string[] | undefined>, json: any}>} `json`
 *   is null when the body is not JSON.
 * @throws CliError fetch_failed (server unreachable), fetch_timeout (no answer within timeoutMs).
 */
export async function request(client, method, pathname, options = {}) {
  const url = `${client.server}${pathname}`;
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json", "user-agent": USER_AGENT, ...options.headers };
  if (options.auth !== false && client.token) headers.authorization = `Bearer ${client.token}`;
  if (client.session) headers["x-agent-session"] = client.session;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined) headers["content-type"] = "application/json; charset=utf-8";
  const started = Date.now();
  trace(client, `→ ${method} ${url}${headers.prefer ? ` (prefer: ${headers.prefer})` : ""}${body !== undefined ? ` body ${Buffer.byteLength(body)} bytes` : ""}`);
  let res;
  let text;
  try {
    ({ res, text } = await httpExchange(url, method, headers, body, options.timeoutMs));
  } catch (err) {
    const timedOut = err?.name === "TimeoutError";
    trace(client, `✗ ${timedOut ? "timeout" : (err?.code ?? err?.message)} after ${Date.now() - started} ms`);
    if (timedOut) throw new CliError("fetch_timeout", `No answer from the Agent Reach server at ${client.server} within ${options.timeoutMs} ms.`, { server: client.server });
    const reason = err?.code ?? err?.message ?? String(err);
    throw new CliError("fetch_failed", `Cannot reach the Agent Reach server at ${client.server} (${reason}). Is it running? Start it with: npm start (or agent-reach serve)`, {
      server: client.server,
      reason,
    });
  }
  trace(client, `← ${res.status} in ${Date.now() - started} ms, ${Buffer.byteLength(text)} bytes`);
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON: the caller reports it */
  }
  return { status: res.status, headers: res.headers, json };
}

/**
 * One HTTP/1.1 exchange with node:http (node:https for an https URL). The CLI uses these rather
 * than `fetch`: loading fetch's implementation costs more than the rest of a CLI call's start-up,
 * and agents run the CLI once per step.
 * @param {string} url
 * @param {string} method
 * @param {Record<string, string>} headers
 * @param {string | undefined} body
 * @param {number | undefined} timeoutMs bound on the whole exchange; past it the request is
 *   destroyed with an error named "TimeoutError".
 * @returns {Promise<{res: {status: number, headers: Record<string, string | string[] | undefined>}, text: string}>}
 */
async function httpExchange(url, method, headers, body, timeoutMs) {
  const target = new URL(url);
  const transport = target.protocol === "https:" ? await import("node:https") : await import("node:http");
  return new Promise((resolve, reject) => {
    const req = transport.request(target, { method, headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (response) => {
      const chunks = [];
      response.on("data", (d) => chunks.push(d));
      response.on("end", () => resolve({ res: { status: response.statusCode ?? 0, headers: response.headers }, text: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    let timer;
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: "TimeoutError" })), timeoutMs);
    }
    req.on("error", reject);
    req.on("close", () => clearTimeout(timer));
    req.end(body);
  });
}

/**
 * The server's answer as an envelope, or a CliError when it is not one (an HTML error page, a
 * proxy's answer): `internal`, with the HTTP status.
 * @returns {{ok: boolean, call_id: string | null, data?: any, error?: any}}
 */
export function asEnvelope(response, what) {
  const body = response.json;
  if (body && typeof body === "object" && typeof body.ok === "boolean" && (body.ok || body.error)) return body;
  throw new CliError("internal", `Unexpected answer from the server to ${what}: HTTP ${response.status}, not an Agent Reach envelope.`, {
    status: response.status,
  });
}

/** Writes one trace line to stderr when --debug is on. */
export function trace(client, line) {
  if (client.debug) process.stderr.write(`[agent-reach] ${line}\n`);
}
