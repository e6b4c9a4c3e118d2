import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { editFileTool } from "@/lib/tools/edit-file";
import { writeFileTool } from "@/lib/tools/write-file";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";
import { call, expectError, hex, okData, shaOf, snapshot } from "@/tests/tools/write-tool-helpers";

let f: Fixture;
let ctx: TestContext;
beforeEach(async () => {
  f = await makeFixture();
  ctx = makeToolContext(f.ws);
});
afterEach(async () => {
  await f.cleanup();
});

const BOM8 = hex("EFBBBF");
const edit = (args: Record<string, unknown>, c: TestContext = ctx) => call(editFileTool, args, c);

const LEGACY = hex("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a");
/** UTF-8 text with one stray byte (E9): stays UTF-8 and is edited as bytes. */
const STRAY = Buffer.concat([Buffer.from("const x = 1;\n// caf\u00e9 "), hex("e9"), Buffer.from(" note\n")]);
const CSPROJ = Buffer.concat([BOM8, Buffer.from("<Project>\r\n  <Name>Caf\u00e9</Name>\r\n</Project>\r\n")]);
const APP_PY = Buffer.from('def greet(name):\r\n    print("hello")\r\n\r\ndef add(a, b):\r\n    return a + b\r\n');
const APP_PY_EDITED = Buffer.from('def greet(name):\r\n    print("hi")\r\n    return None\r\n\r\ndef add(a, b):\r\n    return a + b\r\n');
const WIN = hex("FFFE 6800 6900 0D00 0A00");
const LOGO = Buffer.concat([hex("89504E470D0A1A0A0000000D49484452"), Buffer.alloc(1000)]);

describe("edit_file: encodings, BOM and line endings keep every untouched byte (C06, C07, C08, C10)", () => {
  const cases: Array<{ name: string; file: Buffer; args: Record<string, unknown>; expected: Buffer; sha?: RegExp; counts?: [number, number] }> = [
    {
      name: "C06-2 invalid UTF-8 elsewhere survives a byte-exact splice",
      file: LEGACY,
      args: { old_string: "const x = 1;", new_string: "const x = 2;" },
      expected: hex("636f6e73742078203d20323b0a2f2f20636166e9206e6f74650a"),
      sha: /^a587acad[0-9a-f]{48}3147e0c5$/,
      counts: [1, 1],
    },
    {
      name: "a non-ASCII replacement in UTF-8 text with a stray invalid byte is written as UTF-8",
      file: STRAY,
      args: { old_string: "note", new_string: "n\u00f6te \u4e2d" },
      expected: Buffer.concat([Buffer.from("const x = 1;\n// caf\u00e9 "), hex("e9"), Buffer.from(" n\u00f6te \u4e2d\n")]),
    },
    {
      name: "a stray invalid byte in UTF-8 text survives a byte-exact splice",
      file: STRAY,
      args: { old_string: "const x = 1;", new_string: "const x = 2;" },
      expected: Buffer.concat([Buffer.from("const x = 2;\n// caf\u00e9 "), hex("e9"), Buffer.from(" note\n")]),
      counts: [1, 1],
    },
    {
      name: "C07-2 BOM + CRLF: one BOM, CRLF kept",
      file: CSPROJ,
      args: { old_string: "Caf\u00e9</Name>", new_string: "Caf\u00e9 2</Name>" },
      expected: Buffer.concat([BOM8, Buffer.from("<Project>\r\n  <Name>Caf\u00e9 2</Name>\r\n</Project>\r\n")]),
      sha: /^d028a737[0-9a-f]{48}178c190c$/,
      counts: [1, 1],
    },
    {
      name: "C07 an old_string and new_string copied with a BOM do not add a second one",
      file: CSPROJ,
      args: { old_string: "\ufeff<Project>\r\n", new_string: "\ufeff<Project Sdk=\"x\">\r\n" },
      expected: Buffer.concat([BOM8, Buffer.from('<Project Sdk="x">\r\n  <Name>Caf\u00e9</Name>\r\n</Project>\r\n')]),
    },
    {
      name: "C07 a new_string starting with U+FEFF at the start of a BOM file does not add a second one",
      file: CSPROJ,
      args: { old_string: "<Project>", new_string: "\ufeff<Project2>" },
      expected: Buffer.concat([BOM8, Buffer.from("<Project2>\r\n  <Name>Caf\u00e9</Name>\r\n</Project>\r\n")]),
    },
    {
      name: "C08-2 LF old_string in a CRLF file; replacement written with CRLF",
      file: APP_PY,
      args: { old_string: '    print("hello")\n', new_string: '    print("hi")\n    return None\n' },
      expected: APP_PY_EDITED,
      sha: /^8b73265f[0-9a-f]{48}fffd005f$/,
      counts: [2, 1],
    },
    {
      name: "C08-3 CRLF in both strings gives the same bytes",
      file: APP_PY,
      args: { old_string: '    print("hello")\r\n', new_string: '    print("hi")\r\n    return None\r\n' },
      expected: APP_PY_EDITED,
      sha: /^8b73265f[0-9a-f]{48}fffd005f$/,
      counts: [2, 1],
    },
    {
      name: "C08 CRLF old_string with LF new_string in a CRLF file: still CRLF",
      file: APP_PY,
      args: { old_string: '    print("hello")\r\n', new_string: '    print("hi")\n    return None\n' },
      expected: APP_PY_EDITED,
    },
    {
      name: "C08 a multi-line LF old_string spanning CRLF breaks",
      file: APP_PY,
      args: { old_string: 'def greet(name):\n    print("hello")\n\ndef add', new_string: "def add" },
      expected: Buffer.from("def add(a, b):\r\n    return a + b\r\n"),
    },
    {
      name: "LF file: a CRLF old_string still matches; the replacement is LF",
      file: Buffer.from("a\nb\nc\n"),
      args: { old_string: "a\r\nb\r\n", new_string: "x\r\n" },
      expected: Buffer.from("x\nc\n"),
    },
    {
      name: "LF file: a CRLF new_string follows the file (LF)",
      file: Buffer.from("a\nb\n"),
      args: { old_string: "a\n", new_string: "x\r\ny\r\n" },
      expected: Buffer.from("x\ny\nb\n"),
    },
    {
      name: "mixed file: the replacement takes the ending of the line it lands on",
      file: Buffer.from("a\r\nb\nc\r\n"),
      args: { old_string: "c", new_string: "c1\nc2" },
      expected: Buffer.from("a\r\nb\nc1\r\nc2\r\n"),
    },
    {
      name: "mixed file: the replacement of an LF span stays LF",
      file: Buffer.from("a\r\nb\nc\r\n"),
      args: { old_string: "b\n", new_string: "b1\nb2\n" },
      expected: Buffer.from("a\r\nb1\nb2\nc\r\n"),
    },
    {
      name: "C10-3 UTF-16LE round-trips in UTF-16LE with BOM",
      file: WIN,
      args: { old_string: "hi", new_string: "yo" },
      expected: hex("FFFE 7900 6F00 0D00 0A00"),
    },
    {
      name: "UTF-16BE with an LF old_string across a CRLF break",
      file: hex("FEFF 0061 000D 000A 0062"),
      args: { old_string: "a\nb", new_string: "c\nd" },
      expected: hex("FEFF 0063 000D 000A 0064"),
    },
  ];
  test.each(cases)("$name", async ({ file, args, expected, sha, counts }) => {
    await f.put("t.txt", file);
    const data = okData(await edit({ path: "t.txt", ...args }));
    const bytes = await fs.readFile(f.at("t.txt"));
    expect(bytes.toString("hex")).toBe(expected.toString("hex"));
    expect(data.sha256).toBe(shaOf(expected));
    if (sha) expect(data.sha256).toMatch(sha);
    if (counts) expect([data.additions, data.deletions]).toEqual(counts);
    expect(bytes.includes(hex("EFBFBD"))).toBe(false);
    expect(bytes.includes(Buffer.from("\r\r\n"))).toBe(false);
    expect(ctx.savedBackups[0].bytes.equals(file)).toBe(true);
    expect(data.diff).not.toContain("\ufeff");
  });

  test("C06 the case's original hash is what legacy.js's bytes give", () => {
    expect(shaOf(LEGACY)).toMatch(/^6b402505[0-9a-f]{48}b299eb51$/);
    expect(shaOf(CSPROJ)).toMatch(/^c4ff8e1a[0-9a-f]{48}b79ca069$/);
  });

  const refusals: Array<{ name: string; file: Buffer; args: Record<string, unknown>; error: string; detail?: Record<string, unknown> }> = [
    { name: "C10-2 binary file", file: LOGO, args: { old_string: "PNG", new_string: "JPG" }, error: "binary_file", detail: { reason: "nul_byte", size_bytes: 1016 } },
    {
      name: "new_string adding U+FFFD to UTF-8 text with invalid bytes",
      file: STRAY,
      args: { old_string: "note", new_string: "n\ufffdte" },
      error: "encoding_unsupported",
      detail: { reason: "replacement_character" },
    },
    {
      name: "C06 non-ASCII new_string where the Latin-1 encoding is only a guess",
      file: LEGACY,
      args: { old_string: "note", new_string: "n\u00f6te" },
      error: "encoding_unsupported",
      detail: { reason: "uncertain_encoding" },
    },
    {
      name: "C06 old_string holding the U+FFFD read_file showed (cannot match the raw byte)",
      file: LEGACY,
      args: { old_string: "// caf\ufffd note", new_string: "// cafe note" },
      error: "edit_no_match",
      detail: { closest_line: 2 },
    },
    { name: "odd-length UTF-16", file: hex("FFFE 6800 69"), args: { old_string: "h", new_string: "j" }, error: "encoding_unsupported", detail: { reason: "utf16_odd_length" } },
    {
      name: "a change of line endings only is a no-op in a CRLF file",
      file: APP_PY,
      args: { old_string: "def add(a, b):\r\n", new_string: "def add(a, b):\n" },
      error: "edit_noop",
    },
    { name: "a lone surrogate in new_string", file: Buffer.from("a\n"), args: { old_string: "a", new_string: "\udc00" }, error: "invalid_arguments", detail: { reason: "lone_surrogate" } },
  ];
  test.each(refusals)("refuses: $name → $error, bytes unchanged, no backup", async ({ file, args, error, detail }) => {
    await f.put("t.txt", file);
    expectError(await edit({ path: "t.txt", ...args }), error, detail);
    expect((await fs.readFile(f.at("t.txt"))).equals(file)).toBe(true);
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("the no-match message explains U+FFFD", async () => {
    await f.put("legacy.js", STRAY);
    const err = expectError(await edit({ path: "legacy.js", old_string: "caf\u00e9 \ufffd", new_string: "cafe" }), "edit_no_match");
    expect(err.message).toContain("U+FFFD");
    expect(err.message).toContain("read_file");
  });
});

describe("edit_file: ambiguous, overlapping, empty, no-op and missing edits (C17)", () => {
  const DUP = "foo\nfoo\nfoo\n";
  beforeEach(async () => {
    await f.put("dup.txt", DUP);
  });

  test("the case's hash is what dup.txt's bytes give", () => {
    expect(shaOf(DUP)).toMatch(/^2c728954[0-9a-f]{48}55e51ee9$/);
  });

  const cases: Array<{ name: string; args: Record<string, unknown>; error: string; detail?: Record<string, unknown> }> = [
    { name: "C17-1 overlapping occurrences counted", args: { old_string: "foo\nfoo\n", new_string: "bar\n" }, error: "edit_ambiguous", detail: { count: 2, lines: [1, 2] } },
    { name: "C17-2 three occurrences", args: { old_string: "foo", new_string: "bar" }, error: "edit_ambiguous", detail: { count: 3, lines: [1, 2, 3] } },
    { name: "C17-3 empty old_string", args: { old_string: "", new_string: "x" }, error: "edit_empty_old_string" },
    { name: "C17-4 identical strings", args: { old_string: "foo", new_string: "foo" }, error: "edit_noop" },
    { name: "C17-5 no match, closest line named", args: { old_string: "fo0", new_string: "bar" }, error: "edit_no_match", detail: { closest_line: 1, closest_text: "foo" } },
    { name: "missing file", args: { path: "nope.txt", old_string: "a", new_string: "b" }, error: "not_found" },
    { name: "C02-style: a directory", args: { path: ".", old_string: "a", new_string: "b" }, error: "is_directory" },
  ];
  test.each(cases)("$name → $error; sha256 stays 2c728954…, no backup", async ({ args, error, detail }) => {
    const err = expectError(await edit({ path: "dup.txt", ...args }), error, detail);
    expect(err.detail).not.toHaveProperty("stack");
    expect(shaOf(await fs.readFile(f.at("dup.txt")))).toMatch(/^2c728954[0-9a-f]{48}55e51ee9$/);
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("C17-5 the no-match message points to read_file and names the closest line", async () => {
    const err = expectError(await edit({ path: "dup.txt", old_string: "fo0", new_string: "bar" }), "edit_no_match");
    expect(err.message).toMatch(/read_file/);
    expect(err.message).toContain('line 1: "foo"');
  });

  test("C17-6 indentation is exactly as given", async () => {
    await f.put("ind.py", "def f():\n    a = 1\n    b = 2\n");
    okData(await edit({ path: "ind.py", old_string: "    a = 1\n    b = 2\n", new_string: "    a = 10\n    b = 20\n" }));
    expect(await fs.readFile(f.at("ind.py"), "utf8")).toBe("def f():\n    a = 10\n    b = 20\n");
  });

  test("no match with wrong indentation names the line that differs only in whitespace", async () => {
    await f.put("ind.py", "def f():\n    a = 1\n    b = 2\n");
    expectError(await edit({ path: "ind.py", old_string: "\tb = 2\n", new_string: "\tb = 3\n" }), "edit_no_match", { closest_line: 3, closest_text: "    b = 2" });
  });

  const replaceAll: Array<{ name: string; file: string; old: string; neu: string; expected: string; replacements: number }> = [
    { name: "replaces every occurrence", file: DUP, old: "foo", neu: "bar", expected: "bar\nbar\nbar\n", replacements: 3 },
    { name: "overlapping occurrences replaced left to right, without overlap", file: DUP, old: "foo\nfoo\n", neu: "bar\n", expected: "bar\nfoo\n", replacements: 1 },
    { name: "a single occurrence", file: "a b\n", old: "a", neu: "c", expected: "c b\n", replacements: 1 },
  ];
  test.each(replaceAll)("replace_all: $name", async ({ file, old, neu, expected, replacements }) => {
    await f.put("r.txt", file);
    const data = okData(await edit({ path: "r.txt", old_string: old, new_string: neu, replace_all: true }));
    expect(await fs.readFile(f.at("r.txt"), "utf8")).toBe(expected);
    expect(data.replacements).toBe(replacements);
  });

  test("edit_ambiguous lists at most 100 start lines but counts every occurrence", async () => {
    await f.put("many.txt", "x\n".repeat(250));
    expectError(await edit({ path: "many.txt", old_string: "x", new_string: "y" }), "edit_ambiguous", { count: 250, lines: Array.from({ length: 100 }, (_, i) => i + 1) });
  });

  test("a single replacement reports its line", async () => {
    await f.put("l.txt", "a\nb\nc\n");
    expect(okData(await edit({ path: "l.txt", old_string: "c", new_string: "C" }))).toMatchObject({ replacements: 1, lines: [3], additions: 1, deletions: 1 });
  });
});

describe("edit_file: fence, stale content, queued conflict, preview", () => {
  test("C02-4 a symlink leading outside is refused; the secret is untouched", async () => {
    await fs.symlink(path.join(f.root, "proj-out", "secret.txt"), f.at("leak.txt"));
    const before = await snapshot(f.root);
    expectError(await edit({ path: "leak.txt", old_string: "TOP", new_string: "TOPX" }), "path_outside_workspace", { reason: "symlink" });
    expect(await snapshot(f.root)).toEqual(before);
  });

  test("expected_sha256 mismatch → stale_content with the current sha256 (C15)", async () => {
    expectError(await edit({ path: "notes.txt", old_string: "inside", new_string: "in", expected_sha256: "0".repeat(64) }), "stale_content", {
      current_sha256: shaOf("inside notes\n"),
    });
    expect(await fs.readFile(f.at("notes.txt"), "utf8")).toBe("inside notes\n");
  });

  test("expected_sha256 match → edited", async () => {
    okData(await edit({ path: "notes.txt", old_string: "inside", new_string: "in", expected_sha256: shaOf("inside notes\n") }));
    expect(await fs.readFile(f.at("notes.txt"), "utf8")).toBe("in notes\n");
  });

  test("an approved edit whose target changed after queueing → conflict, nothing written", async () => {
    ctx.queuedTargetSha256 = shaOf("something else\n");
    expectError(await edit({ path: "notes.txt", old_string: "inside", new_string: "in" }), "conflict", {
      current_sha256: shaOf("inside notes\n"),
      queued_sha256: shaOf("something else\n"),
    });
    expect(await fs.readFile(f.at("notes.txt"), "utf8")).toBe("inside notes\n");
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("preview shows the diff and the target sha256 without writing", async () => {
    await f.put("app.py", APP_PY);
    const before = await snapshot(f.root);
    const preview = await editFileTool.preview!(
      editFileTool.input.parse({ path: "app.py", old_string: '    print("hello")\n', new_string: '    print("hi")\n    return None\n' }),
      ctx,
    );
    expect(preview).toMatchObject({ path: "app.py", targetSha256: shaOf(APP_PY), additions: 2, deletions: 1, warnings: [] });
    expect(preview.diff).toContain('+    print("hi")');
    expect(await snapshot(f.root)).toEqual(before);
  });

  test.each([
    [{ old_string: "", new_string: "x" }, "edit_empty_old_string"],
    [{ old_string: "foo", new_string: "foo" }, "edit_noop"],
    [{ old_string: "absent", new_string: "x" }, "edit_no_match"],
  ])("preview refuses an edit that cannot apply: %o → %s", async (args, name) => {
    await expect(editFileTool.preview!(editFileTool.input.parse({ path: "notes.txt", ...args }), ctx)).rejects.toMatchObject({ errorName: name });
  });

  test("preview of an edit in a file with invalid UTF-8 warns that those bytes are kept", async () => {
    await f.put("legacy.js", STRAY);
    const preview = await editFileTool.preview!(editFileTool.input.parse({ path: "legacy.js", old_string: "const x = 1;", new_string: "const x = 2;" }), ctx);
    expect(preview.warnings).toContain("the file has bytes that are not valid UTF-8; they were kept byte for byte");
    expect(preview.diff).toContain(" // caf\u00e9 \ufffd note");
  });

  test("C06 preview of an edit in a Latin-1 file shows decoded text and names the guessed encoding", async () => {
    await f.put("legacy.js", LEGACY);
    const preview = await editFileTool.preview!(editFileTool.input.parse({ path: "legacy.js", old_string: "const x = 1;", new_string: "const x = 2;" }), ctx);
    expect(preview.diff).toContain(" // caf\u00e9 note");
    expect(preview.warnings?.join("\n")).toMatch(/shown decoded from windows-1252/);
  });
});

describe("edit_file and write_file on a file past the size limit", () => {
  test("refuses with payload_too_large before reading it, leaving the file alone", async () => {
    const f = await makeFixture();
    try {
      await f.put("big.txt", "xx\n".repeat(2000));
      const ctx = makeToolContext(f.ws, { maxBodyBytes: 4096 });
      for (const run of [
        () => editFileTool.run(editFileTool.input.parse({ path: "big.txt", old_string: "xx", new_string: "z", replace_all: true }), ctx),
        () => writeFileTool.run(writeFileTool.input.parse({ path: "big.txt", content: "small\n" }), ctx),
      ]) {
        await expect(run()).rejects.toMatchObject({ errorName: "payload_too_large", detail: { reason: "file_too_large", size_bytes: 6000, limit_bytes: 4096 } });
      }
      expect(await fs.readFile(f.at("big.txt"), "utf8")).toBe("xx\n".repeat(2000));
      expect(ctx.savedBackups).toHaveLength(0);
    } finally {
      await f.cleanup();
    }
  });
});
