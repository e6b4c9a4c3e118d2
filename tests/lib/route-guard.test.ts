import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every HTTP handler under app/api answers failures as an error envelope with a stable code
 * (lib/http/door.ts `guardDoor`): an exception inside a route must never become a bare 500 with
 * an empty body. The health check is the one exception: it catches each check itself and answers
 * 503 with the failed checks named.
 */
const ROOT = path.resolve(__dirname, "../..");
const SELF_GUARDED = new Set(["app/api/health/route.ts"]);

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? routeFiles(p) : e.name === "route.ts" ? [path.relative(ROOT, p)] : [];
  });
}

describe("API routes", () => {
  const files = routeFiles(path.join(ROOT, "app/api"));

  it("are found", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.filter((f) => !SELF_GUARDED.has(f)))("%s: every exported method goes through guardDoor", (file) => {
    const source = fs.readFileSync(path.join(ROOT, file), "utf8");
    const methods = [...source.matchAll(/^export (?:async function|const) (GET|POST|PUT|PATCH|DELETE)\b(.*)$/gm)];
    expect(methods.length).toBeGreaterThan(0);
    // Either wrapped where exported, or bound to a local that is (`const guarded = guardDoor(…)`).
    const guardedLocals = [...source.matchAll(/^const (\w+) = guardDoor\(/gm)].map((m) => m[1]);
    for (const [, method, rest] of methods) {
      const local = /^\s*=\s*(\w+);/.exec(rest)?.[1];
      if (local && guardedLocals.includes(local)) continue;
      expect(rest, `${file} ${method}`).toMatch(/^\s*=\s*guardDoor\(/);
    }
  });
});
