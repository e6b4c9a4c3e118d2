import crypto from "node:crypto";
import fs from "node:fs/promises";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clearLineIndexCache, getLineIndex, putLineIndex, type LineIndex } from "@/lib/workspace/line-index";
import { readPage, type Page, type PageRequest } from "@/lib/workspace/read-page";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

let f: Fixture;
beforeAll(async () => {
  f = await makeFixture();
});
afterAll(() => f.cleanup());

async function pageOf(rel: string, req: Partial<PageRequest>): Promise<Page> {
  const handle = await fs.open(f.at(rel), "r");
  try {
    return await readPage(handle, { offset: 0, limit: 80, maxChars: 12_000, lineNumbers: false, ...req });
  } finally {
    await handle.close();
  }
}

/** Lines of a decoded text as read_file shows them: split on "\n", a "\r" before it dropped. */
function expectedLines(text: string): string[] {
  if (text === "") return [];
  const parts = text.split("\n");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts.map((l, i) => (i < parts.length - 1 || text.endsWith("\n") ? l.replace(/\r$/, "") : l));
}

/** Reads every page from offset 0 by following next_offset; returns the lines and the pages. */
async function readAll(rel: string, limit: number, maxChars: number): Promise<{ lines: string[]; pages: Page[] }> {
  const lines: string[] = [];
  const pages: Page[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const page: Page = await pageOf(rel, { offset, limit, maxChars });
    pages.push(page);
    if (page.returnedLines > 0) lines.push(...page.content.split("\n"));
    offset = page.nextOffset;
    if (pages.length > 10_000) throw new Error("paging does not terminate");
  }
  return { lines, pages };
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("readPage properties", () => {
  const char = fc.constantFrom("a", "b", " ", "\u00e9", "\u4e2d", "\u{1F600}", "\t", "\r");
  const line = fc.array(char, { maxLength: 30, size: "max" }).map((cs) => cs.join(""));
  const file = fc.record({
    lines: fc.array(line, { maxLength: 3000, size: "max" }),
    crlf: fc.boolean(),
    finalNewline: fc.boolean(),
    encoding: fc.constantFrom("utf-8", "utf-8-bom", "utf-16le", "utf-16be"),
  });

  function encode(text: string, encoding: string): Buffer {
    if (encoding === "utf-8") return Buffer.from(text);
    if (encoding === "utf-8-bom") return Buffer.from(`\ufeff${text}`);
    const le = Buffer.from(`\ufeff${text}`, "utf16le");
    return encoding === "utf-16le" ? le : Buffer.from(le).swap16();
  }

  it("paging with next_offset returns every line exactly once, cold or cached", async () => {
    await fc.assert(
      fc.asyncProperty(file, fc.integer({ min: 1, max: 700 }), fc.integer({ min: 300, max: 5000 }), async (spec, limit, maxChars) => {
        const eol = spec.crlf ? "\r\n" : "\n";
        const text = spec.lines.join(eol) + (spec.finalNewline && spec.lines.length > 0 ? eol : "");
        const bytes = encode(text, spec.encoding);
        await fs.writeFile(f.at("prop.txt"), bytes);
        clearLineIndexCache();
        const { lines, pages } = await readAll("prop.txt", limit, maxChars);
        const expected = expectedLines(text);
        expect(lines).toEqual(expected);
        const sha256 = crypto.createHash("sha256").update(bytes).digest("hex");
        for (const p of pages) {
          expect(p.totalLines).toBe(expected.length);
          expect(p.content.length).toBeLessThanOrEqual(maxChars);
          expect(p.clippedLines).toEqual([]);
          expect(p.sha256).toBe(sha256);
          expect(p.encodingWarning).toBeUndefined();
        }
      }),
      { numRuns: 60 },
    );
  });

  it("clipped pages never hold a lone surrogate or exceed the cap, and paging terminates", async () => {
    const longLine = fc.array(fc.constantFrom("x", "\u{1F600}", "\u4e2d", "\u00e9"), { maxLength: 3000, size: "max" }).map((cs) => cs.join(""));
    await fc.assert(
      fc.asyncProperty(fc.array(longLine, { minLength: 1, maxLength: 20, size: "max" }), fc.integer({ min: 100, max: 1500 }), async (ls, maxChars) => {
        await fs.writeFile(f.at("clip.txt"), ls.join("\n"));
        const { pages } = await readAll("clip.txt", 2000, maxChars);
        const seen = new Set<number>();
        for (const p of pages) {
          expect(p.content.length).toBeLessThanOrEqual(maxChars);
          expect(LONE_SURROGATE.test(p.content)).toBe(false);
          expect(p.content).not.toContain("\ufffd");
          for (const n of p.clippedLines) {
            expect(seen.has(n)).toBe(false);
            seen.add(n);
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("readPage at chunk boundaries (1 MiB reads)", () => {
  const MiB = 1 << 20;

  it("a CRLF split across two chunks is one line ending", async () => {
    const n = (MiB - 4) / 2; // "a\n" x n, then "bbb\r" ends at byte MiB - 1
    await fs.writeFile(f.at("crlf-edge.txt"), `${"a\n".repeat(n)}bbb\r\nc\n`);
    clearLineIndexCache();
    const page = await pageOf("crlf-edge.txt", { offset: n, limit: 5 });
    expect(page).toMatchObject({ content: "bbb\nc", totalLines: n + 2, eol: "mixed" });
  });

  it("a UTF-16LE CRLF split across two chunks is one line ending", async () => {
    const n = (MiB / 2 - 2) / 2; // BOM + "a\n" units x n + "b", then "\r" is the chunk's last unit
    await fs.writeFile(f.at("u16-edge.txt"), Buffer.from(`\ufeff${"a\n".repeat(n)}b\r\nc`, "utf16le"));
    clearLineIndexCache();
    const page = await pageOf("u16-edge.txt", { offset: n, limit: 5 });
    expect(page).toMatchObject({ content: "b\nc", totalLines: n + 2, encoding: "utf-16le", bom: true });
  });

  it("a character split across two chunks is valid UTF-8", async () => {
    const text = `${"a".repeat(MiB - 1)}\u4e2d\n`;
    await fs.writeFile(f.at("utf8-edge.txt"), text);
    clearLineIndexCache();
    const page = await pageOf("utf8-edge.txt", { maxChars: 100 });
    expect(page.encodingWarning).toBeUndefined();
    expect(page.clippedLines).toEqual([1]);
  });

  it("an invalid byte far from the page still sets the warning", async () => {
    await fs.writeFile(f.at("late-invalid.txt"), Buffer.concat([Buffer.from("ok\n".repeat(500_000)), Buffer.from([0xff, 0x0a])]));
    clearLineIndexCache();
    const page = await pageOf("late-invalid.txt", { limit: 1 });
    expect(page).toMatchObject({ content: "ok", encodingWarning: "invalid_utf8", totalLines: 500_001 });
  });

  it("a truncated sequence at the end of the file is invalid", async () => {
    // UTF-8 text (a valid 中 before the cut one), so no legacy encoding is tried.
    await fs.writeFile(f.at("cut-end.txt"), Buffer.from([0xe4, 0xb8, 0xad, 0x0a, 0xe4, 0xb8]));
    clearLineIndexCache();
    expect((await pageOf("cut-end.txt", {})).encodingWarning).toBe("invalid_utf8");
  });
});

describe("line index cache", () => {
  const index = (n: number): LineIndex => ({
    sniffed: { encoding: "utf-8", bomLength: 0 },
    totalLines: n,
    sha256: "0".repeat(64),
    eol: "lf",
    invalidUtf8: false,
    lineStarts: Float64Array.from([0]),
  });
  const key = (ino: number) => ({ dev: 1, ino, size: 10, mtimeMs: 5, ctimeMs: 5 });

  it("is keyed by the exact file version", () => {
    clearLineIndexCache();
    putLineIndex(key(1), index(7));
    expect(getLineIndex(key(1))?.totalLines).toBe(7);
    for (const change of [{ size: 11 }, { mtimeMs: 6 }, { ctimeMs: 6 }, { ino: 2 }, { dev: 2 }]) {
      expect(getLineIndex({ ...key(1), ...change })).toBeUndefined();
    }
  });

  it("evicts the least recently used entry beyond its bound", () => {
    clearLineIndexCache();
    for (let i = 0; i < 64; i++) putLineIndex(key(i), index(i));
    getLineIndex(key(0)); // refresh 0: 1 is now the oldest
    putLineIndex(key(100), index(100));
    expect(getLineIndex(key(0))).toBeDefined();
    expect(getLineIndex(key(1))).toBeUndefined();
    expect(getLineIndex(key(100))).toBeDefined();
  });
});
