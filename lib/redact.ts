/**
 * Secret redaction for what Agent Reach stores (arguments in the audit log, the JSONL log) and,
 * later, for what tools return. One table of credential formats; each match is replaced by a
 * marker `[REDACTED:<kind>:<length>]` that keeps the kind and the length of what was removed.
 *
 * Argument objects are also redacted by key: any member whose name says it holds a secret
 * (token, password, authorization, api_key, secret, cookie, …) is replaced whole.
 */

interface SecretPattern {
  kind: string;
  /** Global regex; when `group` is set only that capture group is masked. */
  re: RegExp;
  group?: number;
}

/** Known credential formats, most specific first. */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { kind: "private_key", re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g },
  { kind: "aws_access_key", re: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  { kind: "github_token", re: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g },
  { kind: "slack_token", re: /\bxox[abposr]-[A-Za-z0-9-]{10,250}\b/g },
  { kind: "anthropic_key", re: /\bsk-ant-[A-Za-z0-9_-]{20,}\b/g },
  { kind: "openai_key", re: /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b/g },
  { kind: "google_api_key", re: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: "stripe_key", re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { kind: "agent_reach_token", re: /\bar_(?:agent|rev)_[A-Za-z0-9_-]{20,}\b/g },
  { kind: "jwt", re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g },
  { kind: "bearer_token", re: /\b(?:Bearer|Token)\s+([A-Za-z0-9._~+/=-]{16,})/g, group: 1 },
  { kind: "url_password", re: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:([^\s@/]+)@/gi, group: 1 },
  {
    // env-style or YAML assignments (`DB_PASSWORD=…`, `api_key: "…"`) whose value is the whole
    // rest of the line and does not look like code (no brackets or parentheses), so source code
    // such as `password = form["password"]` stays readable.
    kind: "secret_assignment",
    re: /^[ \t]*(?:export[ \t]+)?["']?[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]*["']?[ \t]*[:=][ \t]*["']?([^\s"'#,;()[\]{}<>]{4,})["']?[ \t]*,?[ \t]*$/gim,
    group: 1,
  },
];

const SECRET_KEY_RE = /^(?:authorization|proxy-authorization|cookie|set-cookie|x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|passwd|private[_-]?key)$/i;

// On globalThis: secrets registered at start-up (instrumentation bundle) must be masked by every
// route bundle too.
const globalForSecrets = globalThis as unknown as { agentReachSecrets?: Set<string> };
const extraSecrets: Set<string> = (globalForSecrets.agentReachSecrets ??= new Set<string>());

/** Registers a literal secret of this server (e.g. its own tokens) to be masked wherever it appears. */
export function registerSecret(value: string): void {
  if (value.length >= 8) extraSecrets.add(value);
}

/** Masks every known credential format and registered secret in `text`. */
export function redactText(text: string): string {
  let out = text;
  for (const secret of extraSecrets) {
    if (out.includes(secret)) out = out.split(secret).join(marker("server_secret", secret.length));
  }
  for (const { kind, re, group } of SECRET_PATTERNS) {
    out = out.replace(re, (match: string, ...groups: unknown[]) => {
      if (match.startsWith("[REDACTED:")) return match;
      if (group === undefined) return marker(kind, match.length);
      const value = groups[group - 1];
      if (typeof value !== "string" || value.startsWith("[REDACTED")) return match;
      return match.replace(value, marker(kind, value.length));
    });
  }
  return out;
}

/**
 * Deep copy of `value` with secrets masked: members with secret-looking names are replaced
 * whole, strings pass through `redactText`. Non-JSON values are kept as they are.
 */
export function redactValue<T>(value: T): T {
  return redactInner(value, null) as T;
}

function redactInner(value: unknown, key: string | null): unknown {
  if (typeof value === "string") {
    return key !== null && SECRET_KEY_RE.test(key) ? marker("by_name", value.length) : redactText(value);
  }
  if (Array.isArray(value)) return value.map((v) => redactInner(v, null));
  if (value && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactInner(v, k);
    return out;
  }
  return value;
}

function marker(kind: string, length: number): string {
  return `[REDACTED:${kind}:${length}]`;
}
