import { exitStatusForCode } from "./errors.mjs";

/**
 * What the CLI prints (seed 002): the success envelope on stdout, the error envelope on stderr,
 * always UTF-8, one JSON document per line in `--format json`; readable text in `--format text`.
 */

/**
 * Prints an envelope and returns the exit status it maps to.
 * @param {{ok: boolean, call_id?: string | null, data?: any, error?: any}} envelope
 * @param {"json" | "text"} format
 * @returns {number} 0 for success, else the status of the error's code class.
 */
export function emitEnvelope(envelope, format) {
  if (envelope.ok) {
    if (format === "text") writeText(process.stdout, renderText(envelope.data));
    else process.stdout.write(`${JSON.stringify(envelope)}\n`);
    return 0;
  }
  if (format === "text") process.stderr.write(renderErrorText(envelope));
  else process.stderr.write(`${JSON.stringify(envelope)}\n`);
  return exitStatusForCode(envelope.error.code);
}

function writeText(stream, text) {
  if (text !== "") stream.write(text.endsWith("\n") ? text : `${text}\n`);
}

/**
 * A tool result as text for a person: the main text field when there is one (file content,
 * converted output, command output, diff), one line per entry for lists, else `key: value` lines.
 * A command's stderr goes to stderr.
 * @param {any} data the envelope's data.
 * @returns {string}
 */
export function renderText(data) {
  if (data === null || typeof data !== "object") return String(data);
  if (typeof data.content === "string") return data.content;
  if (typeof data.output === "string") return data.output;
  if (typeof data.stdout === "string" || typeof data.stderr === "string") {
    writeText(process.stderr, data.stderr ?? "");
    return data.stdout ?? "";
  }
  if (typeof data.diff === "string" && data.diff !== "") return data.diff;
  if (Array.isArray(data.entries)) return data.entries.map((e) => `${e.path ?? e.name}${e.type === "directory" ? "/" : ""}`).join("\n");
  if (Array.isArray(data.matches)) return data.matches.map((m) => (m.line ? `${m.path}:${m.line}: ${m.text ?? ""}` : m.path)).join("\n");
  if (Array.isArray(data.backups)) {
    return data.backups.map((b) => [b.id, b.path, `${b.size_bytes ?? b.size ?? "?"} bytes`, b.created_at].join("  ")).join("\n");
  }
  return Object.entries(data)
    .map(([k, v]) => `${k}: ${v !== null && typeof v === "object" ? JSON.stringify(v) : v}`)
    .join("\n");
}

/** `error 201 path_outside_workspace: …` plus the detail, and how to follow a 601. */
function renderErrorText(envelope) {
  const { code, name, message, detail } = envelope.error;
  const lines = [`error ${code} ${name}: ${message}`];
  if (detail && Object.keys(detail).length > 0) lines.push(`detail: ${JSON.stringify(detail)}`);
  if (name === "approval_pending" && envelope.call_id) lines.push(`follow it with: agent-reach wait ${envelope.call_id}`);
  return `${lines.join("\n")}\n`;
}
