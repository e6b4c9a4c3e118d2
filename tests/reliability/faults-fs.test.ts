import { describe, expect, it } from "vitest";
import { runDiskFull, runFolderFlipRace, runReadOnly } from "@/tests/reliability/harness/faults";

/**
 * File-system faults under the real server, bounded short form: a full disk and a
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
    // An expected file-system state, not a server error: 507 Insufficient Storage, not retryable.
    expect(report.answers).toEqual({ [`http 507 write_failed/${reason}`]: 3, [`mcp 200 write_failed/${reason}`]: 3 });
    expect(report.samples.every((e) => e.retryable === false && typeof e.detail.path === "string" && e.message.includes("Nothing was written to"))).toBe(true);
  }, 120_000);

  it("a folder flipped to a symlink and removed while 160 writes arrive: never a 5xx, nothing written outside", async () => {
    const report = await runFolderFlipRace(160);
    expect(report.serverErrors, JSON.stringify(report.answers)).toBe(0);
    expect(report.outsideFiles).toEqual([]);
    expect(report.temps).toEqual([]);
    expect(report.writes).toBeGreaterThanOrEqual(160);
    expect(report.flips, "the folder flipped while the writes arrived").toBeGreaterThan(100);
    // Every refusal says why: the folder changed during the call.
    for (const key of Object.keys(report.answers)) {
      expect(key).toMatch(/^(200 ok|404 not_found\/(changed_during_call|parent_missing|parent_not_directory)|403 path_outside_workspace\/(changed_during_call|symlink|parent_symlink))$/);
    }
  }, 180_000);
});
