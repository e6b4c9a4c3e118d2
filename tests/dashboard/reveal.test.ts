import { describe, expect, it } from "vitest";
import { revealParts, revealPlain } from "@/lib/dashboard/reveal";

/** Hidden characters are marked, visible text is untouched, and nothing is lost. */
describe("revealParts", () => {
  const cases: [string, string, string[]][] = [
    ["plain ASCII", "rm -rf build", []],
    ["tab and newline stay", "a\tb\nc", []],
    ["right-to-left override (Trojan Source)", "x\u202Ey", ["RLO"]],
    ["bidi isolates", "\u2066a\u2069", ["LRI", "PDI"]],
    ["zero-width space and joiner", "a\u200Bb\u200Dc", ["ZWSP", "ZWJ"]],
    ["escape sequence", "\u001b[2J", ["ESC"]],
    ["carriage return", "ok\rEVIL", ["CR"]],
    ["NUL and DEL", "\u0000\u007f", ["NUL", "DEL"]],
    ["no-break space looks like a space", "rm\u00a0-rf", ["NBSP"]],
    ["byte order mark", "\uFEFFstart", ["BOM"]],
    ["tag characters (ASCII smuggling)", "hi\u{E0041}\u{E0042}", ["U+E0041", "U+E0042"]],
    ["C1 control", "a\u0085b", ["U+0085"]],
    ["emoji and CJK stay", "✅ 日本語 ü", []],
  ];
  it.each(cases)("%s", (_name, input, labels) => {
    const parts = revealParts(input);
    expect(parts.filter((p) => p.kind === "hidden").map((p) => (p.kind === "hidden" ? p.label : ""))).toEqual(labels);
    expect(parts.map((p) => (p.kind === "text" ? p.text : p.char)).join("")).toBe(input);
  });

  it("titles carry the code point", () => {
    const [, hidden] = revealParts("a\u202Eb");
    expect(hidden).toEqual({ kind: "hidden", char: "\u202E", label: "RLO", title: "U+202E RLO" });
  });

  it("revealPlain writes labels inline", () => {
    expect(revealPlain("a\u202Eb\u200Bc")).toBe("a⟨RLO⟩b⟨ZWSP⟩c");
  });

  it("is safe to call repeatedly (the global pattern keeps no state between calls)", () => {
    for (let i = 0; i < 3; i++) {
      expect(revealParts("x\u202E").map((p) => p.kind)).toEqual(["text", "hidden"]);
      expect(revealPlain("x\u202E")).toBe("x⟨RLO⟩");
    }
  });
});
