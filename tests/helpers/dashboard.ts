import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * The dashboard's own forms, driven over HTTP the way the browser submits them: a Next.js server
 * action call (POST to the page with the `Next-Action` header and the form as multipart), signed
 * in as the reviewer with the session cookie the login form sets. Saving a rule or a preset this
 * way takes the path a reviewer's click takes, so the server drops its own rule and preset caches
 * and the next call sees the change at once (no waiting out a cache).
 */
export interface Dashboard {
  server: Pick<TestServer, "url" | "reviewerPassword" | "databaseUrl">;
  /**
   * Submits a dashboard form: the server action `name` exported by `file` (e.g.
   * "app/(dashboard)/policy/actions.ts", "createRuleAction") with `fields`.
   * @returns the action's return value (an ActionState `{ ok, message }` for most forms)
   * @throws when the action cannot be called or answers with an HTTP error
   */
  submit(file: string, name: string, fields: Record<string, string>): Promise<any>;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

interface ActionEntry {
  id: string;
  /** The page that carries the action, e.g. "/policy". */
  page: string;
}

/** The built app's server actions by "file#name" (the build's server-reference manifest). */
function actionTable(): Map<string, ActionEntry> {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, ".next/server/server-reference-manifest.json"), "utf8"));
  const table = new Map<string, ActionEntry>();
  for (const [id, entry] of Object.entries<any>(manifest.node)) {
    const worker = Object.keys(entry.workers)[0];
    const page = `/${worker.replace(/^app\//, "").replace(/\/page$/, "").replace(/\([^)]*\)\/?/g, "")}`.replace(/\/$/, "") || "/";
    table.set(`${entry.filename}#${entry.exportedName}`, { id, page });
  }
  return table;
}

/**
 * React's own encoder of server action arguments (the one the browser runs, from Next's compiled
 * copy), so the request is exactly what a form submission sends.
 */
const { encodeReply } = createRequire(import.meta.url)("next/dist/compiled/react-server-dom-webpack/client.node.js") as {
  encodeReply(value: unknown): Promise<string | FormData>;
};

/** Calls one server action with `(null, form)`, as `useActionState` forms do. */
async function callAction(server: Pick<TestServer, "url">, entry: ActionEntry, fields: Record<string, string>, cookie?: string): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return fetch(`${server.url}${entry.page}`, {
    method: "POST",
    redirect: "manual",
    headers: { "next-action": entry.id, accept: "text/x-component", origin: server.url, ...(cookie && { cookie }) },
    body: await encodeReply([null, form]),
  });
}

/** The value of the action's result row ("1:{…}") of a React Flight answer, or the raw text. */
function actionResult(text: string): any {
  const row = /^1:(.*)$/m.exec(text);
  if (!row) return text;
  try {
    return JSON.parse(row[1]);
  } catch {
    return row[1];
  }
}

/** Signs in to `server`'s dashboard as its reviewer (the login form) and returns a form driver. */
export async function signInDashboard(server: Pick<TestServer, "url" | "reviewerPassword" | "databaseUrl">): Promise<Dashboard> {
  const actions = actionTable();
  const entry = (file: string, name: string) => {
    const e = actions.get(`${file}#${name}`);
    if (!e) throw new Error(`no server action ${name} in ${file} (is the build current?)`);
    return e;
  };
  const login = await callAction(server, entry("app/login/actions.ts", "signInAction"), { login: "admin", password: server.reviewerPassword, next: "/" });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  if (!cookie) throw new Error(`sign-in failed: HTTP ${login.status} ${await login.text()}`);
  return {
    server,
    async submit(file, name, fields) {
      const res = await callAction(server, entry(file, name), fields, cookie);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${text.slice(0, 500)}`);
      return actionResult(text);
    },
  };
}

/** A rule as the policy page's form takes it (empty strings for fields left blank). */
export interface RuleForm {
  tool: string;
  pathGlob?: string;
  command?: string;
  decision: "allow" | "ask" | "deny";
  note?: string;
  /** The rule's options as JSON text (limits, network, redact), or "". */
  options?: string;
  enabled?: boolean;
}

/**
 * Adds an operator rule through the policy page's form (at the end of the order).
 * @param rule its `note` must be unique: the new rule's id is looked up by it
 * @returns the new rule's id
 */
export async function addRule(dash: Dashboard, rule: RuleForm & { note: string }): Promise<string> {
  const res = await dash.submit("app/(dashboard)/policy/actions.ts", "createRuleAction", {
    tool: rule.tool,
    pathGlob: rule.pathGlob ?? "",
    command: rule.command ?? "",
    decision: rule.decision,
    note: rule.note,
    options: rule.options ?? "",
    ...(rule.enabled !== false && { enabled: "on" }),
  });
  if (res?.ok !== true) throw new Error(`createRuleAction: ${JSON.stringify(res)}`);
  const rows = await sql<{ id: string }>(dash.server.databaseUrl, `SELECT id FROM "PolicyRule" WHERE note = $1`, [rule.note]);
  if (rows.length !== 1) throw new Error(`addRule: ${rows.length} rules noted ${JSON.stringify(rule.note)}`);
  return rows[0].id;
}

/** Enables or disables a rule through the policy page's switch. */
export async function setRuleEnabled(dash: Dashboard, id: string, enabled: boolean): Promise<void> {
  const res = await dash.submit("app/(dashboard)/policy/actions.ts", "toggleRuleAction", { id, enabled: String(enabled) });
  if (res?.ok !== true) throw new Error(`toggleRuleAction ${id}: ${JSON.stringify(res)}`);
}

/**
 * The policy page's "try it" box: the policy's verdict for a sample call under the workspace's
 * preset, from the rules the server holds now (nothing runs).
 */
export async function tryPolicy(dash: Dashboard, sample: { tool: string; path?: string; command?: string; url?: string }): Promise<any> {
  const res = await dash.submit("app/(dashboard)/policy/actions.ts", "tryPolicyAction", {
    tool: sample.tool,
    path: sample.path ?? "",
    command: sample.command ?? "",
    url: sample.url ?? "",
  });
  if (res?.ok !== true) throw new Error(`tryPolicyAction: ${JSON.stringify(res)}`);
  return res.verdict;
}

/**
 * For a rule only the database can hold (one the form cannot express): asks the "try it" box until
 * the server's verdict for `sample` satisfies `seen`, the signal that the server now decides
 * with the changed rule. Gives up after `timeoutMs`.
 */
export async function untilPolicySees(dash: Dashboard, sample: Parameters<typeof tryPolicy>[1], seen: (verdict: any) => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const verdict = await tryPolicy(dash, sample);
    if (seen(verdict)) return;
    if (Date.now() > deadline) throw new Error(`the server's policy never showed the change: ${JSON.stringify(verdict)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sets the workspace's supervision preset through the policy page's form. */
export async function setPreset(dash: Dashboard, preset: string): Promise<void> {
  const res = await dash.submit("app/(dashboard)/policy/actions.ts", "setWorkspacePresetAction", { preset });
  if (res?.ok !== true) throw new Error(`setWorkspacePresetAction: ${JSON.stringify(res)}`);
}

const signedIn = new WeakMap<object, Promise<Dashboard>>();

/**
 * Sets `server`'s workspace preset as a reviewer does (the policy page's form, signed in once per
 * server), so it applies to the next call at once: the server drops its cached preset itself.
 */
export async function usePreset(server: Pick<TestServer, "url" | "reviewerPassword" | "databaseUrl">, preset: string): Promise<void> {
  let dash = signedIn.get(server);
  if (!dash) {
    dash = signInDashboard(server);
    signedIn.set(server, dash);
  }
  await setPreset(await dash, preset);
}

/**
 * Runs a command over HTTP (`Prefer: wait=0`), approving it as the reviewer when the policy asks.
 * @returns the command's envelope, and whether it asked
 */
export async function runApproving(server: TestServer, command: string): Promise<{ ok: boolean; data: any; error?: any; asked: boolean }> {
  const first = await server.call("run_command", { command, timeout_ms: 30_000 }, { prefer: "wait=0" });
  if (first.body.error?.name !== "approval_pending") return { ...first.body, asked: false };
  const res = await server.reviewer("POST", `/api/approvals/${first.body.call_id}/approve`, {});
  if (res.status !== 200) throw new Error(`approving ${first.body.call_id}: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...res.body.result, asked: true };
}
