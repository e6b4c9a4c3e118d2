import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { allowHeader, methodNotAllowedResponse, refuseOtherMethods, ROUTE_METHODS } from "@/lib/http/methods";

/**
 * A method a route does not take answers 405 with the JSON error envelope and an `Allow` header,
 * and every route file of the app covers all methods (its own handlers plus refuseOtherMethods).
 */

describe("allowHeader", () => {
  it.each([
    [["POST"], "OPTIONS, POST"],
    [["GET"], "GET, HEAD, OPTIONS"],
    [["POST", "DELETE"], "DELETE, OPTIONS, POST"],
  ] as const)("%j → %s", (allowed, header) => {
    expect(allowHeader(allowed)).toBe(header);
  });
});

describe("refuseOtherMethods", () => {
  it.each([
    [["POST"], ["GET", "HEAD", "PUT", "DELETE", "PATCH"]],
    [["GET"], ["POST", "PUT", "DELETE", "PATCH"]],
    [["POST", "DELETE"], ["GET", "HEAD", "PUT", "PATCH"]],
  ] as const)("%j refuses %j (and answers OPTIONS)", (allowed, refused) => {
    expect(Object.keys(refuseOtherMethods(allowed)).sort()).toEqual([...refused, "OPTIONS"].sort());
  });

  it("OPTIONS is 204 with the route's own Allow", async () => {
    const { OPTIONS } = refuseOtherMethods(["GET"]);
    const res = await OPTIONS(new Request("http://127.0.0.1:3000/api/tools", { method: "OPTIONS" }));
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  it("a refusal is 405 with Allow and the method_not_allowed envelope", async () => {
    const { PUT } = refuseOtherMethods(["POST"]);
    const res = await PUT(new Request("http://127.0.0.1:3000/api/tools/x", { method: "PUT" }));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("OPTIONS, POST");
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = await res.json();
    expect(body).toMatchObject({
      ok: false,
      call_id: null,
      error: { code: 110, name: "method_not_allowed", retryable: false, detail: { method: "PUT", allow: ["OPTIONS", "POST"] } },
    });
    expect(body.error.message).toBe("PUT is not allowed on /api/tools/x; it takes OPTIONS, POST.");
  });

  it("methodNotAllowedResponse names the request's own method", async () => {
    const res = methodNotAllowedResponse(new Request("http://127.0.0.1:3000/api/mcp", { method: "GET" }), ["POST", "DELETE"]);
    expect(res.status).toBe(405);
    expect((await res.json()).error.detail).toEqual({ method: "GET", allow: ["DELETE", "OPTIONS", "POST"] });
  });
});

/** Every route.ts under app/, with the methods it exports (own handlers and refusals). */
function routeFiles(dir = path.resolve("app")): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? routeFiles(p) : e.name === "route.ts" ? [p] : [];
  });
}

function exportedMethods(source: string): Set<string> {
  const names = new Set<string>();
  for (const m of source.matchAll(/^export (?:async function|function|const) (GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS)\b/gm)) names.add(m[1]);
  for (const m of source.matchAll(/^export const \{([^}]*)\} = refuseOtherMethods\(/gm)) {
    for (const name of m[1].split(",")) names.add(name.trim());
  }
  return names;
}

describe("every route answers every method", () => {
  const files = routeFiles();
  it("finds the route files", () => {
    expect(files.length).toBeGreaterThanOrEqual(19);
  });
  it.each(files.map((f) => [path.relative(process.cwd(), f)]))("%s", (file) => {
    const names = exportedMethods(fs.readFileSync(file, "utf8"));
    // Next.js answers HEAD with GET where a route has GET.
    if (names.has("GET")) names.add("HEAD");
    expect([...names].sort()).toEqual([...ROUTE_METHODS, "OPTIONS"].sort());
  });
});
