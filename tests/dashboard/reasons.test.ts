import { describe, expect, it } from "vitest";
import { groupReasons } from "@/lib/dashboard/reasons";

describe("groupReasons", () => {
  it("folds many per-path reasons with the same label and note into one line, in the first one's place", () => {
    const files = Array.from({ length: 80 }, (_, i) => `write_in_workspace: src/fixture_${i}.json (rm; shell writes bypass the diff)`);
    const lines = groupReasons(["rm: not on the allow list", ...files, "network: asks for network access"]);
    expect(lines).toEqual([
      { text: "rm: not on the allow list", count: 1 },
      { text: "write_in_workspace: 80 paths: src/fixture_0.json, src/fixture_1.json, src/fixture_2.json and 77 more (rm; shell writes bypass the diff)", count: 80 },
      { text: "network: asks for network access", count: 1 },
    ]);
  });

  it("keeps small groups, other notes and unshaped reasons as they are", () => {
    const reasons = ["write_in_workspace: a.txt (sed)", "write_in_workspace: b.txt (sed)", "write_in_workspace: c.txt (cp)", "Every command asks: no sandbox (bwrap missing)"];
    expect(groupReasons(reasons).map((l) => l.text)).toEqual(reasons);
  });

  it("groups reasons without a note too", () => {
    const lines = groupReasons(["reads: a", "reads: b", "reads: c", "reads: d"]);
    expect(lines).toEqual([{ text: "reads: 4 paths: a, b, c and 1 more", count: 4 }]);
  });
});
