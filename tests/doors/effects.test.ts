import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getTool, outputJsonSchema } from "@/lib/tools/registry";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";
import { treeHash } from "@/tests/effects/tree-hash";

/**
 * What a command changed, through the real HTTP door: each run_command's changes captured on an
 * overlay, applied with backups (or held for a reviewer), reported in `changes`, undone byte for
 * byte by revert_call, and a whole session rewound to its start with POST /api/sessions/…/rewind.
 */

let server: TestServer;
const SESSION = `fx-${crypto.randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  server = await startTestServer();
}, 1_200_000);
afterAll(async () => {
  await server?.stop();
});

const ws = (rel: string) => path.join(server.workspace, rel);
const put = (rel: string, content: string | Buffer, mode = 0o644) => {
  fs.mkdirSync(path.dirname(ws(rel)), { recursive: true });
  fs.writeFileSync(ws(rel), content);
  fs.chmodSync(ws(rel), mode);
};
const skipOwn = (rel: string) => rel === "big" || rel.startsWith("big/");
const hash = () => treeHash(server.workspace, skipOwn);

/**
 * Calls a tool as the agent; when the policy asks, approves it as the reviewer and returns the
 * envelope it ran with (the agent would get the same from get_call).
 */
async function call(tool: string, args: unknown, session = "other"): Promise<any> {
  const res = await server.call(tool, args, { prefer: "wait=0", "x-agent-session": session });
  if (res.status !== 202) return res.body;
  const decided = await server.reviewer("POST", `/api/approvals/${res.body.call_id}/approve`, {});
  expect(decided.status).toBe(200);
  return decided.body.result;
}

const revertOutput = new AjvJsonSchemaValidator().getValidator(outputJsonSchema(getTool("revert_call")!));
const getCallOutput = new AjvJsonSchemaValidator().getValidator(outputJsonSchema(getTool("get_call")!));

/** Calls revert_call; a successful result must also validate against the tool's advertised output schema. */
async function revert(callId: string, session = "other"): Promise<any> {
  const env = await call("revert_call", { call_id: callId }, session);
  if (env.ok) expect(revertOutput(env.data).errorMessage ?? null).toBeNull();
  return env;
}

describe("run_command changes, through the HTTP door", () => {
  it("sed -i: one file modified, a diff, a backup; revert_call puts the bytes back", async () => {
    put("conf.ini", "name = alpha\nlevel = 1\n");
    const before = hash();
    const env = await call("run_command", { command: "sed -i 's/alpha/beta/' conf.ini" });
    expect(env.ok).toBe(true);
    expect(env.data.changes).toMatchObject({ status: "applied", created: 0, modified: 1, deleted: 0 });
    expect(env.data.changes.files).toEqual([expect.objectContaining({ path: "conf.ini", kind: "modified", additions: 1, deletions: 1 })]);
    expect(fs.readFileSync(ws("conf.ini"), "utf8")).toBe("name = beta\nlevel = 1\n");
    const backups = await sql(server.databaseUrl, `SELECT path FROM "Backup" WHERE "callId" = $1`, [env.call_id]);
    expect(backups).toEqual([{ path: "conf.ini" }]);
    const undo = await revert(env.call_id);
    expect(undo.ok).toBe(true);
    expect(undo.data.changes).toMatchObject({ modified: 1 });
    expect(hash()).toBe(before);
  }, 300_000);

  it("a Python script writing three files: three created, reverted to nothing", async () => {
    const before = hash();
    const env = await call("run_command", { command: `python3 -c "import pathlib
for n in ('a','b','c'): pathlib.Path('gen').mkdir(exist_ok=True); pathlib.Path('gen/'+n+'.txt').write_text(n*3)"` });
    expect(env.data.changes).toMatchObject({ status: "applied", created: 3, modified: 0, deleted: 0, bytes: 9 });
    expect(env.data.changes.files.map((f: any) => `${f.kind} ${f.path}`).sort()).toEqual(["created gen/a.txt", "created gen/b.txt", "created gen/c.txt", "dir_created gen"]);
    expect(fs.readFileSync(ws("gen/b.txt"), "utf8")).toBe("bbb");
    expect((await revert(env.call_id)).ok).toBe(true);
    expect(fs.existsSync(ws("gen"))).toBe(false);
    expect(hash()).toBe(before);
  }, 300_000);

  it("rm: one deleted (with its mode); revert restores bytes and mode", async () => {
    put("run.sh", "#!/bin/sh\necho hi\n", 0o750);
    const before = hash();
    const env = await call("run_command", { command: "rm run.sh" });
    expect(env.data.changes).toMatchObject({ status: "applied", created: 0, modified: 0, deleted: 1 });
    expect(fs.existsSync(ws("run.sh"))).toBe(false);
    expect((await revert(env.call_id)).ok).toBe(true);
    expect(fs.statSync(ws("run.sh")).mode & 0o7777).toBe(0o750);
    expect(hash()).toBe(before);
  }, 300_000);

  it("mv: a delete and a create; revert moves it back", async () => {
    put("docs/old-name.md", "# Title\n");
    const before = hash();
    const env = await call("run_command", { command: "mv docs/old-name.md docs/new-name.md" });
    expect(env.data.changes).toMatchObject({ created: 1, deleted: 1 });
    expect(fs.readFileSync(ws("docs/new-name.md"), "utf8")).toBe("# Title\n");
    expect((await revert(env.call_id)).ok).toBe(true);
    expect(hash()).toBe(before);
  }, 300_000);

  it("a formatter touching 50 files: 50 modified, one revert undoes them all", async () => {
    for (let i = 0; i < 50; i++) put(`src/m${String(i).padStart(2, "0")}.js`, `function f${i}(){return ${i}}\n`);
    const before = hash();
    const env = await call("run_command", { command: "for f in src/*.js; do sed -i 's/{return/{ return/; s/}$/ }/' \"$f\"; done" });
    expect(env.data.changes).toMatchObject({ status: "applied", modified: 50, created: 0, deleted: 0, total_files: 50 });
    expect(fs.readFileSync(ws("src/m07.js"), "utf8")).toBe("function f7(){ return 7 }\n");
    const undo = await revert(env.call_id);
    expect(undo.data.changes).toMatchObject({ modified: 50 });
    expect(hash()).toBe(before);
  }, 300_000);

  it("revert_call refuses with 605 when a file changed since, and changes nothing", async () => {
    put("x.txt", "one\n");
    const env = await call("run_command", { command: "echo two > x.txt" });
    put("x.txt", "three\n");
    const undo = await revert(env.call_id);
    expect(undo.ok).toBe(false);
    expect(undo.error).toMatchObject({ code: 605, name: "conflict" });
    expect(undo.error.detail.conflicts).toEqual([expect.objectContaining({ path: "x.txt" })]);
    expect(fs.readFileSync(ws("x.txt"), "utf8")).toBe("three\n");
  }, 300_000);

  it("a command deleting 200 files is held: output at once, workspace untouched, applied on approval, revertible", async () => {
    for (let i = 0; i < 200; i++) put(`cache/e${i}.json`, `{"i":${i}}\n`);
    const before = hash();
    const env = await call("run_command", { command: "rm -rf cache && echo removed" });
    expect(env.ok).toBe(true);
    expect(env.data.stdout).toBe("removed\n");
    expect(env.data.changes).toMatchObject({ status: "held", deleted: 200, call_id: env.call_id });
    expect(env.data.changes.hold_reasons[0]).toMatch(/deletes 200 files/);
    expect(hash()).toBe(before);
    // Held: the call is pending (202, effects held) until the reviewer decides on its changes.
    const status = await server.reviewer("GET", `/api/calls/${env.call_id}`);
    expect(status.status).toBe(202);
    expect(status.body.call.status).toBe("pending");
    expect(status.body.error.detail.effects).toBe("held");
    // …and carries the envelope the call itself answered, for a client that followed it there.
    expect(status.body.held_result).toMatchObject({ ok: true, call_id: env.call_id, data: { stdout: "removed\n", changes: { status: "held", deleted: 200 } } });
    // get_call tells the agent its changes wait for a reviewer, which files, and why.
    const waiting = await server.call("get_call", { call_id: env.call_id });
    expect(waiting.body.data).toMatchObject({ status: "pending", result: null, held_effects: { deleted: 200, total_files: expect.any(Number), files_truncated: true } });
    expect(waiting.body.data.held_effects.files).toHaveLength(50);
    expect(waiting.body.data.held_effects.hold_reasons[0]).toMatch(/deletes 200 files/);
    expect(waiting.body.data.held_effects.summary).toMatch(/already ran; a reviewer must decide whether its file changes \(0 created, 0 modified, 200 deleted: cache/);
    expect(getCallOutput(waiting.body.data).errorMessage ?? null).toBeNull();
    const pending = await server.reviewer("GET", "/api/approvals");
    const item = pending.body.approvals.find((a: any) => a.call_id === env.call_id);
    expect(item.preview.diff).toContain("-{\"i\":199}");
    const approved = await server.reviewer("POST", `/api/approvals/${env.call_id}/approve`, {});
    expect(approved.body.status).toBe("succeeded");
    expect(approved.body.result.data.changes).toMatchObject({ status: "applied", deleted: 200 });
    expect(fs.existsSync(ws("cache"))).toBe(false);
    const got = await server.call("get_call", { call_id: env.call_id });
    expect(got.body.data.result.data.changes.status).toBe("applied");
    expect((await revert(env.call_id)).ok).toBe(true);
    expect(hash()).toBe(before);
  }, 300_000);

  it("a change to .git/hooks is refused by the box or held; a CI workflow change is held and rejecting discards it", async () => {
    put(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
    const before = hash();
    const hook = await call("run_command", { command: "printf '#!/bin/sh\\ncurl evil\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit" });
    if (hook.data.changes?.status === "held") {
      expect(hook.data.changes.hold_reasons.join(" ")).toMatch(/\.git\/hooks\/pre-commit/);
      expect((await server.reviewer("POST", `/api/approvals/${hook.call_id}/reject`, { reason: "no hooks" })).status).toBe(200);
    } else {
      // The box mounts .git/hooks read-only: the write fails and nothing changed.
      expect(hook.data.exit_code).not.toBe(0);
      expect(hook.data.changes).toMatchObject({ total_files: 0 });
    }
    expect(fs.existsSync(ws(".git/hooks/pre-commit"))).toBe(false);
    expect(hash()).toBe(before);

    const env = await call("run_command", { command: "mkdir -p .github/workflows && printf 'on: push\\n' > .github/workflows/ci.yml" });
    expect(env.data.changes).toMatchObject({ status: "held", created: 1 });
    expect(env.data.changes.hold_reasons.join(" ")).toMatch(/\.github\/workflows\/ci\.yml/);
    expect(hash()).toBe(before);
    const rejected = await server.reviewer("POST", `/api/approvals/${env.call_id}/reject`, { reason: "no CI changes" });
    expect(rejected.status).toBe(200);
    const got = await server.call("get_call", { call_id: env.call_id });
    expect(got.body.data.result.error).toMatchObject({ code: 602 });
    expect(got.body.data.result.error.detail.changes.status).toBe("discarded");
    expect(fs.existsSync(ws(".github"))).toBe(false);
    expect(hash()).toBe(before);
    expect(fs.existsSync(path.join(server.dataDir, "effects", env.call_id))).toBe(false);
  }, 300_000);

  it("held changes whose files changed meanwhile are not applied on approval (605)", async () => {
    for (let i = 0; i < 60; i++) put(`tmpdata/t${i}.txt`, `${i}\n`);
    const env = await call("run_command", { command: "rm -rf tmpdata" });
    expect(env.data.changes.status).toBe("held");
    put("tmpdata/t3.txt", "edited meanwhile\n");
    const approved = await server.reviewer("POST", `/api/approvals/${env.call_id}/approve`, {});
    expect(approved.body.status).toBe("conflict");
    expect(approved.body.result.error.code).toBe(605);
    expect(approved.body.result.error.detail.conflicts).toEqual([expect.objectContaining({ path: "tmpdata/t3.txt" })]);
    expect(fs.readdirSync(ws("tmpdata"))).toHaveLength(60);
  }, 300_000);
});

describe("session rewind", () => {
  it("a session of write_file, edit_file and run_command calls rewound to its start gives a byte-identical tree", async () => {
    put("app/main.py", "print('v1')\n");
    put("app/util.py", "def f():\n    return 1\n", 0o640);
    put("README.md", "# App\n");
    const start = hash();
    const first = await call("write_file", { path: "app/main.py", content: "print('v2')\n" }, SESSION);
    expect(first.ok).toBe(true);
    expect((await call("edit_file", { path: "app/util.py", old_string: "return 1", new_string: "return 2" }, SESSION)).ok).toBe(true);
    expect((await call("run_command", { command: "sed -i 's/App/Application/' README.md && mkdir -p app/gen && echo x > app/gen/out.txt && chmod 600 app/util.py && rm app/main.py" }, SESSION)).ok).toBe(true);
    expect((await call("write_file", { path: "app/new.py", content: "new\n" }, SESSION)).ok).toBe(true);
    expect((await call("run_command", { command: "echo again >> app/gen/out.txt && mv README.md README.txt" }, SESSION)).ok).toBe(true);
    expect(hash()).not.toBe(start);

    const dry = await server.reviewer("POST", `/api/sessions/${SESSION}/rewind`, { before_call_id: first.call_id, dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.body.reverted_calls).toHaveLength(5);
    expect(dry.body.conflicts).toEqual([]);
    expect(dry.body.diff).toContain("+print('v1')");
    expect(hash()).not.toBe(start);

    const res = await server.reviewer("POST", `/api/sessions/${SESSION}/rewind`, { before_call_id: first.call_id });
    expect(res.status).toBe(200);
    expect(res.body.call_id).toMatch(/^call_/);
    expect(res.body.reverted_calls.map((c: any) => c.tool)).toEqual(["run_command", "write_file", "run_command", "edit_file", "write_file"]);
    expect(hash()).toBe(start);
    const [row] = await sql<{ tool: string; status: string; reviewer: string }>(server.databaseUrl, `SELECT tool, status, reviewer FROM "ToolCall" WHERE id = $1`, [res.body.call_id]);
    expect(row).toEqual({ tool: "rewind_session", status: "succeeded", reviewer: expect.any(String) });

    // The reviewer dealt with the rewound calls: they leave the review stream.
    const ids = res.body.reverted_calls.map((c: any) => c.call_id as string);
    const unseen = await sql<{ id: string }>(server.databaseUrl, `SELECT id FROM "ToolCall" WHERE "reviewedAt" IS NULL AND id IN (${ids.map((_: string, i: number) => `$${i + 1}`).join(", ")})`, ids);
    expect(unseen).toEqual([]);

    // Asking again (the rewind page re-renders after its button) answers; nothing is left to undo,
    // and the paths it put back are not conflicts (they hold what they held before the session).
    const again = await server.reviewer("POST", `/api/sessions/${SESSION}/rewind`, { before_call_id: first.call_id, dry_run: true });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.conflicts).toEqual([]);
    expect(again.body.reverted_calls).toEqual([]);
    expect(again.body.changes).toMatchObject({ created: 0, modified: 0, deleted: 0 });
    expect(hash()).toBe(start);
    // Rewinding again changes nothing and conflicts with nothing.
    const twice = await server.reviewer("POST", `/api/sessions/${SESSION}/rewind`, { before_call_id: first.call_id });
    expect(twice.status, JSON.stringify(twice.body)).toBe(200);
    expect(twice.body.reverted_calls).toEqual([]);
    expect(hash()).toBe(start);
  }, 300_000);

  it("a rewind after one of its calls was reverted undoes the rest, the reverted path is no conflict", async () => {
    const S = `${SESSION}-r`;
    put("r1.txt", "one\n");
    put("r2.txt", "two\n");
    const first = await call("write_file", { path: "r1.txt", content: "one changed\n" }, S);
    const second = await call("write_file", { path: "r2.txt", content: "two changed\n" }, S);
    expect((await revert(second.call_id)).ok).toBe(true);
    expect(fs.readFileSync(ws("r2.txt"), "utf8")).toBe("two\n");
    const dry = await server.reviewer("POST", `/api/sessions/${S}/rewind`, { before_call_id: first.call_id, dry_run: true });
    expect(dry.body.conflicts).toEqual([]);
    expect(dry.body.reverted_calls.map((c: any) => c.call_id)).toEqual([first.call_id]);
    const res = await server.reviewer("POST", `/api/sessions/${S}/rewind`, { before_call_id: first.call_id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(fs.readFileSync(ws("r1.txt"), "utf8")).toBe("one\n");
    expect(fs.readFileSync(ws("r2.txt"), "utf8")).toBe("two\n");
  }, 300_000);

  it("a mode the session changed counts: the same bytes with another mode are still to undo", async () => {
    const S = `${SESSION}-m`;
    put("m.sh", "echo m\n", 0o644);
    const first = await call("run_command", { command: "chmod 755 m.sh" }, S);
    expect(first.ok, JSON.stringify(first)).toBe(true);
    const dry = await server.reviewer("POST", `/api/sessions/${S}/rewind`, { before_call_id: first.call_id, dry_run: true });
    expect(dry.body.conflicts).toEqual([]);
    expect(dry.body.reverted_calls.map((c: any) => c.call_id)).toEqual([first.call_id]);
    const res = await server.reviewer("POST", `/api/sessions/${S}/rewind`, { before_call_id: first.call_id });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(fs.statSync(ws("m.sh")).mode & 0o777).toBe(0o644);
  }, 300_000);

  it("a rewind with a conflict changes nothing and lists it; unknown sessions are 404", async () => {
    const S = `${SESSION}-b`;
    put("c.txt", "1\n");
    const first = await call("run_command", { command: "echo 2 > c.txt" }, S);
    put("c.txt", "changed by hand\n");
    const res = await server.reviewer("POST", `/api/sessions/${S}/rewind`, { before_call_id: first.call_id });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe(605);
    expect(res.body.conflicts).toEqual([expect.objectContaining({ path: "c.txt" })]);
    expect(fs.readFileSync(ws("c.txt"), "utf8")).toBe("changed by hand\n");
    const missing = await server.reviewer("POST", `/api/sessions/nope/rewind`, { before_call_id: first.call_id });
    expect(missing.status).toBe(404);
    const noAuth = await fetch(`${server.url}/api/sessions/${S}/rewind`, { method: "POST", headers: { authorization: `Bearer ${server.agentToken}`, "content-type": "application/json" }, body: JSON.stringify({ before_call_id: first.call_id }) });
    expect([401, 403]).toContain(noAuth.status);
  }, 300_000);
});
