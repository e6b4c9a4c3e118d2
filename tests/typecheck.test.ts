import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The whole project type-checks (`tsc --noEmit`): vitest strips types without checking them, and
 * `next build` checks only app/ and lib/, so this is where tests, scripts and benchmarks are checked.
 */
describe("TypeScript", () => {
  it("type-checks the whole project", () => {
    const root = path.resolve(import.meta.dirname, "..");
    let output = "";
    try {
      execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", root], { cwd: root, encoding: "utf8", stdio: "pipe" });
    } catch (err) {
      output = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(output).toBe("");
  }, 180_000);
});
