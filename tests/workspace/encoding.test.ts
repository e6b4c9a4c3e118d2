import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { loadConfig } from "@/lib/config";
import { ToolError } from "@/lib/errors";
import {
  canonicalEncoding,
  chooseEncoding,
  decodeBytes,
  encodeString,
  mostlyUtf8,
  requireEncoding,
  roundTrips,
  SURE_CONFIDENCE,
  unrepresentable,
} from "@/lib/workspace/encoding";
import { detectBom, editableText, profileText } from "@/lib/workspace/text";

/** Bytes from glibc's iconv, the reference encoder. */
function iconv(text: string, to: string): Buffer {
  return execFileSync("iconv", ["-f", "UTF-8", "-t", to], { input: Buffer.from(text, "utf8") });
}

function toolError(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a ToolError");
}

const choose = (bytes: Buffer, opts: { requested?: string; legacy?: string } = {}) => chooseEncoding(bytes, detectBom(bytes), { ...opts, complete: true });

describe("encoding names", () => {
  test.each([
    ["GBK", "gbk"],
    ["cp936", "gbk"],
    ["GB2312", "gbk"],
    ["GB18030", "gb18030"],
    ["Big5", "big5"],
    ["Big5-HKSCS", "big5"],
    ["Shift_JIS", "shift_jis"],
    ["SJIS", "shift_jis"],
    ["CP932", "shift_jis"],
    ["EUC-KR", "euc-kr"],
    ["cp949", "euc-kr"],
    ["cp1252", "windows-1252"],
    ["Windows-1252", "windows-1252"],
    ["latin1", "iso-8859-1"],
    ["ISO8859-15", "iso-8859-15"],
    ["UTF8", "utf-8"],
    ["utf-16le", "utf-16le"],
  ])("%s is %s", (name, canonical) => {
    expect(canonicalEncoding(name)).toBe(canonical);
  });

  test("stateful and ASCII-looking encodings are not offered (HZ, ISO-2022, UTF-7)", () => {
    for (const name of ["hz-gb-2312", "iso-2022-jp", "utf-7", "klingon"]) {
      expect(canonicalEncoding(name)).toBeNull();
      expect(toolError(() => requireEncoding(name, "encoding")).detail).toMatchObject({ reason: "unknown_encoding", argument: "encoding" });
    }
  });

  test("AGENT_REACH_LEGACY_ENCODING takes any spelling of a legacy encoding and refuses others", () => {
    const env = (v: string) => ({ AGENT_REACH_LEGACY_ENCODING: v }) as unknown as NodeJS.ProcessEnv;
    expect(loadConfig(env("GB18030")).legacyEncoding).toBe("gb18030");
    expect(loadConfig(env("cp1252")).legacyEncoding).toBe("windows-1252");
    expect(loadConfig(env("")).legacyEncoding).toBeNull();
    expect(loadConfig({} as NodeJS.ProcessEnv).legacyEncoding).toBeNull();
    expect(() => loadConfig(env("utf-16le"))).toThrow(/AGENT_REACH_LEGACY_ENCODING/);
    expect(() => loadConfig(env("ebcdic"))).toThrow(/AGENT_REACH_LEGACY_ENCODING/);
  });
});

describe("chooseEncoding: the order of evidence", () => {
  const gbk = iconv("# 配置文件：服务器设置\nname = 张三\n# 计算用户的总金额，返回结果。\n", "GBK");

  test("a BOM wins, and an argument that contradicts it is refused", () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hi", "utf16le")]);
    expect(choose(bytes)).toMatchObject({ encoding: "utf-16le", source: "bom", confidence: 1 });
    expect(toolError(() => choose(bytes, { requested: "gbk" })).detail).toMatchObject({ reason: "bom_mismatch" });
  });

  test("pure ASCII and valid UTF-8 are UTF-8, whatever the workspace setting", () => {
    expect(choose(Buffer.from("~{<:Ky2;S{#~}\n"), { legacy: "gbk" })).toMatchObject({ encoding: "utf-8", source: "utf8" });
    expect(choose(Buffer.from("中文\n"), { legacy: "gb18030" })).toMatchObject({ encoding: "utf-8", source: "utf8" });
  });

  test("the workspace setting wins over a guess, when the bytes decode exactly in it", () => {
    expect(choose(gbk, { legacy: "gb18030" })).toMatchObject({ encoding: "gb18030", source: "workspace_setting", sure: true });
    // Not GBK bytes (E9 followed by a line break is no GBK pair): the setting does not apply, detection does.
    const latin = iconv("Le caf\u00e9\nest pr\u00eat\n", "CP1252");
    expect(roundTrips(latin, "gbk")).toBe(false);
    expect(choose(latin, { legacy: "gbk" })).toMatchObject({ encoding: "windows-1252", source: "detected" });
  });

  test("an argument wins over the setting and the detector", () => {
    expect(choose(gbk, { requested: "big5", legacy: "gb18030" })).toMatchObject({ encoding: "big5", source: "argument", sure: true });
  });

  test("a confident guess is sure; GBK bytes are reported as gbk, not gb18030", () => {
    const c = choose(gbk);
    expect(c).toMatchObject({ encoding: "gbk", source: "detected" });
    expect(c.confidence).toBeGreaterThanOrEqual(SURE_CONFIDENCE);
    expect(c.sure).toBe(true);
  });

  test("stray bytes in UTF-8 text keep it UTF-8 (fallback), not a Latin guess of mojibake", () => {
    const bytes = Buffer.concat([Buffer.from("中文 café "), Buffer.from([0xe9]), Buffer.from("\n")]);
    expect(mostlyUtf8(bytes)).toBe(true);
    expect(choose(bytes)).toMatchObject({ encoding: "utf-8", source: "fallback" });
    expect(mostlyUtf8(gbk)).toBe(false);
  });

  test("a sample cut inside a character is judged up to its last line break", () => {
    const utf8 = Buffer.from("第一行\n第二行\n");
    const cut = utf8.subarray(0, utf8.length - 2);
    expect(chooseEncoding(cut, null, { complete: false })).toMatchObject({ encoding: "utf-8", source: "utf8" });
  });
});

describe("encode, decode and what an encoding cannot hold", () => {
  test.each([
    ["gbk", "GBK", "中文：张三，李四。"],
    ["gb18030", "GB18030", "中文 𠀀 €"],
    ["big5", "BIG5", "繁體中文：張三"],
    ["shift_jis", "SHIFT_JIS", "日本語：山田太郎、カタカナ"],
    ["euc-kr", "EUC-KR", "한국어: 홍길동"],
    ["windows-1252", "CP1252", "café € “quotes” …"],
  ])("%s matches glibc iconv both ways", (encoding, iconvName, text) => {
    const reference = iconv(text, iconvName);
    expect(encodeString(text, encoding).equals(reference)).toBe(true);
    expect(decodeBytes(reference, encoding)).toBe(text);
    expect(roundTrips(reference, encoding)).toBe(true);
  });

  test("unrepresentable characters are listed by code point, first few only", () => {
    expect(unrepresentable("ok 😀 € 한", "gbk")).toEqual(["U+1F600", "U+D55C"]);
    expect(unrepresentable("\u00a5", "shift_jis")).toEqual(["U+00A5"]);
    expect(unrepresentable("\u0100", "windows-1252")).toEqual(["U+0100"]);
    const err = toolError(() => encodeString("x\u0100", "windows-1252", "content"));
    expect(err.errorName).toBe("encoding_unsupported");
    expect(err.detail).toMatchObject({ reason: "unrepresentable", encoding: "windows-1252", characters: ["U+0100"], argument: "content" });
  });

  test("windows-1252's undefined bytes do not round-trip (iconv-lite maps U+FFFD back to 0x9D)", () => {
    expect(roundTrips(Buffer.from([0x61, 0x81, 0x0a]), "windows-1252")).toBe(false);
  });

  test("property: an edit spliced into a GBK file changes only the replaced bytes", () => {
    const line = fc.array(fc.constantFrom("张", "三", "，", "a", " ", "\\", "@", "配", "置"), { minLength: 1, maxLength: 12 }).map((a) => a.join(""));
    fc.assert(
      fc.property(fc.array(line, { minLength: 3, maxLength: 12 }), fc.nat(), line, (lines, pick, replacement) => {
        const text = lines.map((l, i) => `${i}:${l}`).join("\r\n") + "\r\n";
        const bytes = iconv(text, "GBK");
        const doc = editableText(bytes, { requested: "gbk" });
        expect(doc.text).toBe(text);
        const k = pick % lines.length;
        const target = `${k}:${lines[k]}`;
        const start = doc.text.indexOf(target);
        const out = doc.spliceBytes([{ start, end: start + target.length, text: replacement }]);
        const expected = iconv(text.slice(0, start) + replacement + text.slice(start + target.length), "GBK");
        expect(out.equals(expected)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  test("profileText of a legacy file: encoding, confidence and CRLF", () => {
    const p = profileText(iconv("# 配置文件：服务器设置\r\nname = 张三\r\n# 计算用户的总金额，返回结果。\r\n", "GBK"));
    expect(p).toMatchObject({ encoding: "gbk", eol: "crlf", valid: true, binary: false, bom: false, source: "detected" });
  });
});
