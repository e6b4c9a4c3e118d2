import { describe, expect, it } from "vitest";
import { runDatabaseLocked, runDatabaseUnavailable } from "@/tests/reliability/harness/faults";

/**
 * Database faults under the real server, bounded short form: the SQLite write lock
 * held by another connection past the busy timeout, and a PostgreSQL server stopped under the
 * gateway. Tool calls fail closed: nothing runs without its audit row, no file changes, and the
 * server works again once the database is back. The long form: `npm run reliability`.
 */
describe("database faults (short form)", () => {
  it("a locked SQLite database: the calls fail, nothing runs, writes work once the lock is gone", async () => {
    const report = await runDatabaseLocked(1);
    expect(report.violations).toEqual([]);
    expect(report.bytesLostFiles).toBe(0);
    expect(report.faultsInjected).toBe(2);
    expect(report.recoveries).toBe(2);
    // Every door answers 503 `unavailable` (retryable), not a bare 500 or a driver's message.
    for (const answer of Object.keys(report.answers)) expect(answer).toMatch(/503|unavailable/);
    for (const answer of Object.keys(report.answers)) expect(answer).not.toMatch(/prisma|invocation/i);
  }, 120_000);

  it("PostgreSQL down: the calls fail, nothing runs, the server recovers without a restart", async () => {
    const report = await runDatabaseUnavailable(1);
    expect(report.violations).toEqual([]);
    expect(report.bytesLostFiles).toBe(0);
    expect(report.faultsInjected).toBe(6);
    expect(report.recoveredWithoutRestart).toBe(true);
    for (const answer of Object.keys(report.answers)) expect(answer).toMatch(/503|unavailable/);
    for (const answer of Object.keys(report.answers)) expect(answer).not.toMatch(/prisma|invocation/i);
  }, 120_000);
});
