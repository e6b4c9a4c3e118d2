import { describe, expect, it } from "vitest";
import { formatAge, formatBytes, formatDuration, formatTime } from "@/lib/dashboard/format";

describe("formatting", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1536, "1.5 KiB"],
    [5 * 1024 * 1024, "5.0 MiB"],
    [null, "—"],
  ] as const)("bytes %s → %s", (n, s) => expect(formatBytes(n)).toBe(s));

  it.each([
    [12, "12 ms"],
    [2400, "2.4 s"],
    [185_000, "3 min 5 s"],
    [7_260_000, "2 h 1 min"],
    [null, "—"],
  ] as const)("duration %s → %s", (n, s) => expect(formatDuration(n)).toBe(s));

  it("times are UTC, seconds precision", () => {
    expect(formatTime(new Date("2026-05-01T12:34:56.789Z"))).toBe("2026-05-01 12:34:56Z");
    expect(formatTime("not a date")).toBe("—");
    expect(formatTime(null)).toBe("—");
  });

  it.each([
    [10_000, "just now"],
    [5 * 60_000, "5 min ago"],
    [3 * 3_600_000, "3 h ago"],
    [2 * 86_400_000, "2 d ago"],
  ])("age %s ms → %s", (ago, s) => expect(formatAge(new Date(1_000_000_000_000 - ago), 1_000_000_000_000)).toBe(s));
});

describe("editor position", () => {
  it("opens at the first changed line on the new side of a unified diff", async () => {
    const { firstChangedLine } = await import("@/lib/dashboard/edit-text");
    expect(firstChangedLine("--- a/x\n+++ b/x\n@@ -57,7 +57,7 @@\n line 57\n line 58\n line 59\n-line 60\n+line sixty\n")).toBe(60);
    expect(firstChangedLine("--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n")).toBe(1);
    expect(firstChangedLine("")).toBe(1);
  });
});
