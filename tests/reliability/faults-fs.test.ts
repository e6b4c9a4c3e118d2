import { describe, expect, it } from "vitest";
import { runDiskFull, runReadOnly } from "@/tests/reliability/harness/faults";

/**
 * File-system faults under the real server, bounded short form (issue 8 §2): a full disk and a
 * read-only workspace (tmpfs mounts; the tests run as root here and in CI). Writes through both
 * agent doors fail with write_failed and its reason; no byte, temp file, directory or backup is
 * left behind; a write works again once the fault is lifted. The long form: `npm run reliability`.
 */
describe("file-system faults (short form)", () => {
  it.each([
    ["a full disk answers write_failed/enospc", runDiskFull, "enospc"],
    ["a read-only workspace answers write_failed/erofs", runReadOnly, "erofs"],
  ] as const)("%s and loses nothing", async (_label, scenario, reason) => {
    const report = await scenario(1);
    expect(report.violations).toEqual([]);
    expect(report.bytesLostFiles).toBe(0);
    expect(report.faultsInjected).toBe(6);
    expect(report.recoveries).toBe(2);
    expect(report.answers).toEqual({ [`http 500 write_failed/${reason}`]: 3, [`mcp 200 write_failed/${reason}`]: 3 });
  }, 120_000);
});
