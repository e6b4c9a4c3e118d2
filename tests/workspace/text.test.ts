import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ToolError } from "@/lib/errors";
import {
  applyEol,
  decodeForDisplay,
  decodeText,
  detectBom,
  detectEol,
  editableText,
  encodeText,
  profileText,
  sha256Hex,
  stripLeadingBom,
  type TextProfile,
} from "@/lib/workspace/text";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");
const BOM8 = Buffer.from([0xef, 0xbb, 0xbf]);

function toolErrorOf(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a ToolError");
}

describe("profileText", () => {
  const cases: Array<{ name: string; bytes: Buffer; expected: Partial<TextProfile> }> = [
    {
      name: "a stray byte in UTF-8 text stays UTF-8 (invalid)",
      bytes: Buffer.concat([Buffer.from("const x = 1;\n// caf\u00e9 "), hex("e9"), Buffer.from(" note\n")]),
      expected: { encoding: "utf-8", bom: false, binary: false, valid: false, eol: "lf", source: "fallback" },
    },
    {
      name: "C06 legacy.js: a Latin-1 byte in ASCII text is a single-byte legacy encoding, guessed",
      bytes: hex("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a"),
      expected: { bom: false, binary: false, valid: true, eol: "lf", source: "detected", sure: false },
    },
    {
      name: "C07 app.csproj: UTF-8 BOM + CRLF",
      bytes: Buffer.concat([BOM8, Buffer.from("<Project>\r\n  <Name>Caf\u00e9</Name>\r\n</Project>\r\n")]),
      expected: { encoding: "utf-8", bom: true, bomLength: 3, binary: false, valid: true, eol: "crlf" },
    },
    {
      name: "C08 app.py: CRLF",
      bytes: Buffer.from('def greet(name):\r\n    print("hello")\r\n\r\ndef add(a, b):\r\n    return a + b\r\n'),
      expected: { bom: false, valid: true, eol: "crlf" },
    },
    {
      name: "C10 logo.txt: PNG header + NULs",
      bytes: Buffer.concat([hex("89504E470D0A1A0A0000000D49484452"), Buffer.alloc(1000)]),
      expected: { binary: true, valid: false },
    },
    {
      name: "C10 win.txt: UTF-16LE with BOM",
      bytes: hex("FFFE 6800 6900 0D00 0A00"),
      expected: { encoding: "utf-16le", bom: true, bomLength: 2, binary: false, valid: true, eol: "crlf" },
    },
    {
      name: "UTF-16BE with BOM",
      bytes: hex("FEFF 0068 0069 000A"),
      expected: { encoding: "utf-16be", bom: true, binary: false, valid: true, eol: "lf" },
    },
    {
      name: "UTF-16LE of odd length",
      bytes: hex("FFFE 6800 69"),
      expected: { encoding: "utf-16le", valid: false },
    },
    {
      name: "C10 cjk.md: 334 x U+4E2D (a 1,000-byte sample would end mid-character)",
      bytes: Buffer.from("\u4e2d".repeat(334)),
      expected: { binary: false, valid: true, eol: "none" },
    },
    { name: "UTF-32LE BOM is binary, not UTF-16", bytes: hex("FFFE0000 68000000"), expected: { encoding: "utf-8", binary: true } },
    { name: "mixed line endings", bytes: Buffer.from("a\r\nb\nc\r\n"), expected: { eol: "mixed" } },
    { name: "lone CR is not a line break", bytes: Buffer.from("a\rb\r"), expected: { eol: "none" } },
    { name: "empty file", bytes: Buffer.alloc(0), expected: { encoding: "utf-8", bom: false, binary: false, valid: true, eol: "none" } },
  ];
  test.each(cases)("$name", ({ bytes, expected }) => {
    expect(profileText(bytes)).toMatchObject(expected);
  });
});

describe("detectBom / detectEol", () => {
  test.each([
    [hex("EFBBBF41"), { encoding: "utf-8", length: 3 }],
    [hex("FFFE4100"), { encoding: "utf-16le", length: 2 }],
    [hex("FEFF0041"), { encoding: "utf-16be", length: 2 }],
    [hex("EFBB"), null],
    [hex("41"), null],
  ])("detectBom(%s)", (bytes, expected) => {
    expect(detectBom(bytes)).toEqual(expected);
  });
  test.each([
    ["a\nb\n", "lf"],
    ["a\r\nb\r\n", "crlf"],
    ["a\r\nb\n", "mixed"],
    ["\n", "lf"],
    ["abc", "none"],
  ] as const)("detectEol(%j) = %s", (text, eol) => {
    expect(detectEol(text)).toBe(eol);
  });
});

describe("decodeText and encodeText round-trip exactly", () => {
  test.each([
    ["UTF-8 with BOM (C07)", Buffer.concat([BOM8, Buffer.from("<Project>\r\n</Project>\r\n")]), "<Project>\r\n</Project>\r\n"],
    ["UTF-16LE (C10)", hex("FFFE 6800 6900 0D00 0A00"), "hi\r\n"],
    ["UTF-16BE", hex("FEFF 0068 0069"), "hi"],
    ["UTF-16LE with a lone surrogate", hex("FFFE 00D8 4100"), "\ud800A"],
    ["a doubled BOM keeps the second U+FEFF as text", Buffer.concat([BOM8, BOM8, Buffer.from("x")]), "\ufeffx"],
  ])("%s", (_name, bytes, text) => {
    const profile = profileText(bytes);
    expect(decodeText(bytes, profile)).toBe(text);
    expect(encodeText(text, profile).equals(bytes)).toBe(true);
  });

  test("binary content is refused with binary_file / nul_byte and its size", () => {
    const err = toolErrorOf(() => decodeText(Buffer.from([0x41, 0x00, 0x42])));
    expect(err.errorName).toBe("binary_file");
    expect(err.detail).toMatchObject({ reason: "nul_byte", size_bytes: 3 });
  });

  test.each([
    ["invalid UTF-8", hex("e4b8ad e9"), "invalid_utf8"],
    ["odd-length UTF-16", hex("FFFE 6800 69"), "utf16_odd_length"],
  ])("%s is refused with encoding_unsupported", (_name, bytes, reason) => {
    const err = toolErrorOf(() => decodeText(bytes));
    expect(err.errorName).toBe("encoding_unsupported");
    expect(err.detail.reason).toBe(reason);
  });

  test("a lone surrogate is never encoded as UTF-8 (it would become EF BF BD)", () => {
    const err = toolErrorOf(() => encodeText("a\udc00b", { encoding: "utf-8", bom: false }));
    expect(err.errorName).toBe("invalid_arguments");
    expect(err.detail.reason).toBe("lone_surrogate");
  });

  test("UTF-16 is always written with its BOM", () => {
    expect(encodeText("yo", { encoding: "utf-16le", bom: false })).toEqual(hex("FFFE 7900 6F00"));
    expect(encodeText("yo", { encoding: "utf-16be", bom: true })).toEqual(hex("FEFF 0079 006F"));
  });

  test("decodeForDisplay shows invalid bytes as U+FFFD and never throws", () => {
    expect(decodeForDisplay(hex("e4b8ad 636166e90a"))).toBe("\u4e2dcaf\ufffd\n");
    expect(decodeForDisplay(hex("FFFE 6800 69"))).toBe("h");
  });

  test("property: every valid UTF-8 / UTF-16 text round-trips byte for byte", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.constantFrom("utf-8", "utf-16le", "utf-16be"), fc.boolean(), (text, encoding, bom) => {
        const bytes = encodeText(text, { encoding, bom });
        const profile = profileText(bytes);
        if (profile.binary) return; // U+0000 in UTF-8 text is binary by definition
        expect(encodeText(decodeText(bytes, profile), profile).equals(bytes)).toBe(true);
      }),
    );
  });
});

describe("applyEol / stripLeadingBom", () => {
  test.each([
    ["a\nb\n", "crlf", "a\r\nb\r\n"],
    ["a\r\nb\r\n", "crlf", "a\r\nb\r\n"],
    ["a\r\nb\n", "crlf", "a\r\nb\r\n"],
    ["a\r\nb\n", "lf", "a\nb\n"],
    ["a\rb\n", "crlf", "a\rb\r\n"],
  ] as const)("applyEol(%j, %s) = %j (no \\r\\r\\n, C08)", (text, eol, expected) => {
    expect(applyEol(text, eol)).toBe(expected);
  });
  test("stripLeadingBom removes exactly one U+FEFF", () => {
    expect(stripLeadingBom("\ufeff\ufeffx")).toBe("\ufeffx");
    expect(stripLeadingBom("x\ufeff")).toBe("x\ufeff");
  });
});

describe("editableText", () => {
  test("invalid UTF-8 in UTF-8 text is edited as bytes and nothing else changes", () => {
    const line2 = Buffer.concat([Buffer.from("// caf\u00e9 "), hex("e9"), Buffer.from(" note\n")]);
    const bytes = Buffer.concat([Buffer.from("const x = 1;\n"), line2]);
    const doc = editableText(bytes);
    expect(doc.byteMode).toBe(true);
    expect(doc.toBytes(doc.text).equals(bytes)).toBe(true);
    const start = doc.text.indexOf(doc.fromAgent("const x = 1;"));
    const out = doc.spliceBytes([{ start, end: start + 12, text: doc.fromAgent("const x = 2;") }]);
    expect(out.equals(Buffer.concat([Buffer.from("const x = 2;\n"), line2]))).toBe(true);
    expect(out.includes(hex("efbfbd"))).toBe(false);
    expect(doc.toDisplay(doc.text.split("\n")[1])).toBe("// caf\u00e9 \ufffd note");
  });

  test("C06: a Latin-1 byte in ASCII text is decoded, and an edit is spliced byte-exactly", () => {
    const bytes = hex("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a");
    const doc = editableText(bytes);
    expect(doc.byteMode).toBe(false);
    expect(doc.text).toBe("const x = 1;\n// caf\u00e9 note\n");
    const out = doc.spliceBytes([{ start: 0, end: 12, text: "const x = 2;" }]);
    expect(out.toString("hex")).toBe("636f6e73742078203d20323b0a2f2f20636166e9206e6f74650a");
    expect(sha256Hex(out)).toMatch(/^a587acad[0-9a-f]{48}3147e0c5$/);
  });

  test("C06: an agent's non-ASCII text becomes its UTF-8 bytes in byte mode", () => {
    const doc = editableText(Buffer.concat([Buffer.from("\u00e9 "), hex("ff")]));
    expect(doc.toBytes(doc.text + doc.fromAgent("\u4e2d")).equals(Buffer.concat([Buffer.from("\u00e9 "), hex("ff"), Buffer.from("\u4e2d")]))).toBe(true);
  });

  test("property: any non-binary bytes round-trip through editableText", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 64 }), (arr) => {
        const bytes = Buffer.from(arr);
        const profile = profileText(bytes);
        if (profile.binary || (profile.encoding !== "utf-8" && !profile.valid)) return;
        const doc = editableText(bytes);
        expect(doc.toBytes(doc.text).equals(bytes)).toBe(true);
      }),
    );
  });

  test.each([
    ["binary", Buffer.from([0x50, 0x00]), "binary_file"],
    ["odd-length UTF-16", hex("FFFE 6800 69"), "encoding_unsupported"],
  ])("%s files are refused", (_name, bytes, name) => {
    expect(toolErrorOf(() => editableText(bytes)).errorName).toBe(name);
  });
});

describe("sha256Hex", () => {
  test.each([
    ["C06 legacy.js", hex("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a"), /^6b402505[0-9a-f]{48}b299eb51$/],
    ["C07 app.csproj", Buffer.concat([BOM8, Buffer.from("<Project>\r\n  <Name>Caf\u00e9</Name>\r\n</Project>\r\n")]), /^c4ff8e1a[0-9a-f]{48}b79ca069$/],
    // The case prints "6cb7adff...1e2ee386"; the prefix matches, the suffix is a typo of "2e1ee386".
    ["C08 app.py", Buffer.from('def greet(name):\r\n    print("hello")\r\n\r\ndef add(a, b):\r\n    return a + b\r\n'), /^6cb7adff32af4afe09774288b6a411d2291c90b4b0c453f572d9c1152e1ee386$/],
    ["C14 plan.md", Buffer.from("alpha\nbeta\n"), /^e49c81e2d2f84e259d40e2fb8192f3bcd198b355184845d76d8f58807d0d78ee$/],
    ["C15 story.md", Buffer.from("The mat was green\n"), /^d55118c031bef12d075ff6e8a1174d283a18a6bc5abe77ee5b97978e628877bd$/],
  ])("%s matches the case's hash", (_name, bytes, pattern) => {
    expect(sha256Hex(bytes)).toMatch(pattern);
  });
});
