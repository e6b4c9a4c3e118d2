import { exitStatusForCode } from "./errors.mjs";

/**
 * What the CLI prints: the success envelope on stdout, the error envelope on stderr,
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
    if ("exit_code" in data) writeText(process.stderr, commandOutcomeLine(data));
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

/**
 * One line on how a command ended, printed to stderr after its output in `--format text`, e.g.
 * `[command] exit_code=2 timed_out=false limit=- signal=- duration_ms=14` (`-` for none), with
 * `truncated=true` when its output was cut, and `changes=<status>` when it changed files or its
 * changes did not simply apply (`applied`, `held`, …); a held change set adds a second line
 * saying nothing was applied yet, and why it waits.
 * @param {any} data run_command's data.
 * @returns {string}
 */
export function commandOutcomeLine(data) {
  const field = (v) => (v === null || v === undefined ? "-" : String(v));
  const parts = [
    `exit_code=${field(data.exit_code)}`,
    `timed_out=${data.timed_out === true}`,
    `limit=${field(data.limit)}`,
    `signal=${field(data.signal)}`,
    ...(data.duration_ms !== undefined ? [`duration_ms=${data.duration_ms}`] : []),
    ...(data.truncated === true ? ["truncated=true"] : []),
    // Its file changes, when it made any or they did not simply apply (held, reverted, …).
    ...(data.changes && typeof data.changes.status === "string" && (data.changes.status !== "applied" || Number(data.changes.total_files) > 0)
      ? [`changes=${data.changes.status}`]
      : []),
  ];
  const line = `[command] ${parts.join(" ")}`;
  if (data.changes?.status !== "held") return line;
  const reasons = Array.isArray(data.changes.hold_reasons) ? data.changes.hold_reasons.join("; ") : "";
  return `${line}\n[changes] held for a reviewer, not applied to the workspace yet${reasons ? `: ${reasons}` : ""}`;
}

/** Signal numbers (Linux) for `128 + n`, the shell's convention for a process a signal ended. */
const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGXCPU: 24, SIGXFSZ: 25 };

/**
 * The exit status `--exit-code` gives for a command's result, as a shell would report it: the
 * command's own exit code; 124 when it timed out (as timeout(1)); 128 + the signal's number when
 * a signal or a limit ended it (137 for SIGKILL). Null when `data` is not a command's result.
 * @param {any} data a tool's data.
 * @returns {number | null}
 */
export function commandExitStatus(data) {
  if (data === null || typeof data !== "object" || !("exit_code" in data)) return null;
  if (data.timed_out === true) return 124;
  if (typeof data.exit_code === "number") return data.exit_code;
  if (typeof data.signal === "string") return 128 + (SIGNAL_NUMBERS[data.signal] ?? 9);
  return 1;
}

/** `error 201 path_outside_workspace: …` plus the detail, and how to follow a 601. */
function renderErrorText(envelope) {
  const { code, name, message, detail } = envelope.error;
  const lines = [`error ${code} ${name}: ${message}`];
  if (detail && Object.keys(detail).length > 0) lines.push(`detail: ${JSON.stringify(detail)}`);
  if (name === "approval_pending" && envelope.call_id) lines.push(`follow it with: agent-reach wait ${envelope.call_id}`);
  return `${lines.join("\n")}\n`;
}
