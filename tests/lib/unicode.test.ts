import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sliceCodePoints } from "@/lib/unicode";
import { detectEol } from "@/lib/workspace/line-endings";

describe("sliceCodePoints", () => {
  it("never splits a surrogate pair at either edge", () => {
    const s = "a😀b😀";
    expect(sliceCodePoints(s, 0, 2)).toBe("a"); // the end falls inside the first emoji
    expect(sliceCodePoints(s, 2, 6)).toBe("b😀"); // the start falls inside the first emoji
    expect(sliceCodePoints(s, 0, 3)).toBe("a😀");
    expect(sliceCodePoints(s)).toBe(s);
  });

  it("clamps out-of-range and inverted bounds", () => {
    expect(sliceCodePoints("abc", -5, 99)).toBe("abc");
    expect(sliceCodePoints("abc", 2, 1)).toBe("");
    expect(sliceCodePoints("abc", 0, -1)).toBe("");
  });

  it("property: the result is well formed, inside the range and a substring at the same place", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.nat(40), fc.nat(40), (text, a, b) => {
        const [start, end] = a <= b ? [a, b] : [b, a];
        const cut = sliceCodePoints(text, start, end);
        expect(cut.isWellFormed()).toBe(true);
        expect(cut.length).toBeLessThanOrEqual(Math.max(0, Math.min(end, text.length) - Math.min(start, text.length)));
        expect(text.slice(Math.min(start, text.length)).startsWith(cut) || text.slice(Math.min(start, text.length) + 1).startsWith(cut)).toBe(true);
        // Losing at most one unit per edge, and only where that edge would split a pair.
        expect(cut.length).toBeGreaterThanOrEqual(Math.min(end, text.length) - Math.min(start, text.length) - 2);
      }),
    );
  });
});

describe("detectEol", () => {
  // The plain cases are in tests/workspace/text.test.ts.
  it("counts a lone CR as a break of its own only when asked (a text box turns it into LF)", () => {
    expect(detectEol("a\rb\r\n")).toBe("crlf");
    expect(detectEol("a\rb\r\n", { loneCr: true })).toBe("mixed");
    expect(detectEol("a\rb", { loneCr: true })).toBe("mixed");
    expect(detectEol("a\r\nb\r\n", { loneCr: true })).toBe("crlf");
    expect(detectEol("a\r", { loneCr: true })).toBe("mixed");
  });
});
