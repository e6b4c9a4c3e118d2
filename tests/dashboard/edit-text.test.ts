import { describe, expect, it } from "vitest";
import { lineBreakStyle, losesCarriageReturns, restoreLineBreaks } from "@/lib/dashboard/edit-text";

/** A text box turns CRLF into LF; edited content gets CRLF back when the original used it. */
describe("line breaks across a text box", () => {
  const cases: [string, string, ReturnType<typeof lineBreakStyle>, string, boolean][] = [
    // name, original, style, submitted for edited "a\nb\n", loses CRs
    ["LF file", "x\ny\n", "lf", "a\nb\n", false],
    ["CRLF file", "x\r\ny\r\n", "crlf", "a\r\nb\r\n", false],
    ["no line break", "x", "none", "a\nb\n", false],
    ["mixed", "x\r\ny\n", "mixed", "a\nb\n", true],
    ["lone CR", "x\ry\n", "mixed", "a\nb\n", true],
  ];
  it.each(cases)("%s", (_name, original, style, submitted, loses) => {
    expect(lineBreakStyle(original)).toBe(style);
    expect(restoreLineBreaks(original, "a\nb\n")).toBe(submitted);
    expect(losesCarriageReturns(original)).toBe(loses);
  });
});
