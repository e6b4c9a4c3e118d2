import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePreset, runApproving } from "@/tests/helpers/dashboard";
import { SAMPLES } from "@/tests/lib/redact-samples";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * Red team round 6, through the HTTP door under the default preset `balanced`:
 * - G6: while one command's change set is staged, a second command swaps one of its files for a
 *   link to `.env`; no backup (list_backups, the Backup table, restore_backup's diff) ever holds
 *   the secret, whichever way the two commands interleave (one change set at a time per
 *   workspace; before-bytes read without following links and checked against the recorded file).
 * - G8: write_file, edit_file and restore_backup answers pass the same redaction as read_file:
 *   every credential format and the server's own agent token are masked in their `diff`, on the
 *   added lines and on the removed ones (bytes the file had, or a backup's).
 */

let server: TestServer;
const SECRET = `RT6_WS_SECRET=${crypto.randomBytes(6).toString("hex")}`;

beforeAll(async () => {
  server = await startTestServer();
  await usePreset(server, "balanced");
}, 1_200_000);
afterAll(async () => {
  await server?.stop();
});

const ws = (rel: string) => path.join(server.workspace, rel);

/** Calls a tool as the agent; approves it as the reviewer when the policy asks. */
async function call(tool: string, args: unknown): Promise<any> {
  const res = await server.call(tool, args, { prefer: "wait=0" });
  if (res.status !== 202) return res.body;
  const decided = await server.reviewer("POST", `/api/approvals/${res.body.call_id}/approve`, {});
  expect(decided.status).toBe(200);
  return decided.body.result;
}

describe("G6: a file swapped for a link while another command's change set is staged", () => {
  it("no backup ever holds the link target's bytes, over several rounds", async () => {
    fs.writeFileSync(ws(".env"), `${SECRET}\n`);
    fs.mkdirSync(ws("r"), { recursive: true });
    const N = 1500;
    const secretSha = crypto.createHash("sha256").update(`${SECRET}\n`).digest("hex");
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < N; i++) {
        fs.rmSync(ws(`r/f${i}`), { force: true });
        fs.writeFileSync(ws(`r/f${i}`), "a\n");
      }
      // B swaps the last file for a link to .env a moment after A started rewriting every file;
      // the delay moves with the round so B's apply lands at different points of A's.
      const b = runApproving(server, `sleep ${0.4 + round * 0.3}; rm r/f${N - 1} && ln -s ../.env r/f${N - 1}`);
      await new Promise((r) => setTimeout(r, 200));
      const a = runApproving(server, `for i in $(seq 0 ${N - 1}); do echo b${round} > r/f$i; done`);
      const [ra, rb] = await Promise.all([a, b]);
      for (const r of [ra, rb]) if (!r.ok) expect(r.error?.name).toBe("conflict");
      const rows = await sql(server.databaseUrl, `SELECT id FROM "Backup" WHERE "blobSha" = $1`, [secretSha]);
      expect(rows).toEqual([]);
      const listed = await call("list_backups", { limit: 100 });
      expect(listed.ok).toBe(true);
      expect(JSON.stringify(listed.data)).not.toContain(secretSha);
      // Every backup of r/f* restores bytes the file had ("a" or an earlier round's "b"), never the secret.
      for (const item of listed.data.backups.filter((x: { path: string }) => x.path === `r/f${N - 1}`).slice(0, 3)) {
        fs.rmSync(ws(`r/f${N - 1}`), { force: true });
        fs.writeFileSync(ws(`r/f${N - 1}`), "x\n");
        const restored = await call("restore_backup", { backup_id: item.id });
        expect(JSON.stringify(restored)).not.toContain(SECRET);
      }
    }
    expect(fs.readFileSync(ws(".env"), "utf8")).toBe(`${SECRET}\n`);
  });
});

describe("G8: write answers are redacted like read answers", () => {
  const content = (agentToken: string) => [...SAMPLES.map(([, text]) => text), `agent ${agentToken}`, `pw ar_pw_${crypto.randomBytes(12).toString("hex")}`, "plain line"].join("\n") + "\n";
  const secrets = (text: string, agentToken: string) => [...SAMPLES.map(([, , s]) => s), agentToken, text.match(/ar_pw_[0-9a-f]+/)![0]];

  it("write_file's diff (added lines), a second write's diff (removed lines), edit_file's and restore_backup's", async () => {
    const text = content(server.agentToken);
    const hidden = secrets(text, server.agentToken);
    const first = await call("write_file", { path: "pw.txt", content: text });
    expect(first.ok).toBe(true);
    const second = await call("write_file", { path: "pw.txt", content: "replaced\n" });
    expect(second.ok).toBe(true);
    const edited = await call("write_file", { path: "pw.txt", content: text });
    expect(edited.ok).toBe(true);
    const edit = await call("edit_file", { path: "pw.txt", old_string: "plain line", new_string: `plain line ${server.agentToken}` });
    expect(edit.ok).toBe(true);
    const restore = await call("restore_backup", { backup_id: second.data.backup_id });
    expect(restore.ok).toBe(true);
    for (const env of [first, second, edited, edit, restore]) {
      expect(typeof env.data.diff).toBe("string");
      const json = JSON.stringify(env);
      for (const s of hidden) expect(json, s).not.toContain(s);
      expect(json).toContain("[REDACTED:");
    }
    // read_file masks the same file the same way (the reference the write answers now follow).
    const read = await call("read_file", { path: "pw.txt" });
    for (const s of hidden) expect(JSON.stringify(read)).not.toContain(s);
    // Ordinary text and the answer's own fields stay exact.
    expect(first.data.diff).toContain("+plain line");
    expect(first.data.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
