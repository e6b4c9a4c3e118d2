import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";
import { allowTools, WRITE_TOOLS } from "@/tests/reliability/harness/common";

/**
 * What the next start does after a crash, made deterministic (the crash harness reaches these
 * states only by chance): calls left "received" or "running" are ended as "interrupted" (a write
 * that had saved its backup gets it linked), and orphaned temp files of our atomic writes are
 * removed while every other file stays.
 */

const env = { AGENT_REACH_HOST_ID: "restart-recovery" };
let first: TestServer;
let second: TestServer;
const ids: Record<string, string> = {};
const aged = new Date(Date.now() - 3_600_000);

beforeAll(async () => {
  first = await startTestServer({ env });
  await allowTools(first, WRITE_TOOLS);
  const ws = first.workspace;
  fs.writeFileSync(path.join(ws, "a.txt"), "old\n");
  const write = await first.call("write_file", { path: "a.txt", content: "new\n" });
  const read = await first.call("read_file", { path: "a.txt" });
  ids.write = write.body.call_id;
  ids.read = read.body.call_id;
  // The states a SIGKILL can leave: a write that saved its backup but never finished, a call
  // recorded but not yet decided, and the temp file of an interrupted atomic write.
  await sql(first.databaseUrl, `UPDATE "ToolCall" SET status = 'running', "backupId" = NULL, "shaBefore" = NULL, "resultJson" = NULL WHERE id = $1`, [ids.write]);
  await sql(first.databaseUrl, `UPDATE "ToolCall" SET status = 'received', "resultJson" = NULL WHERE id = $1`, [ids.read]);
  for (const name of [".0123456789abcdef.agent-reach.tmp", "sub/.fedcba9876543210.agent-reach.tmp", "keep.tmp", "sub/.0123456789abcdef.agent-reach.tmp.orig"]) {
    fs.mkdirSync(path.dirname(path.join(ws, name)), { recursive: true });
    fs.writeFileSync(path.join(ws, name), "partial");
    fs.utimesSync(path.join(ws, name), aged, aged);
  }
  await first.kill();
  second = await startTestServer({ workspace: ws, dataDir: first.dataDir, databaseUrl: first.databaseUrl, env });
});

afterAll(async () => {
  await second?.stop();
});

describe("the start after a crash", () => {
  it.each([
    ["a write that was running", "write", true],
    ["a call that was received, not yet decided", "read", false],
  ])("ends %s as interrupted", async (_label, key, started) => {
    const [row] = await sql<{ status: string; resultJson: string }>(second.databaseUrl, `SELECT status, "resultJson" FROM "ToolCall" WHERE id = $1`, [ids[key]]);
    expect(row.status).toBe("interrupted");
    expect(JSON.parse(row.resultJson).error.detail).toEqual({ reason: "interrupted", started });
  });

  it("links the backup an interrupted write had saved, with the old bytes' sha256", async () => {
    const [row] = await sql<{ backupId: string; shaBefore: string; pathResolved: string }>(
      second.databaseUrl,
      `SELECT "backupId", "shaBefore", "pathResolved" FROM "ToolCall" WHERE id = $1`,
      [ids.write],
    );
    const [backup] = await sql<{ id: string; blobSha: string }>(second.databaseUrl, `SELECT id, "blobSha" FROM "Backup" WHERE "callId" = $1`, [ids.write]);
    expect(row.backupId).toBe(backup.id);
    expect(row.shaBefore).toBe(backup.blobSha);
    expect(row.pathResolved).toBe(path.join(second.workspace, "a.txt"));
  });

  it("removes the orphaned temp files of atomic writes and nothing else", () => {
    const left = fs.readdirSync(second.workspace, { recursive: true }).map(String).sort();
    expect(left).toEqual(["a.txt", "keep.tmp", "sub", "sub/.0123456789abcdef.agent-reach.tmp.orig"]);
  });
});
