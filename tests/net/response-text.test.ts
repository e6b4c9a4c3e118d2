import { describe, expect, it } from "vitest";
import { decodeBody, isHtml, isTextBody, parseContentType } from "@/lib/net/response-text";

describe("parseContentType", () => {
  it.each([
    ["text/html; charset=UTF-8", "text/html", "UTF-8"],
    ['Text/Plain; Charset="iso-8859-1"', "text/plain", "iso-8859-1"],
    ["application/json", "application/json", null],
    ["garbage", null, null],
  ])("%s", (header, essence, charset) => {
    expect(parseContentType(header)).toEqual({ essence, charset });
  });

  it("returns nulls for a missing header", () => {
    expect(parseContentType(null)).toEqual({ essence: null, charset: null });
  });
});

describe("isTextBody / isHtml", () => {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);
  it.each([
    ["text/csv", Buffer.from("a,b\n"), true],
    ["application/ld+json", Buffer.from("{}"), true],
    ["image/svg+xml", Buffer.from("<svg/>"), true],
    ["application/yaml", Buffer.from("a: 1"), true],
    ["application/octet-stream", Buffer.from("plain words\n"), true],
    [null, Buffer.from("no type but text"), true],
    ["image/png", png, false],
    ["application/octet-stream", png, false],
    [null, png, false],
    ["image/png", Buffer.alloc(0), true],
  ])("%s → %s", (type, body, expected) => {
    expect(isTextBody(parseContentType(type), body as Buffer)).toBe(expected);
  });

  it("recognises HTML media types", () => {
    expect(isHtml(parseContentType("text/html"))).toBe(true);
    expect(isHtml(parseContentType("application/xhtml+xml"))).toBe(true);
    expect(isHtml(parseContentType("text/plain"))).toBe(false);
  });
});

describe("decodeBody", () => {
  const type = (h: string | null) => parseContentType(h);
  it.each([
    ["utf-8 default", Buffer.from("héllo ✓"), null, "héllo ✓", "utf-8"],
    ["charset parameter", Buffer.from("café", "latin1"), "text/plain; charset=iso-8859-1", "café", "windows-1252"],
    ["utf-8 BOM beats the header", Buffer.from("\ufeffhé"), "text/plain; charset=iso-8859-1", "hé", "utf-8"],
    ["utf-16le BOM", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hi ✓", "utf16le")]), "text/plain", "hi ✓", "utf-16le"],
    ["meta charset", Buffer.concat([Buffer.from('<meta charset="shift_jis"><p>'), Buffer.from([0x93, 0xfa, 0x96, 0x7b])]), "text/html", '<meta charset="shift_jis"><p>日本', "shift_jis"],
    ["meta http-equiv", Buffer.concat([Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'), Buffer.from([0xcf, 0xf0, 0xe8])]), "text/html", '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">При', "windows-1251"],
    ["meta utf-16 means utf-8", Buffer.from('<meta charset="utf-16"><p>é'), "text/html", '<meta charset="utf-16"><p>é', "utf-8"],
    ["xml declaration", Buffer.concat([Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>'), Buffer.from("é", "latin1")]), "application/xml", '<?xml version="1.0" encoding="ISO-8859-1"?><a>é', "windows-1252"],
    ["unknown label falls back to utf-8", Buffer.from("ok é"), "text/plain; charset=x-no-such", "ok é", "utf-8"],
    ["invalid utf-8 becomes U+FFFD", Buffer.from([0x61, 0xff, 0x62]), "text/plain", "a\ufffdb", "utf-8"],
  ])("%s", (_name, body, header, text, charset) => {
    expect(decodeBody(body, type(header), true)).toEqual({ text, charset });
  });

  it("drops a character split by the byte cap instead of inventing U+FFFD", () => {
    const cut = Buffer.from("ab✓").subarray(0, 4); // "ab" + 2 of the 3 bytes of ✓
    expect(decodeBody(cut, type("text/plain"), false).text).toBe("ab");
    expect(decodeBody(cut, type("text/plain"), true).text).toBe("ab\ufffd");
  });
});
