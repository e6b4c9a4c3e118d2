import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

/**
 * A SQLite database locked by another process: the server keeps answering other requests while
 * a tool call waits for the lock (the event loop is not frozen for the busy timeout), the call
 * fails closed with 503 `unavailable` once its wait bound passes, works as soon as the lock is
 * gone, and GET /api/audit/verify still verifies the chain after it all.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  fs.writeFileSync(path.join(server.workspace, "small.txt"), "hello\n");
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

describe("a locked SQLite database", () => {
  it("serves health while a call waits for the lock; the call answers 503 unavailable; later calls work", async () => {
    const lock = new Database(server.databaseUrl.slice("file:".length));
    lock.exec("BEGIN EXCLUSIVE");
    let released = false;
    try {
      const t0 = Date.now();
      const call = server.call("read_file", { path: "small.txt" }, { "x-agent-session": "locked" });
      // While that call waits, the server answers health (a read) promptly, again and again.
      const healthTimes: number[] = [];
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 300));
        const h0 = Date.now();
        const res = await fetch(`${server.url}/api/health`, { signal: AbortSignal.timeout(5000) });
        await res.arrayBuffer();
        healthTimes.push(Date.now() - h0);
      }
      // Generous bound for a shared, loaded machine; a frozen loop would take the full 10 s.
      expect(Math.max(...healthTimes)).toBeLessThan(2500);
      const res = await call;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(res.body).toMatchObject({ ok: false, error: { name: "unavailable", code: 503, retryable: true } });
      expect(JSON.stringify(res.body)).not.toMatch(/prisma|sqlite|invocation/i);
      expect(Date.now() - t0).toBeGreaterThan(5000);
      lock.exec("ROLLBACK");
      released = true;
    } finally {
      if (!released) lock.exec("ROLLBACK");
      lock.close();
    }
    const after = await server.call("read_file", { path: "small.txt" });
    expect(after.body.ok).toBe(true);
    const verify = await server.reviewer("GET", "/api/audit/verify");
    expect(verify.body).toMatchObject({ ok: true, broken: null });
  }, 120_000);

  it("a lock held briefly delays a call instead of failing it", async () => {
    const lock = new Database(server.databaseUrl.slice("file:".length));
    lock.exec("BEGIN EXCLUSIVE");
    const call = server.call("read_file", { path: "small.txt" });
    setTimeout(() => {
      lock.exec("ROLLBACK");
      lock.close();
    }, 1500);
    const res = await call;
    expect(res.body.ok).toBe(true);
  }, 60_000);

  it("verify reports the newest events deleted from the database", async () => {
    for (let i = 0; i < 5; i++) await server.call("read_file", { path: "small.txt" });
    const conn = new Database(server.databaseUrl.slice("file:".length));
    try {
      conn.exec(`DELETE FROM "Event" WHERE seq > (SELECT MAX(seq) - 3 FROM "Event")`);
    } finally {
      conn.close();
    }
    const verify = await server.reviewer("GET", "/api/audit/verify");
    expect(verify.status).toBe(200);
    expect(verify.body.ok).toBe(false);
    expect(verify.body.broken.reason).toBe("truncated");
  }, 60_000);
});
