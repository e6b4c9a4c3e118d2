import { describe, expect, it } from "vitest";
import { canonicalJson } from "@/lib/canonical-json";
import { canonicalEventHashInput, eventHashInput } from "@/lib/audit/writer";

/** Data shapes the chain hashes: nested objects, integer-like keys, unicode, escapes, numbers at the edges. */
const DATA: unknown[] = [
  {},
  { tool: "read_file", path: "small.txt" },
  { b: 1, a: { d: [1, 2, { z: null, y: true }], c: "x" } },
  { "10": "ten", "9": "nine", "": "empty", "a b": "space" },
  { text: "line\nbreak \"quoted\" \\ back \u2028 sep \u0001 ctl", emoji: "😀 ü 中文" },
  { n: -0, big: 1e21, small: 5e-324, neg: -12.5, max: Number.MAX_SAFE_INTEGER },
  { when: new Date("2026-12-02T12:00:00.123Z"), dropped: undefined, list: [undefined, null] },
  { reasons: ["hard_link: a has 2 hard links"], rule: { id: "default:read", source: "preset" } },
];

describe("the writer's hash input", () => {
  it("is byte for byte the verifier's input for every data shape, actor and call id", () => {
    let checked = 0;
    for (const data of DATA) {
      for (const callId of [null, "call_abc123", "ca\"ll"]) {
        for (const actor of ["system", "agent:agt_1", "reviewer:admïn"]) {
          const e = { seq: 1 + checked, type: "call.received", callId, actor, dataJson: canonicalJson(data), createdAt: new Date(1_700_000_000_000 + checked) };
          expect(canonicalEventHashInput("f".repeat(64), e)).toBe(eventHashInput("f".repeat(64), e));
          checked++;
        }
      }
    }
    expect(checked).toBe(DATA.length * 9);
  });
});
