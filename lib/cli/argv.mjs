import fs from "node:fs";
import { CliError } from "./errors.mjs";

/**
 * Command-line parsing for agent-reach (the contract in docs/AGENTS.md): `agent-reach [globals] <command>
 * [--key value | --key=value | --flag | --no-flag | positional …]`. A command's flags come from a
 * JSON Schema (a tool's `input_schema` from GET /api/tools, or a small schema of the CLI's own
 * commands), so the registry stays the one source: flags are the kebab-case (or snake_case) names
 * of the schema's properties, typed by the schema. Values may be `@path` (the file's contents,
 * read locally as UTF-8), `-` (standard input) or `@@…` (a literal leading "@").
 */

/** Options every command accepts (before or after the command name). */
export const GLOBAL_OPTIONS = {
  format: { type: "string", enum: ["json", "text"], description: "Output format (default json)." },
  server: { type: "string", description: "Server URL (env AGENT_REACH_URL, default http://127.0.0.1:3000)." },
  token: { type: "string", description: "Agent token (env AGENT_REACH_TOKEN)." },
  wait: { type: "number", description: "Seconds to wait for a reviewer when a call asks (sends Prefer: wait=N)." },
  session: { type: "string", description: "Session id grouping calls in the audit log (X-Agent-Session)." },
  debug: { type: "boolean", description: "Trace requests and timings to stderr." },
  exit_code: { type: "boolean", description: "For run: exit with the command's own status (124 timeout, 128+n signal) instead of 0." },
  help: { type: "boolean", description: "Show help." },
};

/**
 * Splits argv into the options before the command, the command name and the rest.
 * @param {string[]} argv process.argv.slice(2).
 * @returns {{globals: Record<string, unknown>, command: string | null, rest: string[]}}
 * @throws CliError invalid_arguments for an unknown or malformed global option.
 */
export function splitCommandLine(argv) {
  /** @type {Record<string, unknown>} */
  const globals = {};
  let i = 0;
  while (i < argv.length && (argv[i].startsWith("--") || argv[i] === "-h")) {
    if (argv[i] === "--") {
      i++;
      break;
    }
    i = readGlobal(argv, i, globals);
  }
  return { globals, command: argv[i] ?? null, rest: argv.slice(i + 1) };
}

/**
 * Parses a command's arguments against a JSON Schema of type object. Flags that are not the
 * schema's are taken as global options (so `--wait 30` works after the command too); a schema
 * property of the same name wins.
 * @param {string[]} rest arguments after the command name.
 * @param {{properties?: Record<string, any>, required?: string[]}} schema
 * @param {Record<string, unknown>} globals filled with global options found in `rest`.
 * @returns {Promise<Record<string, unknown>>} the arguments, typed by the schema.
 * @throws CliError invalid_arguments (unknown flag, missing value, bad number or JSON, extra
 *   positional, stdin used twice), not_found (an @file that does not exist),
 *   encoding_unsupported (@file or stdin that is not UTF-8).
 */
export async function parseCommandArgs(rest, schema, globals) {
  const properties = schema.properties ?? {};
  /** @type {Map<string, Array<string | boolean>>} */
  const raw = new Map();
  const positionals = [];
  let i = 0;
  let onlyPositionals = false;
  while (i < rest.length) {
    const token = rest[i];
    if (onlyPositionals || !token.startsWith("--") || token === "-") {
      positionals.push(token);
      i++;
      continue;
    }
    if (token === "--") {
      onlyPositionals = true;
      i++;
      continue;
    }
    const { name, inline } = splitFlag(token);
    const negated = name.startsWith("no_") && !(name in properties) && name.slice(3) in properties;
    const key = negated ? name.slice(3) : name;
    const prop = properties[key];
    if (!prop) {
      if (name in GLOBAL_OPTIONS || (name.startsWith("no_") && GLOBAL_OPTIONS[name.slice(3)]?.type === "boolean")) {
        i = readGlobal(rest, i, globals);
        continue;
      }
      throw new CliError("invalid_arguments", `Unknown option ${token}. Options: ${Object.keys(properties).map(flagName).join(", ") || "(none)"}.`, {
        option: token,
      });
    }
    if (isBooleanOnly(prop)) {
      const next = rest[i + 1];
      if (negated) raw.set(key, [false]);
      else if (inline !== null) raw.set(key, [parseBoolean(inline, token)]);
      else if (next === "true" || next === "false") {
        raw.set(key, [next === "true"]);
        i++;
      } else raw.set(key, [true]);
      i++;
      continue;
    }
    if (negated) throw new CliError("invalid_arguments", `${token}: only boolean options have a --no- form.`, { option: token });
    const value = inline ?? rest[i + 1];
    if (value === undefined) throw new CliError("invalid_arguments", `Option ${token} needs a value.`, { option: token });
    raw.set(key, [...(raw.get(key) ?? []), value]);
    i += inline !== null ? 1 : 2;
  }
  for (const key of schema.required ?? []) {
    if (!raw.has(key) && positionals.length > 0) raw.set(key, [/** @type {string} */ (positionals.shift())]);
  }
  if (positionals.length > 0) {
    throw new CliError("invalid_arguments", `Unexpected argument ${JSON.stringify(positionals[0])}. Pass values as --name value.`, {
      argument: positionals[0],
    });
  }
  const stdin = { used: false };
  /** @type {Record<string, unknown>} */
  const args = {};
  for (const [key, values] of raw) args[key] = await convert(key, properties[key], values, stdin);
  return args;
}

/** `old_string` → `--old-string`. */
export function flagName(key) {
  return `--${key.replace(/_/g, "-")}`;
}

/**
 * The JSON types a property accepts (`type`, `anyOf`/`oneOf` members, `enum` values).
 * @param {any} prop a JSON Schema.
 * @returns {Set<string>} e.g. {"string"}, {"integer", "null"}; empty when the schema says nothing.
 */
export function typesOf(prop) {
  const types = new Set();
  if (!prop || typeof prop !== "object") return types;
  if (typeof prop.type === "string") types.add(prop.type);
  if (Array.isArray(prop.type)) prop.type.forEach((t) => types.add(t));
  for (const member of [...(prop.anyOf ?? []), ...(prop.oneOf ?? [])]) typesOf(member).forEach((t) => types.add(t));
  if (Array.isArray(prop.enum)) prop.enum.forEach((v) => types.add(v === null ? "null" : typeof v === "number" ? "number" : typeof v));
  if (prop.const !== undefined) types.add(typeof prop.const);
  return types;
}

function isBooleanOnly(prop) {
  const types = typesOf(prop);
  types.delete("null");
  return types.size === 1 && types.has("boolean");
}

function splitFlag(token) {
  const eq = token.indexOf("=");
  const name = (eq === -1 ? token.slice(2) : token.slice(2, eq)).replace(/-/g, "_");
  return { name, inline: eq === -1 ? null : token.slice(eq + 1) };
}

function parseBoolean(text, token) {
  if (text === "true" || text === "1") return true;
  if (text === "false" || text === "0") return false;
  throw new CliError("invalid_arguments", `${token}: expected true or false.`, { option: token });
}

/** Reads one global option at argv[i]; returns the index after it. */
function readGlobal(argv, i, globals) {
  const token = argv[i];
  if (token === "-h") {
    globals.help = true;
    return i + 1;
  }
  const { name, inline } = splitFlag(token);
  if (name.startsWith("no_") && GLOBAL_OPTIONS[name.slice(3)]?.type === "boolean") {
    globals[name.slice(3)] = false;
    return i + 1;
  }
  const spec = GLOBAL_OPTIONS[name];
  if (!spec) throw new CliError("invalid_arguments", `Unknown option ${token}.`, { option: token });
  if (spec.type === "boolean") {
    globals[name] = inline === null ? true : parseBoolean(inline, token);
    return i + 1;
  }
  const value = inline ?? argv[i + 1];
  if (value === undefined) throw new CliError("invalid_arguments", `Option ${token} needs a value.`, { option: token });
  if (spec.enum && !spec.enum.includes(value)) {
    throw new CliError("invalid_arguments", `${token} must be one of ${spec.enum.join(", ")}.`, { option: token, value });
  }
  if (spec.type === "number") {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new CliError("invalid_arguments", `${token} expects a number of seconds >= 0.`, { option: token, value });
    globals[name] = n;
  } else {
    globals[name] = value;
  }
  return inline === null ? i + 2 : i + 1;
}

/** Converts the raw values of one property to its schema type. */
async function convert(key, prop, values, stdin) {
  const flag = flagName(key);
  const types = typesOf(prop);
  if (typeof values[0] === "boolean") return values[0];
  const texts = [];
  for (const v of values) texts.push(await resolveValue(/** @type {string} */ (v), flag, stdin));
  if (types.has("array")) {
    if (texts.length === 1 && texts[0].trimStart().startsWith("[")) return parseJson(texts[0], flag);
    return texts.map((t) => scalar(t, typesOf(prop.items), flag));
  }
  if (texts.length > 1) throw new CliError("invalid_arguments", `${flag} was given more than once.`, { option: flag });
  return scalar(texts[0], types, flag);
}

function scalar(text, types, flag) {
  if (types.size === 0 || types.has("string")) return text;
  if (types.has("integer") || types.has("number")) {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n)) throw new CliError("invalid_arguments", `${flag} expects a number, got ${JSON.stringify(text)}.`, { option: flag });
    if (!types.has("number") && !Number.isInteger(n)) throw new CliError("invalid_arguments", `${flag} expects an integer, got ${text}.`, { option: flag });
    return n;
  }
  if (types.has("boolean")) return parseBoolean(text, flag);
  if (types.has("object")) return parseJson(text, flag);
  if (types.has("null") && text === "null") return null;
  return text;
}

function parseJson(text, flag) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError("invalid_arguments", `${flag} expects JSON: ${err.message}`, { option: flag });
  }
}

/**
 * `-` → standard input; `@path` → the file's contents; `@@x` → "@x"; anything else as given.
 * Both are decoded as strict UTF-8, so bytes are never silently replaced.
 */
async function resolveValue(value, flag, stdin) {
  if (value === "-") {
    if (stdin.used) throw new CliError("invalid_arguments", "Standard input (-) can be used for one value only.", { option: flag });
    stdin.used = true;
    return decodeUtf8(await readStdin(), `${flag} (stdin)`);
  }
  if (value.startsWith("@@")) return value.slice(1);
  if (value.startsWith("@") && value.length > 1) {
    const file = value.slice(1);
    let bytes;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      if (err.code === "ENOENT") throw new CliError("not_found", `${flag}: no such file ${file}.`, { option: flag, path: file });
      if (err.code === "EISDIR") throw new CliError("invalid_arguments", `${flag}: ${file} is a directory.`, { option: flag, path: file });
      throw new CliError("invalid_arguments", `${flag}: cannot read ${file}: ${err.message}`, { option: flag, path: file });
    }
    return decodeUtf8(bytes, `${flag} (${file})`);
  }
  return value;
}

/**
 * Reads standard input to its end.
 * @returns {Promise<Buffer>}
 */
export async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * Decodes strict UTF-8 (a leading BOM is kept as U+FEFF, like the file tools do).
 * @throws CliError encoding_unsupported.
 */
export function decodeUtf8(bytes, what) {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new CliError("encoding_unsupported", `${what} is not valid UTF-8.`, { source: what });
  }
}
