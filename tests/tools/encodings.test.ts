import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { editFileTool } from "@/lib/tools/edit-file";
import { readFileTool } from "@/lib/tools/read-file";
import { searchFilesTool } from "@/lib/tools/search-files";
import { writeFileTool } from "@/lib/tools/write-file";
import { clearLineIndexCache } from "@/lib/workspace/line-index";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";
import { call, expectError, hex, okData, shaOf } from "@/tests/tools/write-tool-helpers";

/**
 * Files in legacy encodings and UTF-16 through read_file, edit_file, write_file and search_files:
 * every expected byte string comes from a real encoder (glibc's iconv from Debian's libc-bin),
 * never from the library under test.
 */

let f: Fixture;
let ctx: TestContext;
beforeEach(async () => {
  f = await makeFixture();
  ctx = makeToolContext(f.ws);
  clearLineIndexCache();
});
afterEach(async () => {
  await f.cleanup();
});

/** `text` encoded by glibc iconv (`iconv -f UTF-8 -t <to>`), with an optional BOM in front. */
function iconv(text: string, to: string, bom: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([bom, execFileSync("iconv", ["-f", "UTF-8", "-t", to], { input: Buffer.from(text, "utf8") })]);
}

const read = async (args: Record<string, unknown>, c: TestContext = ctx) => okData(await call(readFileTool, args, c));
const edit = (args: Record<string, unknown>, c: TestContext = ctx) => call(editFileTool, args, c);
const write = (args: Record<string, unknown>, c: TestContext = ctx) => call(writeFileTool, args, c);

interface Row {
  name: string;
  /** glibc iconv's name for the encoding. */
  iconvName: string;
  /** The name read_file reports. */
  encoding: string;
  bom?: Buffer;
  text: string;
  oldString: string;
  newString: string;
  /** Passed as `encoding` (single-byte Latin text is never a confident guess). */
  argument?: string;
}

const GBK_TEXT = [
  "# 配置文件：服务器设置",
  "name = 张三",
  "# 计算用户的总金额，返回结果。",
  "port = 8080",
  "# 错误：无法连接数据库时重试三次。",
  "retries = 3",
  "",
].join("\r\n");

const rows: Row[] = [
  { name: "GBK (CRLF)", iconvName: "GBK", encoding: "gbk", text: GBK_TEXT, oldString: "name = 张三", newString: "name = 李四" },
  {
    name: "GB18030 with a character outside GBK",
    iconvName: "GB18030",
    encoding: "gb18030",
    text: "# 服务器配置文件，记录启动参数。\n# 生僻字：𠀀\nname = 张三\n# 计算用户的总金额，返回结果。\n",
    oldString: "name = 张三",
    newString: "name = 𠀁李四",
  },
  {
    name: "Big5",
    iconvName: "BIG5",
    encoding: "big5",
    text: "# 設定檔：伺服器設定\nname = 張三\n# 計算使用者的總金額，傳回結果。\n# 錯誤：無法連線資料庫時重試三次。\n",
    oldString: "name = 張三",
    newString: "name = 李四",
  },
  {
    name: "Shift_JIS",
    iconvName: "SHIFT_JIS",
    encoding: "shift_jis",
    text: "# 設定ファイル：サーバーの設定\nname = 山田太郎\n# ユーザーの合計金額を計算して結果を返す。\n# エラー：データベースに接続できません。\n",
    oldString: "name = 山田太郎",
    newString: "name = 鈴木花子",
  },
  {
    name: "EUC-KR",
    iconvName: "EUC-KR",
    encoding: "euc-kr",
    text: "# 설정 파일: 서버 설정\nname = 홍길동\n# 사용자의 총 금액을 계산하여 결과를 반환합니다.\n# 오류: 데이터베이스에 연결할 수 없습니다.\n",
    oldString: "name = 홍길동",
    newString: "name = 김철수",
  },
  {
    name: "windows-1252 (encoding passed)",
    iconvName: "CP1252",
    encoding: "windows-1252",
    text: "Name;Stadt;Preis\r\nMüller;Köln;12,50 €\r\nGößl;Graz;“9,99 €”\r\n",
    oldString: "Müller;Köln",
    newString: "Müller;Zürich",
    argument: "cp1252",
  },
  {
    name: "UTF-16LE with BOM",
    iconvName: "UTF-16LE",
    encoding: "utf-16le",
    bom: hex("FFFE"),
    text: "hi\r\n中文 😀\r\nname = 张三\r\n",
    oldString: "name = 张三",
    newString: "name = 李四 😀",
  },
  {
    name: "UTF-16BE with BOM",
    iconvName: "UTF-16BE",
    encoding: "utf-16be",
    bom: hex("FEFF"),
    text: "hi\n中文 😀\nname = 张三\n",
    oldString: "name = 张三",
    newString: "name = 李四",
  },
  {
    name: "UTF-8 with BOM",
    iconvName: "UTF-8",
    encoding: "utf-8",
    bom: hex("EFBBBF"),
    text: "<Project>\r\n  <Name>Café 中文</Name>\r\n</Project>\r\n",
    oldString: "Café 中文",
    newString: "Café 2 日本語",
  },
];

describe("byte-exact round trips: read → edit one line → compare with iconv's bytes", () => {
  test.each(rows)("$name", async (row) => {
    const before = iconv(row.text, row.iconvName, row.bom);
    await f.put("f.txt", before);
    const encodingArg = row.argument ? { encoding: row.argument } : {};
    const page = await read({ path: "f.txt", ...encodingArg });
    const lines = row.text.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n");
    expect(page.content).toBe(lines.map((l, i) => `${String(i + 1).padStart(6)}| ${l}`).join("\n"));
    expect(page).toMatchObject({ encoding: row.encoding, bom: row.bom !== undefined, total_lines: lines.length });
    expect(page.encoding_warning).toBeUndefined();

    const out = okData(await edit({ path: "f.txt", old_string: row.oldString, new_string: row.newString, ...encodingArg }));
    const expected = iconv(row.text.replace(row.oldString, row.newString), row.iconvName, row.bom);
    const after = await fs.readFile(f.at("f.txt"));
    expect(after.toString("hex")).toBe(expected.toString("hex"));
    expect(out).toMatchObject({ encoding: row.encoding, sha256: shaOf(expected), additions: 1, deletions: 1 });
    // The diff shows decoded text, and names a legacy encoding.
    const diffLines = (out.diff as string).split("\n");
    expect(diffLines.filter((l) => l.startsWith("+") && !l.startsWith("+++"))).toEqual([`+${row.text.split(/\r?\n/).find((l) => l.includes(row.oldString))!.replace(row.oldString, row.newString)}`]);
    expect(diffLines.filter((l) => l.startsWith("-") && !l.startsWith("---"))).toEqual([`-${row.text.split(/\r?\n/).find((l) => l.includes(row.oldString))}`]);
    if (!row.encoding.startsWith("utf-")) expect((out.warnings as string[]).join("\n")).toContain(`shown decoded from ${row.encoding}`);
    // The backup keeps the raw bytes.
    expect(ctx.savedBackups.at(-1)!.bytes.equals(before)).toBe(true);
  });
});

describe("legacy encodings: what must never happen", () => {
  test("an edit of one line of a windows-1252 file leaves a non-ASCII byte on another line unchanged", async () => {
    const text = "caf\u00e9 = 1\nx = 1\nna\u00efve = \u20ac5\n";
    const before = iconv(text, "CP1252");
    await f.put("w.txt", before);
    const out = okData(await edit({ path: "w.txt", old_string: "x = 1", new_string: "x = 2" }));
    const after = await fs.readFile(f.at("w.txt"));
    expect(after.toString("hex")).toBe(iconv(text.replace("x = 1", "x = 2"), "CP1252").toString("hex"));
    // The bytes E9, EF and 80 are where they were; no EF BF BD anywhere.
    expect(after.subarray(0, 4)).toEqual(before.subarray(0, 4));
    expect(after.includes(hex("EFBFBD"))).toBe(false);
    expect(out.changed).toBe(true);
  });

  test("an ASCII-only file stays UTF-8 (never HZ-GB-2312, UTF-7 or a legacy guess)", async () => {
    await f.put("a.txt", "~{<:Ky2;S{#,NpJ)l6HK!#~}\nhello +AGEAYgBj-\n");
    expect(await read({ path: "a.txt" })).toMatchObject({ encoding: "utf-8", encoding_source: "utf8", encoding_confidence: 1 });
    const out = okData(await edit({ path: "a.txt", old_string: "hello", new_string: "hallo \u4e2d" }));
    expect(out.encoding).toBe("utf-8");
    expect(await fs.readFile(f.at("a.txt"), "utf8")).toBe("~{<:Ky2;S{#,NpJ)l6HK!#~}\nhallo \u4e2d +AGEAYgBj-\n");
  });

  test("a character the file's encoding cannot hold is refused, naming its code point; nothing is written", async () => {
    const before = iconv(GBK_TEXT, "GBK");
    await f.put("g.txt", before);
    const err = expectError(await edit({ path: "g.txt", old_string: "name = 张三", new_string: "name = 😀 한국" }), "encoding_unsupported", {
      reason: "unrepresentable",
      encoding: "gbk",
      characters: ["U+1F600", "U+D55C", "U+AD6D"],
      argument: "new_string",
    });
    expect(err.message).toContain("U+1F600");
    expectError(await write({ path: "g.txt", content: "x = \u00e9\u0100\n" }), "encoding_unsupported", { reason: "unrepresentable", characters: ["U+0100"], argument: "content" });
    expect((await fs.readFile(f.at("g.txt"))).equals(before)).toBe(true);
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("Shift_JIS: a yen sign would come back as a backslash, so it is refused", async () => {
    const text = "# 設定ファイル：サーバーの設定\nprice = 100\n# ユーザーの合計金額を計算して結果を返す。\n";
    await f.put("j.txt", iconv(text, "SHIFT_JIS"));
    expectError(await edit({ path: "j.txt", old_string: "price = 100", new_string: "price = \u00a5100" }), "encoding_unsupported", {
      reason: "unrepresentable",
      characters: ["U+00A5"],
    });
  });

  test("unsure detection: readable, not silently rewritten, and the way forward is to pass encoding", async () => {
    const before = iconv("caf\u00e9\nok\n", "CP1252");
    await f.put("u.txt", before);
    const page = await read({ path: "u.txt" });
    expect(page.encoding_warning).toBe("uncertain");
    expect(page.encoding_source).toBe("detected");
    expect(page.encoding_confidence as number).toBeLessThan(0.3);
    expect(page.content).not.toContain("\ufffd");
    const guess = page.encoding as string;

    // Non-ASCII new text would depend on the guess: refused, nothing written, no backup.
    const err = expectError(await edit({ path: "u.txt", old_string: "ok", new_string: "\u00e7a va" }), "encoding_unsupported", {
      reason: "uncertain_encoding",
      encoding: guess,
    });
    expect(err.message).toContain(`encoding: "${guess}"`);
    expectError(await write({ path: "u.txt", content: "d\u00e9j\u00e0\n" }), "encoding_unsupported", { reason: "uncertain_encoding", argument: "content" });
    expect((await fs.readFile(f.at("u.txt"))).equals(before)).toBe(true);
    expect(ctx.savedBackups).toHaveLength(0);

    // ASCII text is the same bytes in every candidate encoding: spliced, the é byte kept.
    okData(await edit({ path: "u.txt", old_string: "ok", new_string: "fine" }));
    expect(await fs.readFile(f.at("u.txt"))).toEqual(iconv("caf\u00e9\nfine\n", "CP1252"));

    // With the encoding confirmed, the non-ASCII edit goes through in that encoding.
    okData(await edit({ path: "u.txt", old_string: "fine", new_string: "\u00e7a va", encoding: "windows-1252" }));
    expect(await fs.readFile(f.at("u.txt"))).toEqual(iconv("caf\u00e9\n\u00e7a va\n", "CP1252"));
  });

  test("the workspace's legacy encoding wins over a guess and makes writes sure", async () => {
    const legacyCtx = makeToolContext(f.ws, { legacyEncoding: "windows-1252" });
    await f.put("l.txt", iconv("caf\u00e9\nok\n", "CP1252"));
    expect(await read({ path: "l.txt" }, legacyCtx)).toMatchObject({ encoding: "windows-1252", encoding_source: "workspace_setting", encoding_confidence: 1 });
    expect((await read({ path: "l.txt" }, legacyCtx)).encoding_warning).toBeUndefined();
    okData(await write({ path: "l.txt", content: "na\u00efve \u20ac\n" }, legacyCtx));
    expect(await fs.readFile(f.at("l.txt"))).toEqual(iconv("na\u00efve \u20ac\n", "CP1252"));
    // A UTF-8 file is still UTF-8 under the setting.
    await f.put("u8.txt", "caf\u00e9\n");
    expect(await read({ path: "u8.txt" }, legacyCtx)).toMatchObject({ encoding: "utf-8" });
  });

  test("an encoding argument wins over the setting and the detector, but not over a BOM", async () => {
    const gbk = iconv(GBK_TEXT, "GBK");
    await f.put("g.txt", gbk);
    const asBig5 = await read({ path: "g.txt", encoding: "big5" });
    expect(asBig5).toMatchObject({ encoding: "big5", encoding_source: "argument" });
    await f.put("bom.txt", Buffer.concat([hex("EFBBBF"), Buffer.from("hi\n")]));
    const err = await call(readFileTool, { path: "bom.txt", encoding: "gbk" }, ctx);
    expectError(err, "encoding_unsupported", { reason: "bom_mismatch" });
    expectError(await call(readFileTool, { path: "g.txt", encoding: "klingon" }, ctx), "encoding_unsupported", { reason: "unknown_encoding" });
  });

  test("new files are UTF-8 unless an encoding is given", async () => {
    okData(await write({ path: "n1.txt", content: "\u4e2d\u6587\n" }));
    expect(await fs.readFile(f.at("n1.txt"))).toEqual(Buffer.from("\u4e2d\u6587\n"));
    const out = okData(await write({ path: "n2.txt", content: "\u4e2d\u6587\n", encoding: "GBK" }));
    expect(out.encoding).toBe("gbk");
    expect(await fs.readFile(f.at("n2.txt"))).toEqual(iconv("\u4e2d\u6587\n", "GBK"));
  });

  test("write_file over a GBK file keeps GBK and CRLF", async () => {
    await f.put("g.txt", iconv(GBK_TEXT, "GBK"));
    const out = okData(await write({ path: "g.txt", content: "# 新的配置\nname = 王五\n" }));
    expect(out).toMatchObject({ encoding: "gbk", eol: "crlf" });
    expect(await fs.readFile(f.at("g.txt"))).toEqual(iconv("# 新的配置\r\nname = 王五\r\n", "GBK"));
    expect(ctx.savedBackups[0].bytes).toEqual(iconv(GBK_TEXT, "GBK"));
  });

  test("a GBK file with a long ASCII head is still decoded (the start alone looks like UTF-8)", async () => {
    const head = "// " + "x".repeat(100) + "\n";
    const text = head.repeat(1500) + "# 计算用户的总金额，返回结果。服务器启动成功。\nname = 张三\n";
    await f.put("long.txt", iconv(text, "GBK"));
    const page = await read({ path: "long.txt", offset: 1500, limit: 2 });
    expect(page).toMatchObject({ encoding: "gbk", content: "  1501| # 计算用户的总金额，返回结果。服务器启动成功。\n  1502| name = 张三" });
    const found = okData(await call(searchFilesTool, { query: "张三" }, ctx));
    expect(found.matches).toEqual([{ path: "long.txt", line: 1502, column: 8, text: "name = 张三" }]);
  });

  test("search_files matches decoded text in GBK, Shift_JIS and UTF-16 files", async () => {
    await f.put("src/g.txt", iconv(GBK_TEXT, "GBK"));
    await f.put("src/j.txt", iconv("# 設定ファイル：サーバーの設定\nname = 山田太郎\n# ユーザーの合計金額を計算して結果を返す。\n", "SHIFT_JIS"));
    await f.put("src/w.txt", iconv("one\nname = 张三\n", "UTF-16LE", hex("FFFE")));
    const g = okData(await call(searchFilesTool, { query: "张三", path: "src" }, ctx));
    expect(g.matches).toEqual([
      { path: "src/g.txt", line: 2, column: 8, text: "name = 张三" },
      { path: "src/w.txt", line: 2, column: 8, text: "name = 张三" },
    ]);
    const j = okData(await call(searchFilesTool, { query: "山田", path: "src" }, ctx));
    expect(j.matches).toEqual([{ path: "src/j.txt", line: 2, column: 8, text: "name = 山田太郎" }]);
  });

  test("paging a GBK file: line numbers and next_offset as for UTF-8", async () => {
    const lines = Array.from({ length: 300 }, (_, i) => `第${i + 1}行：计算用户的总金额`);
    await f.put("p.txt", iconv(lines.join("\n") + "\n", "GBK"));
    const p1 = await read({ path: "p.txt", offset: 0, limit: 100 });
    expect(p1).toMatchObject({ total_lines: 300, next_offset: 100, truncated: true, encoding: "gbk" });
    const p2 = await read({ path: "p.txt", offset: 250, limit: 10 });
    expect(p2.content).toBe(lines.slice(250, 260).map((l, i) => `${String(251 + i).padStart(6)}| ${l}`).join("\n"));
  });

  test("Shift_JIS: a backslash inside a double-byte character (ソ = 83 5C) is not matched, the real one is", async () => {
    const text = "# ソースコードの設定ファイルです。\npath = C:\\temp\n# ユーザーの合計金額を計算して結果を返す。\n";
    const before = iconv(text, "SHIFT_JIS");
    expect(before.includes(Buffer.from([0x83, 0x5c]))).toBe(true);
    await f.put("s.txt", before);
    const out = okData(await edit({ path: "s.txt", old_string: "\\", new_string: "/", replace_all: true }));
    expect(out.replacements).toBe(1);
    expect(await fs.readFile(f.at("s.txt"))).toEqual(iconv(text.replace("C:\\temp", "C:/temp"), "SHIFT_JIS"));
  });

  test("replace_all in a GBK file changes every occurrence and nothing else", async () => {
    await f.put("g.txt", iconv(GBK_TEXT, "GBK"));
    const out = okData(await edit({ path: "g.txt", old_string: "服务器", new_string: "主机", replace_all: true }));
    expect(out.replacements).toBe(1);
    const twice = GBK_TEXT + "# 服务器重启\r\n";
    await f.put("g2.txt", iconv(twice, "GBK"));
    expect(okData(await edit({ path: "g2.txt", old_string: "服务器", new_string: "主机", replace_all: true })).replacements).toBe(2);
    expect(await fs.readFile(f.at("g2.txt"))).toEqual(iconv(twice.replaceAll("服务器", "主机"), "GBK"));
  });

  test("write_file with encoding over a UTF-8 file converts it, and the diff says so instead of showing mojibake", async () => {
    await f.put("c.txt", "中文\n");
    const out = okData(await write({ path: "c.txt", content: "中文\n", encoding: "gbk" }));
    expect(await fs.readFile(f.at("c.txt"))).toEqual(iconv("中文\n", "GBK"));
    expect(out.encoding).toBe("gbk");
    expect(out.warnings as string[]).toContain("encoding changes: utf-8 → gbk");
    expect(out.diff).toBe("");
  });

  test("a BOM file cannot be written in another encoding", async () => {
    const before = Buffer.concat([hex("EFBBBF"), Buffer.from("x\n")]);
    await f.put("b.txt", before);
    expectError(await write({ path: "b.txt", content: "y\n", encoding: "shift_jis" }), "encoding_unsupported", { reason: "bom_mismatch" });
    expectError(await edit({ path: "b.txt", old_string: "x", new_string: "y", encoding: "gbk" }), "encoding_unsupported", { reason: "bom_mismatch" });
    expect(await fs.readFile(f.at("b.txt"))).toEqual(before);
  });

  test("an encoding named on edit_file that the file's bytes do not decode in is refused, bytes unchanged", async () => {
    const before = iconv("caf\u00e9\nok\n", "CP1252");
    await f.put("w.txt", before);
    expectError(await edit({ path: "w.txt", old_string: "ok", new_string: "fine", encoding: "gbk" }), "encoding_unsupported", { reason: "undecodable" });
    expect(await fs.readFile(f.at("w.txt"))).toEqual(before);
  });
});
