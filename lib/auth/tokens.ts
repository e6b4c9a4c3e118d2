import { db, dbProvider } from "@/lib/db";
import { pgReaderPool } from "@/lib/db/pg-connection";
import { sqliteConnection } from "@/lib/db/sqlite-connection";
import { newId, newSecret, sha256Hex } from "@/lib/ids";
import { registerSecret } from "@/lib/redact";
import { hashPassword, verifyPassword } from "@/lib/auth/passwords";
import { endCallsOfRevokedAgent } from "@/lib/approvals/revocation";

/**
 * Credentials. Agent tokens (`ar_agent_…`) let an agent call tools; reviewer credentials
 * (`ar_rev_…` API tokens and browser session cookies) let a person decide approvals. Only
 * sha256 hashes of tokens are stored; an agent token can never act as a reviewer.
 */

export interface AgentIdentity {
  id: string;
  name: string;
  /** The one workspace this token may reach, or null for any workspace the server serves. */
  workspaceId: string | null;
}

export interface ReviewerIdentity {
  id: string;
  login: string;
  /** How the request authenticated; "session" requests need a CSRF token for mutations. */
  via: "api_token" | "session";
  /** CSRF token of the session (only for via = "session"). */
  csrfToken: string | null;
}

/** What a preset credential from the environment must look like to be accepted. */
const PRESET_RULES = [
  { key: "AGENT_REACH_AGENT_TOKEN", re: /^ar_agent_[A-Za-z0-9_-]{20,200}$/, what: "an agent token: \"ar_agent_\" followed by at least 20 letters, digits, \"_\" or \"-\"" },
  { key: "AGENT_REACH_REVIEWER_TOKEN", re: /^ar_rev_[A-Za-z0-9_-]{20,200}$/, what: "a reviewer API token: \"ar_rev_\" followed by at least 20 letters, digits, \"_\" or \"-\"" },
  { key: "AGENT_REACH_REVIEWER_PASSWORD", re: /^[^\s](?:.{6,198})[^\s]$/su, what: "a password of 8 to 200 characters, not starting or ending with a space" },
] as const;

/**
 * Checks the preset credentials in `env` before anything is stored: a token without its
 * `ar_agent_` / `ar_rev_` prefix would never authenticate (the doors tell the kinds apart by
 * prefix), and a value too short could not be masked in tool output.
 * @throws Error naming each variable that is malformed and what it must look like.
 */
export function checkPresetCredentials(env: Record<string, string | undefined>): void {
  const problems: string[] = [];
  for (const { key, re, what } of PRESET_RULES) {
    const value = env[key];
    if (value && !re.test(value)) problems.push(`${key} is not ${what}`);
  }
  if (problems.length > 0) {
    throw new Error(`Refusing to start: ${problems.join("; ")}. Fix or unset the variable (the server then creates and prints a credential once).`);
  }
}

/** Extracts the token of an `Authorization: Bearer <token>` header (RFC 6750), or null. */
export function bearerToken(header: string | null | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m ? m[1] : null;
}

/** Creates an agent and its token. The token is returned once and never stored in clear. */
export async function createAgentToken(name: string, token = newSecret("ar_agent")): Promise<{ agent: AgentIdentity; token: string }> {
  const agent = await db().agent.create({
    data: { id: newId("agt"), name, tokenHash: sha256Hex(token), tokenPrefix: token.slice(0, 14) },
  });
  registerSecret(token);
  return { agent: { id: agent.id, name: agent.name, workspaceId: agent.workspaceId }, token };
}

/**
 * Makes sure an agent token exists. With `presetToken` (AGENT_REACH_AGENT_TOKEN), that token is
 * registered if new. Otherwise, when no usable agent exists, one is created.
 * @returns the new token when one was created (to print once), else null.
 */
export async function ensureAgentToken(presetToken: string | undefined): Promise<string | null> {
  if (presetToken) {
    registerSecret(presetToken);
    const existing = await db().agent.findUnique({ where: { tokenHash: sha256Hex(presetToken) } });
    if (!existing) await createAgentToken("default agent (preset)", presetToken);
    return null;
  }
  const count = await db().agent.count({ where: { revokedAt: null } });
  if (count > 0) return null;
  const { token } = await createAgentToken("default agent");
  return token;
}

/**
 * The agent owning `token`, or null when unknown or revoked. Read from the database on every
 * request (no cache: a revoked token stops working at once, on every instance); on SQLite through
 * a prepared statement of the process's own connection, since this runs before every tool call.
 */
export async function authenticateAgent(token: string | null): Promise<AgentIdentity | null> {
  if (!token || !token.startsWith("ar_agent_")) return null;
  const agent = await agentByTokenHash(sha256Hex(token));
  if (!agent || agent.revokedAt) return null;
  // "last used" for the tokens page, written at most once a minute per token.
  if (!agent.lastUsedAt || Date.now() - agent.lastUsedAt.getTime() > 60_000) {
    await db().agent.update({ where: { id: agent.id }, data: { lastUsedAt: new Date() } });
  }
  return { id: agent.id, name: agent.name, workspaceId: agent.workspaceId };
}

/**
 * Revokes an agent token: later calls with it are unauthorized, and its calls that wait for a
 * reviewer or were approved but have not started end "rejected" (602, reason "token revoked";
 * lib/approvals/revocation.ts).
 * @returns the ids of the calls it ended.
 */
export async function revokeAgent(agentId: string): Promise<string[]> {
  await db().agent.update({ where: { id: agentId }, data: { revokedAt: new Date() } });
  return endCallsOfRevokedAgent(agentId);
}

const DEFAULT_LOGIN = "admin";

/**
 * Makes sure a reviewer can sign in. AGENT_REACH_REVIEWER_PASSWORD sets (or resets) the password
 * of the `admin` reviewer; AGENT_REACH_REVIEWER_TOKEN registers a reviewer API token. On first
 * start without a preset password a random one is created.
 * @returns the generated password when one was created (to print once), else null.
 */
export async function ensureReviewer(presetPassword: string | undefined, presetToken: string | undefined): Promise<string | null> {
  let generated: string | null = null;
  let reviewer = await db().reviewer.findUnique({ where: { login: DEFAULT_LOGIN } });
  if (presetPassword) {
    const passwordHash = await hashPassword(presetPassword);
    reviewer = reviewer
      ? await db().reviewer.update({ where: { id: reviewer.id }, data: { passwordHash } })
      : await db().reviewer.create({ data: { id: newId("rev"), login: DEFAULT_LOGIN, passwordHash } });
  } else if (!reviewer) {
    // The `ar_pw_` prefix lets lib/redact recognise the password in any output, in every
    // process, without storing it anywhere in clear.
    generated = newSecret("ar_pw").slice(0, "ar_pw_".length + 24);
    reviewer = await db().reviewer.create({ data: { id: newId("rev"), login: DEFAULT_LOGIN, passwordHash: await hashPassword(generated) } });
  }
  if (presetToken) {
    registerSecret(presetToken);
    const secretHash = sha256Hex(presetToken);
    const existing = await db().reviewerCredential.findUnique({ where: { secretHash } });
    if (!existing) {
      await db().reviewerCredential.create({
        data: { id: newId("rcr"), reviewerId: reviewer.id, kind: "api_token", secretHash, name: "preset" },
      });
    }
  }
  return generated;
}

export const SESSION_COOKIE = "ar_session";

/** Sign-in throttle: after this many wrong passwords for one login within the window, refuse until they age out. */
const SIGN_IN_MAX_FAILURES = 5;
const SIGN_IN_WINDOW_MS = 60_000;
const globalForSignIn = globalThis as unknown as { agentReachSignInFailures?: Map<string, number[]> };
function failedSignIns(): Map<string, number[]> {
  globalForSignIn.agentReachSignInFailures ??= new Map();
  return globalForSignIn.agentReachSignInFailures;
}
const SESSION_TTL_MS = 12 * 3600 * 1000;

/**
 * Signs a reviewer in with login and password. Five wrong passwords for a login within a minute
 * throttle it: further attempts answer "throttled" until the oldest failure is a minute old.
 * @returns a new session secret (for the cookie) and its CSRF token, null on bad credentials, or "throttled".
 */
export async function signIn(login: string, password: string): Promise<{ session: string; csrfToken: string; expiresAt: Date } | null | "throttled"> {
  const failures = failedSignIns();
  const now = Date.now();
  const recent = (failures.get(login) ?? []).filter((t) => now - t < SIGN_IN_WINDOW_MS);
  if (recent.length >= SIGN_IN_MAX_FAILURES) return "throttled";
  const reviewer = await db().reviewer.findUnique({ where: { login } });
  if (!reviewer || !(await verifyPassword(password, reviewer.passwordHash))) {
    failures.set(login, [...recent, now]);
    return null;
  }
  failures.delete(login);
  const session = newSecret("ar_ses");
  const csrfToken = newSecret("csrf");
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await db().reviewerCredential.create({
    data: { id: newId("rcr"), reviewerId: reviewer.id, kind: "session", secretHash: sha256Hex(session), csrfToken, expiresAt },
  });
  return { session, csrfToken, expiresAt };
}

/** Ends a browser session. */
export async function signOut(session: string): Promise<void> {
  await db().reviewerCredential.updateMany({ where: { secretHash: sha256Hex(session) }, data: { revokedAt: new Date() } });
}

/**
 * Resolves a reviewer from a bearer API token or a session cookie value.
 * @returns the reviewer, or null when neither is valid (unknown, revoked or expired).
 */
export async function authenticateReviewer(bearer: string | null, sessionCookie: string | null): Promise<ReviewerIdentity | null> {
  const secret = bearer ?? sessionCookie;
  if (!secret) return null;
  const kind = bearer ? "api_token" : "session";
  const cred = await db().reviewerCredential.findUnique({ where: { secretHash: sha256Hex(secret) } });
  if (!cred || cred.kind !== kind || cred.revokedAt || (cred.expiresAt && cred.expiresAt < new Date())) return null;
  const reviewer = await db().reviewer.findUnique({ where: { id: cred.reviewerId } });
  if (!reviewer) return null;
  return { id: reviewer.id, login: reviewer.login, via: kind, csrfToken: cred.csrfToken };
}

/** The agent row of a token hash (the columns authentication needs), or null. */
async function agentByTokenHash(tokenHash: string): Promise<{ id: string; name: string; workspaceId: string | null; revokedAt: Date | null; lastUsedAt: Date | null } | null> {
  if (dbProvider() !== "sqlite") {
    // The columns are timestamps without a zone holding UTC (as Prisma writes them): read as epoch ms,
    // so the driver's local-time parsing of such columns never applies.
    const { rows } = await pgReaderPool().query<{ id: string; name: string; workspaceId: string | null; revokedMs: number | null; lastUsedMs: number | null }>(
      `SELECT "id", "name", "workspaceId", (EXTRACT(EPOCH FROM "revokedAt") * 1000)::float8 AS "revokedMs", (EXTRACT(EPOCH FROM "lastUsedAt") * 1000)::float8 AS "lastUsedMs" FROM "Agent" WHERE "tokenHash" = $1`,
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    const at = (ms: number | null) => (ms === null ? null : new Date(ms));
    return { id: row.id, name: row.name, workspaceId: row.workspaceId, revokedAt: at(row.revokedMs), lastUsedAt: at(row.lastUsedMs) };
  }
  const row = sqliteConnection().statement(`SELECT "id", "name", "workspaceId", "revokedAt", "lastUsedAt" FROM "Agent" WHERE "tokenHash" = ?`).get(tokenHash) as
    | { id: string; name: string; workspaceId: string | null; revokedAt: string | number | null; lastUsedAt: string | number | null }
    | undefined;
  if (!row) return null;
  const time = (v: string | number | null) => (v === null ? null : new Date(v));
  return { id: row.id, name: row.name, workspaceId: row.workspaceId, revokedAt: time(row.revokedAt), lastUsedAt: time(row.lastUsedAt) };
}
