import { spawn } from "node:child_process";
import crypto from "node:crypto";
import { inertConfigKey, type ConfigEntry } from "@/lib/policy/git-repo";
import { redactText } from "@/lib/redact";

/**
 * Sanitized copies of git configuration files, for the sandbox (lib/exec/sandbox.ts):
 * - a repository's own `config` (and `config.worktree`, a submodule's config, a file it
 *   includes) is shown in the box without its credentials: userinfo is stripped from every URL
 *   (values and subsection names such as `url.<base>.insteadOf` or `http.<url>.extraHeader`, with
 *   or without a scheme: `user:password@proxy:3128`), and credential keys are removed
 *   (`credential.*`, `http.extraHeader`, names holding token, pass, pwd, secret, cookie, auth,
 *   credential or ending in key, such as `sendemail.smtpPass`, `imap.pass`, `deploy.key`; but not
 *   `user.signingKey`, which names a key, public or in a keyring outside the box), as is any
 *   entry whose value still looks like a credential to the output redactor (lib/redact.ts: a
 *   `ghp_…` token under any key). Everything else stays, so git works as before (remotes,
 *   branches, core settings);
 * - the box HOME's global configuration (`~/.gitconfig`), carried from one command to the next,
 *   keeps only keys known to be inert (lib/policy/git-repo.ts `inertConfigKey`: user.name,
 *   user.email, init.defaultBranch, pull.rebase, …), so nothing one command sets there
 *   (core.fsmonitor, core.hooksPath, aliases, pagers, filters, includes) runs in a later one.
 *
 * The file is read by git itself (`git config --file - --no-includes --null --list`: comments,
 * continuation lines, quoting, escapes and case are git's own), written back in git's syntax, and
 * the result parsed again: unless it reads as exactly the entries meant, the answer is null and the
 * caller masks the file whole (git then sees an empty configuration: fail closed). Bytes are kept
 * as they are (latin1 round trip), so a value that is not UTF-8 survives unchanged.
 */

/** What a sanitizer made of one file. */
export interface SanitizedConfig {
  /** The sanitized file's bytes (latin1 string: one character per byte). */
  text: string;
  /** Keys removed or changed, lower case, deduplicated (for the record; never values). */
  changed: string[];
  /** The files it includes (`include.path`, `includeIf.<condition>.path` values, as written). */
  includes: string[];
}

/** Largest configuration file sanitized (bytes); a larger one is masked whole. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The entries of a configuration file's bytes as git reads them (includes not followed), or null
 * when git refuses it. Keys and values are latin1 strings (one character per byte).
 */
export function parseConfigBytes(bytes: Buffer): Promise<ConfigEntry[] | null> {
  return new Promise((resolve) => {
    const child = spawn("git", ["config", "--file", "-", "--no-includes", "--null", "--list"], {
      cwd: "/",
      stdio: ["pipe", "pipe", "ignore"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent", LC_ALL: "C", GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CEILING_DIRECTORIES: "/" } as unknown as NodeJS.ProcessEnv,
      timeout: 5000,
    });
    const out: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stdin.on("error", () => {});
    child.stdin.end(bytes);
    child.on("error", () => resolve(null));
    child.on("close", (code) => {
      if (code !== 0) return resolve(null);
      const text = Buffer.concat(out).toString("latin1");
      resolve(
        text
          .split("\0")
          .filter((e) => e !== "")
          .map((e) => {
            const nl = e.indexOf("\n");
            return nl === -1 ? { key: e, value: null } : { key: e.slice(0, nl), value: e.slice(nl + 1) };
          }),
      );
    });
  });
}

/** URL parameters that carry credentials. */
const TOKEN_PARAM = /([?&])(?:access_token|private_token|token|auth|password|passwd|api_key|apikey|key|sig|signature)=[^&#\s"]*&?/gi;
/**
 * Variable names (the part after the last dot) that hold credentials: `smtpPass`, `imap.pass`,
 * `password`, `*pwd`, tokens, secrets, cookies, auth, credentials, and names ending in `key`
 * (`deploy.key`, `http.sslKey`, `apiKey`) other than `signingKey` (see KEPT_KEY_NAME).
 */
const CREDENTIAL_NAME = /extraheader|token|pass|pwd|secret|cookie|auth|credential|apikey|api-key|privatekey|sslkey|key(?:s|id)?$/i;
/** Names ending in `key` that are not secrets: `user.signingKey` is a key id or a public key (git needs it to sign). */
const KEPT_KEY_NAME = /^signingkey$/i;
/** Values that carry a credential whatever their key. */
const CREDENTIAL_VALUE = /authorization\s*:|\bbearer\s+\S|\bbasic\s+[a-z0-9+/=]{8,}/i;

/**
 * `value` with the credentials of every URL in it removed: `scheme://user:password@host` loses
 * its userinfo (for ssh URLs, `ssh://user:password@host` keeps `user@`, the login name, which is
 * not a secret and which ssh needs), and URL parameters named like tokens are dropped.
 */
export function stripUrlCredentials(value: string): string {
  let v = value;
  for (let i = 0; i < 16; i++) {
    const next = v.replace(/(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}):\/\/([^/?#@\s]*)@/gi, (_m, scheme: string, userinfo: string) => {
      if (/ssh/i.test(scheme)) {
        const user = userinfo.split(":")[0];
        return userinfo.includes(":") ? `${scheme}://${user}@` : `${scheme}://${userinfo}\u0000`;
      }
      return `${scheme}://`;
    });
    if (next === v) break;
    v = next;
  }
  v = v.replace(/\u0000/g, "@");
  // Userinfo with a password and no scheme (`user:password@proxy:3128`, which git takes as a
  // proxy URL): removed whole. `user@host` alone (an email address, an scp-like `git@host:o/r`)
  // names no secret and stays.
  // (Bounded runs: a long value of delimiters cannot make this quadratic beyond 256 steps a start.)
  if (v.includes("@")) v = v.replace(/(^|[\s"'=,;<(])(?!mailto:)([^\s/@:"'=,;<(]{0,256}):([^\s/@]{0,256})@(?=[^\s@])/gi, (_m, lead: string) => lead);
  return v.replace(TOKEN_PARAM, (_m, sep: string) => sep).replace(/[?&]$/, "");
}

/** Token formats by their prefix, also shorter than the output redactor requires. */
const TOKEN_PREFIX = /(?<![A-Za-z0-9_-])(?:gh[pousr]_|github_pat_|glpat-|glptt-|xox[abposr]-|npm_|pypi-|sk-|sk_live_|rk_live_|hf_|AKIA|ASIA)[A-Za-z0-9_-]{16,}/;
/**
 * A whole value that is one opaque run of 24 or more token characters mixing upper, lower case and
 * digits (no `/` or `.`: ref names and paths such as `refs/heads/Release2024Candidate` stay).
 */
const OPAQUE_TOKEN = /^(?=[^a-z]*[a-z])(?=[^A-Z]*[A-Z])(?=\D*\d)[A-Za-z0-9_\-+=]{24,}$/;

/**
 * Whether `text` still holds something that looks like a credential: what the output redactor
 * masks (lib/redact.ts `redactText`: known token formats, private keys, `password=…`
 * assignments), a token named by its prefix (`ghp_…`, `glpat-…`, also shorter than the real
 * format), or (with `opaque`) a whole value that is one opaque mixed-case token. Subsection names
 * (branch and remote names) are checked without `opaque`.
 */
export function looksLikeCredential(text: string, opaque = true): boolean {
  if (text === "") return false;
  return TOKEN_PREFIX.test(text) || (opaque && OPAQUE_TOKEN.test(text.trim())) || redactText(text) !== text;
}

/** Splits a key as git does: section (before the first dot), subsection (between), name (after the last dot). */
function splitKey(key: string): { section: string; sub: string | null; name: string } {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  return { section: key.slice(0, first), sub: first === last ? null : key.slice(first + 1, last), name: key.slice(last + 1) };
}

/** Whether an entry carries a credential (removed whole). */
export function isCredentialEntry(entry: ConfigEntry): boolean {
  const { section, name } = splitKey(entry.key);
  if (section.toLowerCase() === "credential") return true;
  if (CREDENTIAL_NAME.test(name) && !KEPT_KEY_NAME.test(name)) return true;
  return entry.value !== null && CREDENTIAL_VALUE.test(entry.value);
}

/**
 * The entries written in git's syntax: one `[section "subsection"]` header per run of entries,
 * every value quoted with git's escapes. Null when an entry cannot be written (a malformed key).
 */
export function serializeConfig(entries: readonly ConfigEntry[]): string | null {
  const lines: string[] = [];
  let header: string | null = null;
  for (const e of entries) {
    const { section, sub, name } = splitKey(e.key);
    if (!/^[a-z0-9][a-z0-9.-]*$/i.test(section) || !/^[a-z][a-z0-9-]*$/i.test(name)) return null;
    if (sub !== null && /[\n\0]/.test(sub)) return null;
    const h = sub === null ? `[${section}]` : `[${section} "${sub.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"]`;
    if (h !== header) {
      lines.push(h);
      header = h;
    }
    if (e.value === null) lines.push(`\t${name}`);
    else lines.push(`\t${name} = "${e.value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t").replace(/\x08/g, "\\b")}"`);
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

function sameEntries(a: readonly ConfigEntry[], b: readonly ConfigEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.key === b[i].key && e.value === b[i].value);
}

/** Parsed and sanitized results by the file's content hash (configuration files change rarely). */
const cache: Map<string, SanitizedConfig | null> = ((globalThis as { __agentReachSanitizedGitConfig?: Map<string, SanitizedConfig | null> }).__agentReachSanitizedGitConfig ??= new Map());

async function sanitize(bytes: Buffer, mode: "repository" | "global"): Promise<SanitizedConfig | null> {
  if (bytes.length > MAX_CONFIG_BYTES) return null;
  const cacheKey = `${mode}\0${crypto.createHash("sha256").update(bytes).digest("hex")}`;
  if (cache.has(cacheKey)) return cache.get(cacheKey)!;
  const entries = await parseConfigBytes(bytes);
  let result: SanitizedConfig | null = null;
  if (entries !== null) {
    const changed = new Set<string>();
    const kept: ConfigEntry[] = [];
    for (const e of entries) {
      if (isCredentialEntry(e) || (mode === "global" && !inertConfigKey(e.key))) {
        changed.add(e.key.toLowerCase());
        continue;
      }
      const { section, sub, name } = splitKey(e.key);
      const cleanSub = sub === null ? null : stripUrlCredentials(sub);
      const cleanValue = e.value === null ? null : stripUrlCredentials(e.value);
      if ((cleanValue !== null && looksLikeCredential(cleanValue)) || (cleanSub !== null && looksLikeCredential(cleanSub, false))) {
        changed.add(e.key.toLowerCase());
        continue;
      }
      if (cleanSub !== sub || cleanValue !== e.value) changed.add(e.key.toLowerCase());
      kept.push({ key: cleanSub === null ? `${section}.${name}` : `${section}.${cleanSub}.${name}`, value: cleanValue });
    }
    const text = serializeConfig(kept);
    // Only what git reads back exactly as meant is shown; anything else is masked whole.
    const check = text === null ? null : await parseConfigBytes(Buffer.from(text, "latin1"));
    const includes = kept.filter((e) => /^include(if\..*)?\.path$/i.test(e.key) && e.value).map((e) => e.value!);
    if (text !== null && check !== null && sameEntries(check, kept)) result = { text, changed: [...changed], includes };
  }
  if (cache.size > 500) cache.clear();
  cache.set(cacheKey, result);
  return result;
}

/**
 * A repository's configuration file without its credentials (see the file comment).
 * @param bytes the file as on disk
 * @returns the sanitized file, or null when it cannot be sanitized safely (too large, or git
 *   cannot read it, or the rewrite does not read back the same): the caller masks it whole
 */
export function sanitizeRepositoryConfig(bytes: Buffer): Promise<SanitizedConfig | null> {
  return sanitize(bytes, "repository");
}

/**
 * A global configuration file (the box HOME's `~/.gitconfig`) reduced to inert keys, without
 * credentials. Null as for `sanitizeRepositoryConfig` (the caller then starts from nothing).
 */
export function sanitizeGlobalConfig(bytes: Buffer): Promise<SanitizedConfig | null> {
  return sanitize(bytes, "global");
}

/** Largest legacy remote file sanitized (bytes); a larger one is masked whole. */
export const MAX_LEGACY_REMOTE_BYTES = 64 * 1024;

/**
 * A legacy remote file without its credentials: `.git/remotes/<name>` (`URL: …`, `Push: …`,
 * `Pull: …` lines) or `.git/branches/<name>` (one `URL#branch` line), which git still reads as
 * remotes. Userinfo is stripped from every URL as in a configuration value, and a line that still
 * looks like a credential (lib/redact.ts) is dropped.
 * @param bytes the file as on disk
 * @returns the sanitized text (latin1) and whether anything changed, or null when the file is too
 *   large to check (the caller masks it whole)
 */
export function sanitizeLegacyRemote(bytes: Buffer): { text: string; changed: boolean } | null {
  if (bytes.length > MAX_LEGACY_REMOTE_BYTES) return null;
  const text = bytes.toString("latin1");
  const lines = text.split("\n").flatMap((line) => {
    const clean = stripUrlCredentials(line);
    // (`URL: `, `Push: `, `Pull: ` in front of the value, in a remotes file)
    return looksLikeCredential(clean) || looksLikeCredential(clean.replace(/^[A-Za-z]+:\s*/, "")) ? [] : [clean];
  });
  const out = lines.join("\n");
  return { text: out, changed: out !== text };
}
