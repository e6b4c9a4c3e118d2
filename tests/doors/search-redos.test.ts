import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

/**
 * search_files with a catastrophic regular expression through the real HTTP door of the
 * production server (Turbopack bundle): the matcher worker loads there, the server keeps
 * answering other requests while the pattern runs, and the call ends with regex_timeout.
 * No timing thresholds: every health answer must arrive while the search is still running.
 */

let server: TestServer;

beforeAll(async () => {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-redos-")));
  fs.mkdirSync(path.join(ws, "src"));
  fs.writeFileSync(path.join(ws, "src/app.ts"), "export const greeting = 'hello';\n");
  fs.writeFileSync(path.join(ws, "src/evil.txt"), `${"a".repeat(48)}!\n`);
  server = await startTestServer({ workspace: ws, env: { AGENT_REACH_SEARCH_TIMEOUT_MS: "3000" } });
});

afterAll(async () => {
  await server?.stop();
});

describe("search_files against a catastrophic regex (HTTP door)", () => {
  it("searches contents in the bundled server (the worker loads)", async () => {
    const res = await server.call("search_files", { query: "greet\\w+", regex: true });
    expect(res.status).toBe(200);
    expect(res.body.data.matches).toEqual([{ path: "src/app.ts", line: 1, column: 14, text: "export const greeting = 'hello';" }]);
  });

  it("keeps answering /api/health while the pattern runs, then answers regex_timeout", async () => {
    let settled = false;
    const search = server.call("search_files", { query: "(a+)+$", regex: true }).finally(() => (settled = true));
    for (let i = 0; i < 5; i++) {
      const health = await fetch(`${server.url}/api/health`);
      expect(health.status).toBe(200);
      expect(settled).toBe(false);
    }
    const res = await search;
    expect(res.status).toBe(400);
    expect(res.body.ok).toBe(false);
    expect(res.body.error).toMatchObject({ name: "invalid_arguments", code: 101, retryable: false });
    expect(res.body.error.detail).toMatchObject({ reason: "regex_timeout", path: "src/evil.txt", budget_ms: 3000 });
    expect(res.body.error.message).toContain("regex: false");
  });

  it("serves the next search normally after a worker was terminated", async () => {
    const res = await server.call("search_files", { query: "hello" });
    expect(res.status).toBe(200);
    expect(res.body.data.matches.map((m: { path: string }) => m.path)).toEqual(["src/app.ts"]);
  });
});
