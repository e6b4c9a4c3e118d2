/**
 * Secret redaction, part of containment: what read_file, run_command, search_files, fetch_url
 * and the other reading tools return to the agent (lib/gateway/execute.ts), and everything the
 * audit log stores (lib/audit/calls.ts `storedJson`), passes through here.
 *
 * One table of credential formats (`SECRET_PATTERNS`, each with its own test in
 * tests/lib/redact.test.ts) plus the literal secrets this server registers at start (its own
 * tokens). Each secret is replaced by a marker `[REDACTED:<kind>:<length>]` that keeps the kind
 * and the length (UTF-16 code units) of what was removed, so a reader still sees that a value was
 * there, what it was and roughly how long. Redaction is idempotent: markers are never masked again.
 *
 * Argument objects are also redacted by member name: any member whose name says it holds a
 * secret (token, password, authorization, api_key, secret, cookie, …) is replaced whole.
 *
 * Why our own table: the maintained pattern sets on the registry (e.g. secretlint's rule preset)
 * are linters built around files and a config loader, not a function over a string, and adding a
 * dependency is outside this module's remit; the formats below are those the issue names plus
 * the common vendor token prefixes, each documented by its vendor.
 */

import crypto from "node:crypto";
import { redactEncoded, type Found } from "@/lib/redact/encoded";

/** The sentence tool descriptions carry about masking (lib/tools/*.ts), for a model. */
export const MASKED_OUTPUT_NOTE =
  "Values that look like credentials (cloud keys, private keys, tokens, passwords, connection strings) come back masked as [REDACTED:<kind>:<length>]; never copy a marker into edit_file old_string or write_file content.";

/** One credential format. */
export interface SecretPattern {
  /** Name shown in the marker. */
  kind: string;
  /**
   * Global regex. The secret is the first capture group that took part in the match (the rest of
   * the match is context that stays readable, e.g. the variable name); a regex without capture
   * groups masks the whole match. Context around the secret comes before it.
   */
  re: RegExp;
}

/**
 * Known credential formats, most specific first (a later pattern never re-masks a marker).
 * Every pattern runs in linear time on any text (tests/lib/redact.test.ts feeds each one long
 * adversarial runs): token patterns start only where a run of token characters starts
 * (lookbehind, not `\b`, which also holds after every `-` or `.` inside a run), and names in
 * front of a value are bounded.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // PEM private keys of every kind (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP … BLOCK), also inside JSON
  // strings with \n escapes; an unterminated block is masked to the end of the text.
  { kind: "private_key", re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g },
  // AWS access key ids (AKIA long-term, ASIA temporary, …); their secret keys are caught by name below.
  { kind: "aws_access_key", re: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  // Azure storage account keys and SAS signatures inside connection strings.
  { kind: "azure_storage_key", re: /\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})/g },
  { kind: "google_api_key", re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  { kind: "github_token", re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { kind: "gitlab_token", re: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g },
  { kind: "npm_token", re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: "pypi_token", re: /\bpypi-AgE[A-Za-z0-9_-]{50,}/g },
  { kind: "slack_token", re: /(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,250}/g },
  { kind: "slack_webhook", re: /\bhttps:\/\/hooks\.slack\.com\/services\/(T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]{16,})/g },
  { kind: "sendgrid_key", re: /(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}/g },
  { kind: "anthropic_key", re: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "openai_key", re: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "stripe_key", re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: "agent_reach_token", re: /(?<![A-Za-z0-9_-])ar_(?:agent|rev|ses|pw)_[A-Za-z0-9_-]{16,}/g },
  { kind: "jwt", re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: "bearer_token", re: /\b(?:Bearer|Token)\s+([A-Za-z0-9._~+/=-]{16,})/g },
  { kind: "basic_auth", re: /\bAuthorization:\s*Basic\s+([A-Za-z0-9+/]{8,}={0,2})/gi },
  // scheme://user:password@host (PostgreSQL, MySQL, MongoDB, Redis, AMQP, http …).
  { kind: "url_password", re: /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@]+:([^\s@/]+)@/gi },
  // Credentials in a URL's query string (JDBC `?user=u&password=p`, presigned URLs).
  { kind: "url_query_secret", re: /[?&](?:password|passwd|pwd|secret|client_secret|token|access_token|api_key|apikey|sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature)=([^&#\s"'<>]{4,})/gi },
  // npm/yarn registry credentials (.npmrc `//registry/:_authToken=…`).
  { kind: "npmrc_auth", re: /:_(?:authToken|auth|password)\s*=\s*([^\s"']{4,})/g },
  // .netrc `machine host login user password secret`.
  { kind: "netrc_password", re: /\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)/g },
  {
    // env-style or YAML assignments (`DB_PASSWORD=…`, `export API_KEY='…'`, `client_secret: …`,
    // `"token": "…",`) whose value is the whole rest of the line: quoted (may hold spaces), or
    // unquoted without brackets or parentheses, so code such as `password = form["password"]` or
    // `token: ${{ secrets.X }}` stays readable. The line may carry what tools put in front of it:
    // read_file's `%6d| `, `cat -n`'s number and tab, grep's `file:line:` (up to three of them,
    // e.g. read_file of saved grep output), then a diff's `+`/`-`.
    // The shell's PWD and OLDPWD are directories.
    kind: "secret_assignment",
    re: /^(?:[ \t]*\d+(?:\| ?|\t)|(?:[^\s:]+:)?\d+[:-]|[^\s:]+:){0,3}[+-]?(?![ \t]*(?:export[ \t]+)?(?:OLD)?PWD[ \t]*=)[ \t]*(?:export[ \t]+)?["']?[A-Za-z0-9_.-]{0,64}(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]{0,64}["']?[ \t]*[:=][ \t]*(?:"([^"\n]{4,})"|'([^'\n]{4,})'|([^\s"'#,;()[\]{}<>]{4,}))[ \t]*,?[ \t]*$/gim,
  },
  // The same names as members of JSON anywhere in a line (an API's compact JSON answer).
  {
    kind: "json_secret_member",
    re: /"[A-Za-z0-9_.-]{0,64}(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]{0,64}"\s*:\s*"((?:[^"\\\n]|\\.){4,})"/gi,
  },
  // `Password=…` in ADO.NET / ODBC connection strings (`;`-separated `key=value` pairs).
  { kind: "connection_string_password", re: /;\s*(?:Password|Pwd)\s*=\s*([^;"'\s]+)|(?:^|["'\s])(?:Password|Pwd)\s*=\s*([^;"'\s]+);/gim },
];

const SECRET_KEY_RE = /^(?:authorization|proxy-authorization|cookie|set-cookie|x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|passwd|private[_-]?key)$/i;

/** A marker this module wrote. */
const MARKER_RE = /^\[REDACTED:[a-z0-9_]+:\d+\]$/;

/**
 * The environment variables that hold this server's own secrets. They are read in every module
 * instance (Next.js loads this module once per route bundle), so masking never depends on which
 * bundle happened to register a value at start.
 */
export const SERVER_SECRET_ENV = ["AGENT_REACH_AGENT_TOKEN", "AGENT_REACH_REVIEWER_TOKEN", "AGENT_REACH_REVIEWER_PASSWORD"] as const;

/** Shortest literal secret that is masked (a shorter one would mask ordinary text). */
export const MIN_SERVER_SECRET_LENGTH = 8;

/**
 * Literal secrets of this server, shared by every module instance through `globalThis`, each
 * with the spellings it is masked in (see `secretSpellings`).
 */
interface ServerSecretStore {
  secrets: Set<string>;
  /** One case-insensitive alternation of every spelling, longest first; null when there is none. */
  re: RegExp | null;
  /** The environment values already taken in (re-read on each use: cheap, and a test may change them). */
  fromEnv: string;
}
const globalForRedact = globalThis as unknown as { agentReachServerSecrets?: ServerSecretStore };

function secretStore(): ServerSecretStore {
  const store = (globalForRedact.agentReachServerSecrets ??= { secrets: new Set(), re: null, fromEnv: "" });
  const fromEnv = SERVER_SECRET_ENV.map((k) => process.env[k] ?? "").join("\0");
  if (fromEnv !== store.fromEnv) {
    store.fromEnv = fromEnv;
    for (const key of SERVER_SECRET_ENV) addSecret(store, process.env[key]);
  }
  return store;
}

function addSecret(store: ServerSecretStore, value: string | undefined): void {
  if (!value || value.length < MIN_SERVER_SECRET_LENGTH || store.secrets.has(value)) return;
  store.secrets.add(value);
  const spellings = [...new Set([...store.secrets].flatMap(secretSpellings))].sort((a, b) => b.length - a.length);
  store.re = new RegExp(spellings.map(escapeRegExp).join("|"), "gi");
}

/**
 * Registers a literal secret of this server (a token it created, a preset credential) to be
 * masked wherever it appears, with kind `server_secret`, in every route bundle of this process.
 * The preset credentials in the environment (`SERVER_SECRET_ENV`) are always included without
 * registering. Values shorter than `MIN_SERVER_SECRET_LENGTH` are ignored.
 */
export function registerSecret(value: string): void {
  addSecret(secretStore(), value);
}

/**
 * The spellings a secret is masked in, matched case-insensitively: the value itself, its
 * percent-encoding, hex, and the part of its base64 / base64url encoding that depends only on the
 * secret at each of the three byte alignments (so `base64` of a file holding it is caught
 * wherever the secret starts). Other transformations (reversed, split with separators, encrypted)
 * are not recognised; the sandbox keeps the environment that holds them out of commands' reach.
 */
export function secretSpellings(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const out = new Set<string>([secret, encodeURIComponent(secret), bytes.toString("hex")]);
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString("base64");
    const core = b64.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6));
    if (core.length >= MIN_SERVER_SECRET_LENGTH) {
      out.add(core);
      out.add(core.replace(/\+/g, "-").replace(/\//g, "_"));
    }
  }
  return [...out];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Masks only this server's own secrets in `text` (see `secretSpellings`). Idempotent. */
export function redactServerSecrets(text: string): string {
  return maskServerSecrets(secretStore(), text);
}

/** `redactServerSecrets` with the store already at hand (one look-up per value, not per string). */
function maskServerSecrets(store: ServerSecretStore, text: string): string {
  return store.re ? text.replace(store.re, (m) => marker("server_secret", m.length)) : text;
}

/**
 * Deep copy of `value` with only this server's own secrets masked in every string (member names
 * included). This holds even where a policy rule relaxed masking of credential formats: the
 * gateway's own credentials never reach a tool's output.
 */
export function redactServerSecretsValue<T>(value: T): T {
  if (!secretStore().re) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactServerSecrets(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object" && !(v instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) out[redactServerSecrets(k)] = walk(inner);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * Masks every registered secret and every known credential format in `text`.
 * @returns the text with each secret replaced by `[REDACTED:<kind>:<length>]`; unchanged text
 *   when there is none. Idempotent.
 */
export function redactText(text: string): string {
  return redactTextWith(secretStore(), text);
}

/**
 * Texts found to hold no secret under the current server secrets: the same short texts (tool
 * names, paths, reasons, a file read twice) come back on every call, and a lookup is far cheaper
 * than the table's scans. A text up to `MEMO_SHORT_TEXT` characters is kept as itself (a Set
 * lookup costs less than hashing it); a longer one only as its digest (sha256), never the text.
 */
interface CleanMemo {
  re: RegExp | null;
  short: Set<string>;
  digests: Set<string>;
}
let cleanMemo: CleanMemo = { re: null, short: new Set(), digests: new Set() };
/** Texts longer than this (characters) are scanned every time. */
const MEMO_MAX_TEXT = 65_536;
/** Texts up to this long (characters) are remembered as themselves, longer ones as digests. */
const MEMO_SHORT_TEXT = 256;
/** Most entries kept in each set before it starts afresh. */
const MEMO_MAX_ENTRIES = 50_000;

function redactTextWith(store: ServerSecretStore, text: string): string {
  if (text.length === 0) return text;
  if (text.length > MEMO_MAX_TEXT) return scanText(store, text);
  if (cleanMemo.re !== store.re) cleanMemo = { re: store.re, short: new Set(), digests: new Set() };
  const short = text.length <= MEMO_SHORT_TEXT;
  const key = short ? text : crypto.createHash("sha256").update(text).digest("base64");
  const known = short ? cleanMemo.short : cleanMemo.digests;
  if (known.has(key)) return text;
  const out = scanText(store, text);
  if (out === text) {
    if (known.size >= MEMO_MAX_ENTRIES) known.clear();
    known.add(key);
  }
  return out;
}

function scanText(store: ServerSecretStore, text: string): string {
  let out = maskServerSecrets(store, text);
  // Secrets written as spaced hex, hex dump tables or wrapped base64 (lib/redact/encoded.ts):
  // decoded, and masked only where the decoded bytes hold a secret.
  out = redactEncoded(out, findInDecoded);
  for (const { kind, re } of SECRET_PATTERNS) {
    out = out.replace(re, (match: string, ...rest: unknown[]) => {
      const groups = rest.slice(0, -2); // the capture groups (the last two arguments are offset and input)
      if (groups.length === 0) return match.includes("[REDACTED:") ? match : marker(kind, match.length);
      const secret = groups.find((g): g is string => typeof g === "string");
      if (secret === undefined || secret.includes("[REDACTED:")) return match;
      const at = match.lastIndexOf(secret);
      return match.slice(0, at) + marker(kind, secret.length) + match.slice(at + secret.length);
    });
  }
  return maskDiffLines(out);
}

/** A unified diff's hunk header: the text holds lines of a file, each behind one marker character. */
const DIFF_HUNK = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/m;

/**
 * In a unified diff (a write's `diff`, a restore's, a change set's), every line of the file has
 * one character in front (`+`, `-` or a space), and the patterns that look at what comes before a
 * secret (the start of the line, or a character that cannot precede a token: `+mongodb+srv://…`,
 * `-glpat-…`, `+     3| DB_PASSWORD=…`) would not see the file's own line. The patterns run once
 * more over a view of the text in which each line's first character is a line break: same length,
 * same offsets, every file line a line of its own. What they find there is masked in the text.
 */
function maskDiffLines(text: string): string {
  if (!DIFF_HUNK.test(text)) return text;
  const view = text.replace(/^[+\- ]/gm, "\n");
  const found: Found[] = [];
  for (const { kind, re } of patternsWithIndices()) {
    for (const m of view.matchAll(re)) {
      const groups = m.indices?.slice(1).find((g) => g !== undefined);
      const [start, end] = groups ?? [m.index ?? 0, (m.index ?? 0) + m[0].length];
      if (end > start && !text.slice(start, end).includes("[REDACTED:")) found.push({ start, end, kind });
    }
  }
  if (found.length === 0) return text;
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  for (const f of found) {
    if (f.start < at) continue; // overlaps a span already masked
    out += text.slice(at, f.start) + marker(f.kind, f.end - f.start);
    at = f.end;
  }
  return out + text.slice(at);
}

/** SECRET_PATTERNS with match indices (`d`), for finding where in decoded bytes or a diff's lines a secret lies. */
let indexedPatterns: Array<{ kind: string; re: RegExp }> | null = null;

function patternsWithIndices(): Array<{ kind: string; re: RegExp }> {
  indexedPatterns ??= SECRET_PATTERNS.map(({ kind, re }) => ({ kind, re: new RegExp(re.source, re.flags.includes("d") ? re.flags : `${re.flags}d`) }));
  return indexedPatterns;
}

/**
 * The secrets in decoded bytes (a latin1 string, one character per byte): this server's own
 * secrets (their UTF-8 bytes, exactly) and every credential format of the table. Bytes without a
 * run of 8 printable ASCII characters hold neither, and are not searched.
 */
function findInDecoded(decoded: string): Found[] {
  if (!/[\x20-\x7e]{8,}/.test(decoded)) return [];
  const found: Found[] = [];
  for (const secret of secretStore().secrets) {
    const bytes = Buffer.from(secret, "utf8").toString("latin1");
    for (let i = decoded.indexOf(bytes); i !== -1; i = decoded.indexOf(bytes, i + 1)) found.push({ start: i, end: i + bytes.length, kind: "server_secret" });
  }
  for (const { kind, re } of patternsWithIndices()) {
    for (const m of decoded.matchAll(re)) {
      const groups = m.indices?.slice(1).find((g) => g !== undefined);
      const [start, end] = groups ?? [m.index ?? 0, (m.index ?? 0) + m[0].length];
      if (end > start) found.push({ start, end, kind });
    }
  }
  return found;
}

/**
 * Deep copy of `value` with secrets masked: members with secret-looking names are replaced
 * whole (kind `by_name`), strings pass through `redactText`. Non-JSON values are kept as they
 * are. Idempotent.
 */
export function redactValue<T>(value: T): T {
  return redactInner(secretStore(), value, null) as T;
}

/**
 * The one redaction every tool's answer passes on its way to the agent (lib/gateway/execute.ts),
 * whatever the tool and whether it succeeded or failed: known credential formats and this server's
 * own secrets are masked in every string (`redactValue`). A write's answer is no exception: its
 * `diff` shows the lines the file had before (restore_backup's, a backup's bytes), not only what
 * the agent sent. A policy rule's `redact: false` (`relaxed`) lets credential formats through; the
 * server's own secrets are masked even then (`redactServerSecretsValue`).
 * @returns a deep copy with the secrets masked (the value itself when there is nothing to mask)
 */
export function redactToolAnswer<T>(value: T, relaxed: boolean): T {
  return relaxed ? redactServerSecretsValue(value) : redactValue(value);
}

/** The kinds of the markers in `text` with how often each occurs, e.g. `{aws_access_key: 1}`. */
export function markerKinds(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/\[REDACTED:([a-z0-9_]+):\d+\]/g)) counts[m[1]] = (counts[m[1]] ?? 0) + 1;
  return counts;
}

function redactInner(store: ServerSecretStore, value: unknown, key: string | null): unknown {
  if (typeof value === "string") {
    if (key !== null && SECRET_KEY_RE.test(key)) return MARKER_RE.test(value) ? value : marker("by_name", value.length);
    return redactTextWith(store, value);
  }
  if (Array.isArray(value)) return value.map((v) => redactInner(store, v, null));
  if (value && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    // Member names come from data too (transform's CSV headers): the server's own secrets are masked there as well.
    for (const [k, v] of Object.entries(value)) out[maskServerSecrets(store, k)] = redactInner(store, v, k);
    return out;
  }
  return value;
}

function marker(kind: string, length: number): string {
  return `[REDACTED:${kind}:${length}]`;
}
