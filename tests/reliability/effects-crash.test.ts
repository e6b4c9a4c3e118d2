import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";

/**
 * SIGKILL of the real server while it applies a large change set (a command that wrote 5,000
 * files): after a restart the workspace holds either all of the command's changes or none, and
 * the call's record says which (`changes.recovery`).
 */

const FILES = 5000;
const content = (i: number) => `file ${i}\n${"x".repeat(1000)}\n`;
let server: TestServer | null = null;

afterAll(async () => {
  await server?.stop();
});

describe("a gateway killed mid-apply", () => {
  it("finishes or rolls back the apply at restart, and the record says which", async () => {
    // The same host id across the restart: recovery finishes the applies this host left behind.
    const env = { AGENT_REACH_HOST_ID: `crash-${crypto.randomBytes(3).toString("hex")}` };
    server = await startTestServer({ env });
    const { workspace, dataDir, databaseUrl } = server;
    await sql(
      databaseUrl,
      `INSERT INTO "PolicyRule" (id, priority, tool, command, decision, note, enabled, source) VALUES ('test:python', 5, 'run_command', 'python3 *', 'allow', 'crash test', $1, 'operator')`,
      [true],
    );
    fs.writeFileSync(path.join(workspace, "existing.txt"), "before\n");
    const script = `import pathlib
p = pathlib.Path('out'); p.mkdir()
for i in range(${FILES}): (p / f'f{i:05d}.txt').write_text(f'file {i}\\n' + 'x' * 1000 + '\\n')
pathlib.Path('existing.txt').write_text('after\\n')`;
    fs.writeFileSync(path.join(workspace, "gen.py"), script);
    const request = server.call("run_command", { command: "python3 gen.py", timeout_ms: 120_000 }, { "x-agent-session": "crash" }).catch(() => null);

    // Wait for the journal to say "applying", then kill the whole server at once.
    let callId: string | null = null;
    let sawApplying = false;
    for (let i = 0; i < 2400 && !sawApplying; i++) {
      const rows = await sql<{ callId: string; status: string }>(databaseUrl, `SELECT "callId", status FROM "ChangeSet"`);
      if (rows[0]) callId = rows[0].callId;
      sawApplying = rows[0]?.status === "applying";
      if (!sawApplying) await new Promise((r) => setTimeout(r, 25));
    }
    expect(sawApplying).toBe(true);
    await new Promise((r) => setTimeout(r, 150));
    await server.kill();
    await request;
    const outDir = path.join(workspace, "out");
    const partial = fs.existsSync(outDir) ? fs.readdirSync(outDir).length : 0;
    console.log(`killed with ${partial} of ${FILES} files applied`);

    server = await startTestServer({ workspace, dataDir, databaseUrl, env });
    const [row] = await sql<{ status: string; resultJson: string }>(databaseUrl, `SELECT status, "resultJson" FROM "ToolCall" WHERE id = $1`, [callId]);
    const [set] = await sql<{ status: string; recovery: string }>(databaseUrl, `SELECT status, recovery FROM "ChangeSet" WHERE "callId" = $1`, [callId]);
    const result = JSON.parse(row.resultJson);
    const names = fs.existsSync(outDir) ? fs.readdirSync(outDir) : [];
    if (set.recovery === "rolled_forward") {
      expect(row.status).toBe("succeeded");
      expect(set.status).toBe("applied");
      expect(result.data.changes).toMatchObject({ status: "applied", recovery: "rolled_forward", created: FILES });
      expect(names).toHaveLength(FILES);
      for (const i of [0, 1234, FILES - 1]) expect(fs.readFileSync(path.join(outDir, `f${String(i).padStart(5, "0")}.txt`), "utf8")).toBe(content(i));
      expect(fs.readFileSync(path.join(workspace, "existing.txt"), "utf8")).toBe("after\n");
    } else {
      expect(set.recovery).toBe("rolled_back");
      expect(row.status).toBe("failed");
      expect(result.error.detail.changes).toMatchObject({ status: "discarded", recovery: "rolled_back" });
      expect(names).toHaveLength(0);
      expect(fs.readFileSync(path.join(workspace, "existing.txt"), "utf8")).toBe("before\n");
    }
    // No temp file of the interrupted apply is left behind, nor its capture.
    expect(names.filter((n) => n.endsWith(".agent-reach.tmp"))).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, "effects", callId!))).toBe(false);
    // The agent learns the outcome through get_call.
    const got = await server.call("get_call", { call_id: callId });
    expect(got.body.data.status).toBe(row.status);
  }, 1_500_000);
});
