import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";

/**
 * HTTP conventions of the door on a running server: a method a route does not take answers 405
 * with an `Allow` header and the JSON error envelope (every route of the app, found from the
 * route files), and `Prefer: wait` is echoed in `Preference-Applied` exactly when it was honored.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  fs.writeFileSync(path.join(server.workspace, "notes.md"), "one\n");
});

afterAll(async () => {
  await server?.stop();
});

const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"];

/** Each route file under app/ as a URL (dynamic segments filled with "x") and the methods it implements. */
function routes(dir = path.resolve("app"), segments: string[] = []): { url: string; implemented: string[] }[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      // A route group `(name)` is not part of the URL.
      const segment = /^\(.*\)$/.test(e.name) ? [] : [/^\[.*\]$/.test(e.name) ? "x" : e.name];
      return routes(p, [...segments, ...segment]);
    }
    if (e.name !== "route.ts") return [];
    const source = fs.readFileSync(p, "utf8");
    const implemented = [...source.matchAll(/^export (?:async function|function|const) (GET|POST|DELETE)\b/gm)].map((m) => m[1]);
    return [{ url: `/${segments.join("/")}`, implemented }];
  });
}

describe("a method a route does not take", () => {
  const all = routes();

  it("GET /api/tools/x answers 405 method_not_allowed with Allow: OPTIONS, POST", async () => {
    const res = await fetch(`${server.url}/api/tools/x`, { headers: { authorization: `Bearer ${server.agentToken}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("OPTIONS, POST");
    expect(await res.json()).toEqual({
      ok: false,
      call_id: null,
      error: {
        code: 110,
        name: "method_not_allowed",
        message: "GET is not allowed on /api/tools/x; it takes OPTIONS, POST.",
        detail: { method: "GET", allow: ["OPTIONS", "POST"] },
        retryable: false,
        retry_after_ms: null,
      },
    });
  });

  it("every route answers every method it does not take with the envelope (HEAD: status and Allow)", async () => {
    expect(all.length).toBeGreaterThanOrEqual(19);
    const failures: string[] = [];
    let checked = 0;
    for (const { url, implemented } of all) {
      // The MCP door answers GET itself (no server-initiated stream), with the same envelope.
      const takes = url === "/api/mcp" ? implemented.filter((m) => m !== "GET") : implemented;
      for (const method of METHODS) {
        if (takes.includes(method) || (method === "HEAD" && takes.includes("GET"))) continue;
        const res = await fetch(`${server.url}${url}`, { method, headers: { authorization: `Bearer ${server.reviewerToken}` } });
        checked++;
        const allow = res.headers.get("allow") ?? "";
        const body = method === "HEAD" ? null : await res.json().catch(() => null);
        const ok =
          res.status === 405 &&
          takes.every((m) => allow.split(", ").includes(m)) &&
          (method === "HEAD" || (body?.ok === false && body.error?.name === "method_not_allowed" && body.error.detail.method === method));
        if (!ok) failures.push(`${method} ${url}: ${res.status} allow=${allow} body=${JSON.stringify(body)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(60);
  });

  it.each([
    ["/api/agents", "OPTIONS, POST"],
    ["/api/tools", "GET, HEAD, OPTIONS"],
    ["/api/tools/read_file", "OPTIONS, POST"],
    ["/api/mcp", "DELETE, OPTIONS, POST"],
  ])("OPTIONS %s names the methods it takes: %s", async (url, allow) => {
    const res = await fetch(`${server.url}${url}`, { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe(allow);
  });
});

describe("Prefer: wait on a tool call", () => {
  const read = (prefer?: string) => server.call("read_file", { path: "notes.md" }, prefer === undefined ? {} : { prefer });

  it.each([
    ["wait=0", "wait=0"],
    ["wait=5", "wait=5"],
    ["respond-async, wait=2", "wait=2"],
    // Capped at AGENT_REACH_APPROVAL_WAIT_MAX_S (120 by default): the header says what applied.
    ["wait=9999", "wait=120"],
  ])("%s is honored: Preference-Applied %s", async (prefer, applied) => {
    const res = await read(prefer);
    expect(res.status).toBe(200);
    expect(res.headers.get("preference-applied")).toBe(applied);
  });

  it.each(["wait=abc", "wait=-1", "handling=strict"])("%s is ignored (RFC 7240): the call runs, no Preference-Applied", async (prefer) => {
    const res = await read(prefer);
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.headers.get("preference-applied")).toBeNull();
  });

  it("a call that asks a reviewer with a malformed wait waits the default, not zero", async () => {
    // The default wait is 30 s; the request is cut after 1.5 s: had `wait=abc` counted as 0, it
    // would have answered 601 at once.
    const started = Date.now();
    const res = await fetch(`${server.url}/api/tools/write_file`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.agentToken}`, "content-type": "application/json", prefer: "wait=abc" },
      body: JSON.stringify({ path: "Makefile", content: "all:\n\ttrue\n" }),
      signal: AbortSignal.timeout(1500),
    }).catch((err: Error) => err);
    expect(res).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    const queued = await fetch(`${server.url}/api/tools/write_file`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.agentToken}`, "content-type": "application/json", prefer: "wait=0" },
      body: JSON.stringify({ path: "Makefile", content: "all:\n\ttrue\n" }),
    });
    expect(queued.status).toBe(202);
    expect(queued.headers.get("preference-applied")).toBe("wait=0");
  });
});
