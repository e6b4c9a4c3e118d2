import { describe, expect, it } from "vitest";
import { runCrashCampaign } from "@/tests/reliability/harness/crash";

/**
 * Crash consistency, bounded short form: SIGKILL of the real server at random
 * moments during writes and edits of real files. The long form (1,000 calls) runs with
 * `npm run reliability`, which writes docs/RELIABILITY.md.
 */
describe("crash consistency under SIGKILL (short form)", () => {
  it("keeps every file at its old or new bytes, leaves no temp file after a restart, and keeps the audit log whole", async () => {
    const report = await runCrashCampaign({
      operations: 60,
      writers: 3,
      killDelayMs: [300, 2000],
      seed: Number(process.env.CRASH_SEED ?? 8),
      fileSizes: [2_000, 64_000, 256_000, 1_500_000],
    });
    expect(report.violations).toEqual([]);
    expect(report.bytesLostFiles).toBe(0);
    expect(report.tempFilesAfterRestart).toBe(0);
    expect(report.kills).toBeGreaterThanOrEqual(1);
    expect(report.confirmed).toBeGreaterThan(0);
    expect(report.auditRows).toBeGreaterThanOrEqual(report.confirmed);
  }, 180_000);
});
