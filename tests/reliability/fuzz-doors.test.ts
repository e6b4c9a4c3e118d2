import { describe, expect, it } from "vitest";
import { runDoorFuzz } from "@/tests/reliability/harness/fuzz";

/**
 * Bad input at the doors, bounded short form: fast-check sends random and hostile
 * arguments to every tool through HTTP and MCP (the official SDK client) of a real server that
 * runs writes unattended. No 5xx, no crash, well-formed envelopes, nothing written outside the
 * workspace, no temp file left. The long form (more calls, another seed): `npm run reliability`.
 */
describe("door fuzzing (short form)", () => {
  it("answers every hostile call with a 4xx/2xx envelope and never writes outside the workspace", async () => {
    const report = await runDoorFuzz({ runs: 150, seed: Number(process.env.FUZZ_SEED ?? 20260801) });
    expect(report.violations).toEqual([]);
    expect(report.calls).toEqual({ http: 150, mcp: 150 });
    const names = Object.keys(report.answers);
    expect(names.some((k) => k.startsWith("http 400 invalid_arguments"))).toBe(true);
    expect(names.some((k) => k.endsWith(" ok"))).toBe(true);
  }, 120_000);
});
