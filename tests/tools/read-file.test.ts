import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ToolError } from "@/lib/errors";
import { readFileTool, ReadFileInput, type ReadFileOutput } from "@/lib/tools/read-file";
import { clearLineIndexCache } from "@/lib/workspace/line-index";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";

const CAP = 12_000;

/** Runs read_file with its schema applied (defaults filled, like the gateway does). */
function read(ctx: TestContext, args: Record<string, unknown>): Promise<ReadFileOutput> {
  return readFileTool.run(ReadFileInput.parse(args), ctx);
}

async function readError(ctx: TestContext, args: Record<string, unknown>): Promise<ToolError> {
  try {
    await read(ctx, args);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error("expected a ToolError");
}

const sha256 = (b: Buffer | string) => crypto.createHash("sha256").update(b).digest("hex");
const NUMBERED = /^\s*\d+\| /;

describe("read_file: fence (C01, C02, C03, C05)", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws, { readMaxChars: CAP });
    await fs.mkdir(path.join(f.root, "proj_evil"));
    await fs.mkdir(path.join(f.root, "projX"));
    await fs.symlink(path.join(f.root, "proj-out/secret.txt"), f.at("leak.txt"));
    await fs.symlink("..", f.at("up"));
    await fs.symlink(path.join(f.root, "proj-out"), f.at("ext"));
    await fs.symlink("notes.txt", f.at("alias.txt"));
    await fs.symlink(path.join(f.root, "proj-out/created.txt"), f.at("dangle"));
    await fs.symlink("loop-b", f.at("loop-a"));
    await fs.symlink("loop-a", f.at("loop-b"));
  });
  afterEach(() => f.cleanup());

  const refused: Array<[string, (f: Fixture) => string, string, string]> = [
    ["C01-1", () => "../proj-out/secret.txt", "path_outside_workspace", "lexical"],
    ["C01-2", (x) => path.join(x.root, "proj-out/secret.txt"), "path_outside_workspace", "lexical"],
    ["C01 outside notes", (x) => path.join(x.root, "notes.txt"), "path_outside_workspace", "lexical"],
    ["C02-1", () => "leak.txt", "path_outside_workspace", "symlink"],
    ["C02-2", () => "up/proj-out/secret.txt", "path_outside_workspace", "symlink"],
    ["C02 through a dir link", () => "ext/secret.txt", "path_outside_workspace", "symlink"],
    ["C03-1 dangling outside", () => "dangle", "path_outside_workspace", "symlink"],
    ["C05-1", () => "sub/../../proj-out/secret.txt", "path_outside_workspace", "lexical"],
    ["C05-3", () => "..\\proj-out\\secret.txt", "path_invalid", "backslash"],
    ["C05-4", () => "notes.txt\u0000.png", "path_invalid", "nul_byte"],
    ["C05-5 newline", () => "notes\nfake-log-line.txt", "path_invalid", "control_char"],
    ["C05-5 escape", () => "notes\u001b[2J.txt", "path_invalid", "control_char"],
    ["C05-8 drive", () => "C:\\Windows\\win.ini", "path_invalid", "windows_drive_or_unc"],
    ["C05-8 UNC", () => "\\\\server\\share\\x.txt", "path_invalid", "windows_drive_or_unc"],
    ["C05-9 empty", () => "", "path_invalid", "empty"],
    ["symlink loop", () => "loop-a", "path_invalid", "symlink_loop"],
  ];
  it.each(refused)("%s is refused and returns nothing", async (_name, rawOf, name, reason) => {
    const raw = rawOf(f);
    const err = await readError(ctx, { path: raw });
    expect(err.errorName).toBe(name);
    expect(err.detail.reason).toBe(reason);
    expect(JSON.stringify(err.detail)).not.toContain("TOP-SECRET");
    expect(JSON.stringify(err.detail)).not.toContain("OUTSIDE-NOTES");
    expect(ctx.notes.pathRaw).toBe(raw);
  });

  const notFound: Array<[string, string]> = [
    ["C05-2 percent-encoded dots", "%2e%2e/proj-out/secret.txt"],
    ["C05-2 percent-encoded slashes", "..%2fproj-out%2fsecret.txt"],
    ["C05-6 tilde", "~/secret.txt"],
    ["C05-6 $HOME", "$HOME/.bashrc"],
    ["C05-7 fullwidth", "\uff0e\uff0e\uff0fproj-out\uff0fsecret.txt"],
    ["missing file", "nope.txt"],
    ["parent is a file", "notes.txt/x"],
  ];
  it.each(notFound)("%s reads as a literal name: not_found", async (_name, raw) => {
    expect((await readError(ctx, { path: raw })).errorName).toBe("not_found");
  });

  it("C05-9: . is a directory", async () => {
    expect((await readError(ctx, { path: "." })).errorName).toBe("is_directory");
  });

  const accepted: Array<[string, (f: Fixture) => string]> = [
    ["C01-7 absolute inside", (x) => path.join(x.ws, "notes.txt")],
    ["C02-6 inside link", () => "alias.txt"],
    ["C03-3 ext/.. is lexical", () => "ext/../notes.txt"],
    ["C05-11 ./././notes.txt", () => "./././notes.txt"],
  ];
  it.each(accepted)("%s returns 1| inside notes with the canonical path", async (_name, rawOf) => {
    const raw = rawOf(f);
    const out = await read(ctx, { path: raw });
    expect(out.content).toBe("     1| inside notes");
    expect(out.path).toBe("notes.txt");
    expect(ctx.notes).toMatchObject({ pathRaw: raw, pathResolved: f.at("notes.txt") });
  });

  it("C01-6: trailing slash on the configured root", async () => {
    const slashed = makeToolContext(`${f.ws}/`, { readMaxChars: CAP });
    expect((await readError(slashed, { path: "../proj-out/secret.txt" })).detail.reason).toBe("lexical");
    expect((await readError(slashed, { path: path.join(f.root, "proj-out/secret.txt") })).detail.reason).toBe("lexical");
    expect((await read(slashed, { path: path.join(f.ws, "notes.txt") })).content).toBe("     1| inside notes");
  });

  it("C03-4: a workspace reached through a symlinked root", async () => {
    await fs.symlink("proj", path.join(f.root, "proj-link"));
    const linked = makeToolContext(path.join(f.root, "proj-link"), { readMaxChars: CAP });
    const out = await read(linked, { path: path.join(f.root, "proj-link/notes.txt") });
    expect(out).toMatchObject({ path: "notes.txt", content: "     1| inside notes" });
    expect(linked.notes.pathResolved).toBe(f.at("notes.txt"));
  });
});

describe("read_file: contract", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws, { readMaxChars: CAP });
  });
  afterEach(() => f.cleanup());

  it("returns the documented fields and audit notes", async () => {
    const out = await read(ctx, { path: "notes.txt" });
    expect(out).toEqual({
      path: "notes.txt",
      total_lines: 1,
      offset: 0,
      limit: 80,
      returned_lines: 1,
      truncated: false,
      next_offset: null,
      content: "     1| inside notes",
      clipped_lines: [],
      encoding: "utf-8",
      encoding_confidence: 1,
      encoding_source: "utf8",
      bom: false,
      eol: "lf",
      sha256: sha256("inside notes\n"),
      size_bytes: 13,
    });
    expect(ctx.notes).toMatchObject({
      pathRaw: "notes.txt",
      pathResolved: f.at("notes.txt"),
      shaBefore: sha256("inside notes\n"),
      bytesOut: Buffer.byteLength(out.content),
      truncated: false,
    });
  });

  const files: Array<[string, string | Buffer, Record<string, unknown>, Partial<ReadFileOutput>]> = [
    ["empty file", "", {}, { total_lines: 0, content: "", returned_lines: 0, truncated: false, next_offset: null, eol: "none" }],
    ["single newline", "\n", {}, { total_lines: 1, content: "     1| ", eol: "lf" }],
    ["no final newline", "a\nb", {}, { total_lines: 2, content: "     1| a\n     2| b", eol: "lf" }],
    ["CRLF lines lose their \\r", "a\r\nb\r\n", {}, { total_lines: 2, content: "     1| a\n     2| b", eol: "crlf" }],
    ["mixed endings", "a\r\nb\nc", {}, { total_lines: 3, content: "     1| a\n     2| b\n     3| c", eol: "mixed" }],
    ["lone CR is not a line break", "a\rb\n", {}, { total_lines: 1, content: "     1| a\rb", eol: "lf" }],
    ["final CR without LF is kept", "a\r", {}, { total_lines: 1, content: "     1| a\r", eol: "none" }],
    ["UTF-8 BOM is not content", Buffer.from("\ufeffhi\n"), {}, { content: "     1| hi", bom: true, encoding: "utf-8" }],
    ["without line numbers", "x\ny\n", { include_line_numbers: false }, { content: "x\ny" }],
    ["offset and limit", "1\n2\n3\n4\n5\n", { offset: 1, limit: 2 }, { content: "     2| 2\n     3| 3", truncated: true, next_offset: 3, returned_lines: 2 }],
    ["last page", "1\n2\n3\n", { offset: 2, limit: 5 }, { content: "     3| 3", truncated: false, next_offset: null }],
    ["blank lines are lines", "a\n\n\nb\n", {}, { total_lines: 4, content: "     1| a\n     2| \n     3| \n     4| b" }],
    ["UTF-16BE with BOM", Buffer.from([0xfe, 0xff, 0x00, 0x68, 0x00, 0x69, 0x00, 0x0a, 0xd8, 0x3d, 0xde, 0x00]), {}, { content: "     1| hi\n     2| \u{1F600}", encoding: "utf-16be", bom: true, total_lines: 2 }],
  ];
  it.each(files)("%s", async (_name, data, args, expected) => {
    await f.put("f.txt", data);
    const out = await read(ctx, { path: "f.txt", ...args });
    expect(out).toMatchObject(expected);
    expect(out.sha256).toBe(sha256(data));
    expect(out.size_bytes).toBe(Buffer.byteLength(data));
  });

  it("invalid UTF-8 in UTF-8 text reads as U+FFFD with a warning", async () => {
    await f.put("stray.txt", Buffer.from([0xc3, 0xa9, 0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6b, 0x0a]));
    const out = await read(ctx, { path: "stray.txt" });
    expect(out.content).toBe("     1| \u00e9caf\ufffd\n     2| ok");
    expect(out).toMatchObject({ encoding: "utf-8", encoding_source: "fallback", encoding_warning: "invalid_utf8" });
  });

  it("a Latin-1 byte in a short note is decoded as a low-confidence guess", async () => {
    await f.put("latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6b, 0x0a]));
    const out = await read(ctx, { path: "latin1.txt" });
    expect(out.content).toBe("     1| caf\u00e9\n     2| ok");
    expect(out).toMatchObject({ encoding_source: "detected", encoding_warning: "uncertain" });
  });

  it("Latin-1 prose is decoded text, not binary", async () => {
    const prose = "Le caf\u00e9 est pr\u00eat; la f\u00eate commence \u00e0 midi.\n".repeat(40);
    await f.put("fr.txt", Buffer.from(prose, "latin1"));
    const out = await read(ctx, { path: "fr.txt", limit: 1 });
    expect(out.content).toBe("     1| Le caf\u00e9 est pr\u00eat; la f\u00eate commence \u00e0 midi.");
    expect(out).toMatchObject({ total_lines: 40, encoding_source: "detected" });
    expect(["windows-1252", "iso-8859-1", "iso-8859-15"]).toContain(out.encoding);
  });

  it("high bytes and controls without NUL are binary (non_text_bytes)", async () => {
    const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 151 + 7) % 255 + 1));
    await f.put("noise.bin", noise);
    const err = await readError(ctx, { path: "noise.bin" });
    expect(err.errorName).toBe("binary_file");
    expect(err.detail).toMatchObject({ reason: "non_text_bytes", size_bytes: 4096 });
  });

  it("valid UTF-8 has no warning", async () => {
    await f.put("ok.txt", "caf\u00e9 \u4e2d \u{1F600}\n");
    expect((await read(ctx, { path: "ok.txt" })).encoding_warning).toBeUndefined();
  });

  it("max_chars is capped by the configured cap", async () => {
    await f.put("long.txt", `${"x".repeat(20_000)}\n`);
    const out = await read(ctx, { path: "long.txt", max_chars: 50_000 });
    expect(out.content.length).toBe(CAP);
    const small = await read(ctx, { path: "long.txt", max_chars: 500 });
    expect(small.content.length).toBe(500);
    expect(small.clipped_lines).toEqual([1]);
  });

  it("a long line after others ends the page before it; the next page clips it", async () => {
    await f.put("mixed.txt", `short\n${"y".repeat(30_000)}\nafter\n`);
    const first = await read(ctx, { path: "mixed.txt" });
    expect(first).toMatchObject({ content: "     1| short", returned_lines: 1, truncated: true, next_offset: 1, clipped_lines: [] });
    const second = await read(ctx, { path: "mixed.txt", offset: first.next_offset });
    expect(second).toMatchObject({ returned_lines: 1, clipped_lines: [2], truncated: true, next_offset: 2 });
    expect(second.content.length).toBe(CAP);
    const third = await read(ctx, { path: "mixed.txt", offset: second.next_offset });
    expect(third).toMatchObject({ content: "     3| after", truncated: false, next_offset: null });
  });

  it.each([
    ["a directory", "sub", "is_directory"],
    ["a missing file", "missing.txt", "not_found"],
  ])("refuses %s", async (_name, rel, name) => {
    await f.put("sub/x.txt", "x");
    expect((await readError(ctx, { path: rel })).errorName).toBe(name);
  });

  it.each([
    ["limit over 2000", { path: "notes.txt", limit: 2001 }],
    ["limit 0", { path: "notes.txt", limit: 0 }],
    ["negative offset", { path: "notes.txt", offset: -1 }],
    ["fractional offset", { path: "notes.txt", offset: 1.5 }],
    ["unknown argument", { path: "notes.txt", lines: 3 }],
    ["tiny max_chars", { path: "notes.txt", max_chars: 5 }],
  ])("schema refuses %s", (_name, args) => {
    expect(ReadFileInput.safeParse(args).success).toBe(false);
  });
});

describe("read_file: binary, UTF-16 and CJK (C10)", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws, { readMaxChars: CAP });
    await f.put("logo.txt", Buffer.concat([Buffer.from("89504E470D0A1A0A0000000D49484452", "hex"), Buffer.alloc(1000)]));
    await f.put("win.txt", Buffer.from([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00, 0x0d, 0x00, 0x0a, 0x00]));
    await f.put("cjk.md", Buffer.from("\u4e2d".repeat(334)));
  });
  afterEach(() => f.cleanup());

  it("logo.txt is binary_file with size and reason, no content", async () => {
    const err = await readError(ctx, { path: "logo.txt" });
    expect(err.errorName).toBe("binary_file");
    expect(err.detail).toMatchObject({ size_bytes: 1016, reason: "nul_byte" });
  });

  it("win.txt (UTF-16LE with BOM) is decoded", async () => {
    const out = await read(ctx, { path: "win.txt" });
    expect(out).toMatchObject({ content: "     1| hi", encoding: "utf-16le", bom: true, eol: "crlf", total_lines: 1 });
    expect(out.content).not.toContain("\u0000");
  });

  it("cjk.md (a sample would end mid-character) is text", async () => {
    const out = await read(ctx, { path: "cjk.md" });
    expect(out.content).toBe(`     1| ${"\u4e2d".repeat(334)}`);
    expect(out.encoding_warning).toBeUndefined();
  });

  it.each([
    ["NUL after a UTF-8 BOM", Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0x00, 0x62])],
    ["UTF-32LE (its BOM is not UTF-16)", Buffer.from([0xff, 0xfe, 0x00, 0x00, 0x68, 0x00, 0x00, 0x00])],
    ["UTF-16LE holding U+0000", Buffer.from([0xff, 0xfe, 0x68, 0x00, 0x00, 0x00])],
    ["UTF-16 without a BOM", Buffer.from("hi\n", "utf16le")],
    ["gzip", Buffer.from("1f8b0800000000000003", "hex")],
  ])("%s is binary_file", async (_name, data) => {
    await f.put("b.bin", data);
    expect((await readError(ctx, { path: "b.bin" })).errorName).toBe("binary_file");
  });

  it("a NUL past the sniffed start is refused when the page reaches it", async () => {
    await f.put("late.txt", Buffer.concat([Buffer.from("text\n".repeat(4000)), Buffer.from("a\u0000b\n")]));
    expect((await read(ctx, { path: "late.txt", limit: 3 })).content).toBe("     1| text\n     2| text\n     3| text");
    const err = await readError(ctx, { path: "late.txt", offset: 3999, limit: 5 });
    expect(err.errorName).toBe("binary_file");
    expect(err.detail.reason).toBe("nul_byte");
  });
});

describe("read_file: one huge line against the cap (C11)", () => {
  let f: Fixture;
  let ctx: TestContext;
  beforeEach(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws, { readMaxChars: CAP });
  });
  afterEach(() => f.cleanup());

  it("C11-1: bundle.min.js is clipped, marked, and offers no continuation", async () => {
    await f.put("bundle.min.js", "var a=0;".repeat(262_144));
    const out = await read(ctx, { path: "bundle.min.js", offset: 0, limit: 2000 });
    expect(out).toMatchObject({ total_lines: 1, truncated: true, clipped_lines: [1], next_offset: null, returned_lines: 1 });
    expect(out.content.length).toBeLessThanOrEqual(CAP);
    expect(out.content.startsWith("     1| var a=0;")).toBe(true);
    expect(ctx.notes).toMatchObject({ truncated: true, bytesOut: Buffer.byteLength(out.content) });
  });

  // The emoji straddles the cap for every prefix width the tool could use.
  it.each([4, 5, 7, 8, 9, 10])("C11-2: an emoji at the cap is never split (a x CAP-%i)", async (back) => {
    await f.put("edge.txt", `${"a".repeat(CAP - back)}\u{1F600}bbb\n`);
    for (const include_line_numbers of [true, false]) {
      const out = await read(ctx, { path: "edge.txt", offset: 0, limit: 10, include_line_numbers });
      const json = JSON.stringify(out.content);
      expect(json).not.toMatch(/\\ud83d(?!\\ude00)/i);
      expect(out.content).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
      expect(out.content).not.toContain("\ufffd");
      expect(out.content.length).toBeLessThanOrEqual(CAP);
      const fits = (include_line_numbers ? 8 : 0) + CAP - back + 5 <= CAP;
      expect(out.clipped_lines).toEqual(fits ? [] : [1]);
      const whole = `${include_line_numbers ? "     1| " : ""}${"a".repeat(CAP - back)}\u{1F600}bbb`;
      expect(whole.startsWith(out.content)).toBe(true);
      expect(out.content.length).toBeGreaterThanOrEqual(Math.min(whole.length, CAP) - 1);
      expect(out.next_offset).toBeNull();
    }
  });

  it("C11: a clipped 4-byte character in the byte budget is dropped, not replaced", async () => {
    await f.put("emoji.txt", `${"\u{1F600}".repeat(20_000)}\n`);
    const out = await read(ctx, { path: "emoji.txt", include_line_numbers: false });
    expect(out.content).toBe("\u{1F600}".repeat(CAP / 2));
  });
});

describe("read_file: 500,000 lines (C12)", () => {
  let f: Fixture;
  let ctx: TestContext;
  const lines = 500_000;
  beforeAll(async () => {
    f = await makeFixture();
    ctx = makeToolContext(f.ws, { readMaxChars: CAP });
    const out: string[] = [];
    for (let i = 1; i <= lines; i++) out.push(`line-${String(i).padStart(6, "0")}\n`);
    await f.put("big.log", out.join(""));
  });
  afterAll(() => f.cleanup());

  const steps: Array<[string, Record<string, unknown>, Partial<ReadFileOutput>]> = [
    ["C12-1 first page", { offset: 0, limit: 3 }, { content: "     1| line-000001\n     2| line-000002\n     3| line-000003", total_lines: lines, truncated: true, next_offset: 3 }],
    ["C12-2 last page", { offset: 499_998, limit: 5 }, { content: "499999| line-499999\n500000| line-500000", total_lines: lines, truncated: false, returned_lines: 2, next_offset: null }],
    ["C12-4 middle without numbers", { offset: 249_999, limit: 3, include_line_numbers: false }, { content: "line-250000\nline-250001\nline-250002", next_offset: 250_002 }],
    ["index step boundary", { offset: 1023, limit: 2, include_line_numbers: false }, { content: "line-001024\nline-001025" }],
    ["index step boundary +1", { offset: 1024, limit: 1, include_line_numbers: false }, { content: "line-001025" }],
    ["last line", { offset: 499_999, limit: 1 }, { content: "500000| line-500000", truncated: false }],
  ];

  it.each(steps)("%s, cold and from the cached index", async (_name, args, expected) => {
    clearLineIndexCache();
    const cold = await read(ctx, { path: "big.log", ...args });
    expect(cold).toMatchObject({ ...expected, size_bytes: 6_000_000, eol: "lf" });
    const warm = await read(ctx, { path: "big.log", ...args });
    expect(warm).toEqual(cold);
  });

  it("C12-3: offset past the end is offset_out_of_range with total_lines", async () => {
    for (const warm of [false, true]) {
      if (!warm) clearLineIndexCache();
      const err = await readError(ctx, { path: "big.log", offset: 500_000, limit: 5 });
      expect(err.errorName).toBe("offset_out_of_range");
      expect(err.detail.total_lines).toBe(lines);
    }
  });

  it("2000-line pages stop at the character cap and continue where they stopped", async () => {
    const out = await read(ctx, { path: "big.log", offset: 10, limit: 2000 });
    expect(out.content.length).toBeLessThanOrEqual(CAP);
    expect(out.clipped_lines).toEqual([]);
    const numbered = out.content.split("\n");
    expect(numbered.every((l) => NUMBERED.test(l))).toBe(true);
    expect(out.next_offset).toBe(10 + out.returned_lines);
    const next = await read(ctx, { path: "big.log", offset: out.next_offset, limit: 1 });
    expect(next.content).toBe(`${String(out.next_offset! + 1).padStart(6)}| line-${String(out.next_offset! + 1).padStart(6, "0")}`);
  });

  it("the cache notices an in-place change of the file", async () => {
    const small = "one\ntwo\n";
    await f.put("changing.txt", small);
    expect((await read(ctx, { path: "changing.txt" })).total_lines).toBe(2);
    const fh = await fs.open(f.at("changing.txt"), "r+");
    await fh.write("ONE\ntwo\nthree\n", 0);
    await fh.close();
    const after = await read(ctx, { path: "changing.txt" });
    expect(after).toMatchObject({ total_lines: 3, content: "     1| ONE\n     2| two\n     3| three" });
    expect(after.sha256).toBe(sha256("ONE\ntwo\nthree\n"));
  });

  it("an empty file is an empty page at offset 0 and out of range after", async () => {
    await f.put("empty.txt", "");
    expect((await read(ctx, { path: "empty.txt" })).content).toBe("");
    expect((await readError(ctx, { path: "empty.txt", offset: 1 })).detail).toMatchObject({ total_lines: 0 });
  });
});
