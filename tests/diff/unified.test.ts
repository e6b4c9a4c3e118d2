import { parsePatch } from "diff";
import { describe, expect, test } from "vitest";
import { capDiff, diffFileBytes, diffTexts } from "@/lib/diff/unified";

const BOM8 = Buffer.from([0xef, 0xbb, 0xbf]);
const b = (s: string) => Buffer.from(s);

describe("diffFileBytes", () => {
  const cases: Array<{ name: string; before: Buffer | null; after: Buffer; additions: number; deletions: number; notes: string[]; contains?: string[] }> = [
    {
      name: "one line changed",
      before: b("a\nb\nc\n"),
      after: b("a\nB\nc\n"),
      additions: 1,
      deletions: 1,
      notes: [],
      contains: ["--- a/f.txt", "+++ b/f.txt", "-b", "+B"],
    },
    { name: "new file", before: null, after: b("x\ny\n"), additions: 2, deletions: 0, notes: [], contains: ["--- /dev/null", "+++ b/f.txt", "@@ -0,0 +1,2 @@"] },
    { name: "emptied file", before: b("a\n"), after: b(""), additions: 0, deletions: 1, notes: [], contains: ["@@ -1,1 +0,0 @@", "-a"] },
    { name: "existing empty file filled", before: b(""), after: b("a"), additions: 1, deletions: 0, notes: [], contains: ["--- a/f.txt", "@@ -0,0 +1,1 @@", "+a", "\\ No newline at end of file"] },
    { name: "identical bytes", before: b("same\n"), after: b("same\n"), additions: 0, deletions: 0, notes: [] },
    {
      name: "C08-2: CRLF edit is 1 changed + 1 added line, not the whole file",
      before: b('def greet(name):\r\n    print("hello")\r\n\r\ndef add(a, b):\r\n    return a + b\r\n'),
      after: b('def greet(name):\r\n    print("hi")\r\n    return None\r\n\r\ndef add(a, b):\r\n    return a + b\r\n'),
      additions: 2,
      deletions: 1,
      notes: [],
    },
    {
      name: "C08-4: CRLF → LF is a note, not a whole-file change",
      before: b("a\r\nb\r\n"),
      after: b("a\nb\n"),
      additions: 0,
      deletions: 0,
      notes: ["line endings change: CRLF → LF"],
    },
    {
      name: "LF → CRLF plus one content change",
      before: b("a\nb\nc\n"),
      after: b("a\r\nB\r\nc\r\n"),
      additions: 1,
      deletions: 1,
      notes: ["line endings change: LF → CRLF"],
    },
    {
      name: "C07: BOM kept is not a change",
      before: Buffer.concat([BOM8, b("<Project>\r\n  <Name>Caf\u00e9</Name>\r\n</Project>\r\n")]),
      after: Buffer.concat([BOM8, b("<Project>\r\n  <Name>Caf\u00e9 2</Name>\r\n</Project>\r\n")]),
      additions: 1,
      deletions: 1,
      notes: [],
    },
    { name: "BOM removed is a note only", before: Buffer.concat([BOM8, b("x\n")]), after: b("x\n"), additions: 0, deletions: 0, notes: ["byte order mark (BOM) removed"] },
    { name: "BOM added is a note only", before: b("x\n"), after: Buffer.concat([BOM8, b("x\n")]), additions: 0, deletions: 0, notes: ["byte order mark (BOM) added"] },
    {
      name: "UTF-16LE → UTF-8 with the same text is an encoding note",
      before: Buffer.from([0xff, 0xfe, 0x68, 0, 0x69, 0, 0x0a, 0]),
      after: b("hi\n"),
      additions: 0,
      deletions: 0,
      notes: ["encoding changes: utf-16le with BOM → utf-8"],
    },
    {
      name: "C10: binary old content gives a note, no line diff",
      before: Buffer.concat([Buffer.from("89504E470D0A1A0A0000000D49484452", "hex"), Buffer.alloc(1000)]),
      after: b("now text\n"),
      additions: 0,
      deletions: 0,
      notes: ["binary or undecodable content, no line diff: 1016 bytes → 9 bytes"],
      contains: ["Binary files a/f.txt and b/f.txt differ"],
    },
    {
      name: "invalid UTF-8 (a stray byte in UTF-8 text) kept on both sides, only the edited line differs",
      before: Buffer.concat([b("const x = 1;\n// caf\u00e9 "), Buffer.from("e9", "hex"), b(" note\n")]),
      after: Buffer.concat([b("const x = 2;\n// caf\u00e9 "), Buffer.from("e9", "hex"), b(" note\n")]),
      additions: 1,
      deletions: 1,
      notes: ["old and new content have bytes that are not valid UTF-8; this diff shows them as U+FFFD (the file holds the original bytes)"],
      contains: ["-const x = 1;", "+const x = 2;", " // caf\u00e9 \ufffd note"],
    },
    {
      name: "C06: a Latin-1 byte in ASCII text is decoded (a guess, named in a note), only the edited line differs",
      before: Buffer.from("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a", "hex"),
      after: Buffer.from("636f6e73742078203d20323b0a2f2f20636166e9206e6f74650a", "hex"),
      additions: 1,
      deletions: 1,
      notes: ["shown decoded from windows-1252 (a guess: confidence 0.05); the file keeps its windows-1252 bytes"],
      contains: ["-const x = 1;", "+const x = 2;", " // caf\u00e9 note"],
    },
    {
      name: "mixed line endings: a line whose ending changes is shown as changed",
      before: b("a\r\nb\nc\n"),
      after: b("a\nb\nc\n"),
      additions: 1,
      deletions: 1,
      notes: ["line endings change: mixed → LF", "lines whose only change is their line ending are shown as changed"],
    },
  ];
  test.each(cases)("$name", ({ before, after, additions, deletions, notes, contains }) => {
    const d = diffFileBytes("f.txt", before, after);
    expect({ additions: d.additions, deletions: d.deletions, notes: d.notes }).toEqual({ additions, deletions, notes });
    for (const s of contains ?? []) expect(d.diff).toContain(s);
    if (additions + deletions > 0) expect(parsePatch(d.diff)).toHaveLength(1);
    if (additions + deletions === 0 && !d.diff.includes("Binary")) expect(d.diff).toBe("");
  });
});

describe("diffTexts", () => {
  test("beyond the edit-length bound it falls back to one hunk replacing every line, with exact counts", () => {
    const oldText = Array.from({ length: 1500 }, (_, i) => `old ${i}`).join("\n") + "\n";
    const newText = Array.from({ length: 1500 }, (_, i) => `new ${i}`).join("\n");
    const d = diffTexts("a/x", "b/x", oldText, newText);
    expect([d.additions, d.deletions]).toEqual([1500, 1500]);
    const [patch] = parsePatch(d.diff);
    expect(patch.hunks).toHaveLength(1);
    expect(patch.hunks[0]).toMatchObject({ oldStart: 1, oldLines: 1500, newStart: 1, newLines: 1500 });
    expect(d.diff.trimEnd().endsWith("\\ No newline at end of file")).toBe(true);
  });
});

describe("capDiff", () => {
  test.each([
    ["short diffs are untouched", "a\nb\n", 10, { diff: "a\nb\n", truncated: false }],
    ["long diffs are cut at a line boundary", "aaa\nbbb\nccc\n", 9, { diff: "aaa\nbbb\n", truncated: true }],
  ])("%s", (_name, diff, max, expected) => {
    expect(capDiff(diff, max)).toEqual(expected);
  });
});
