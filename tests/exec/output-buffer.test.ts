import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HeadTailBuffer } from "@/lib/exec/output-buffer";

/** The bounded head/tail capture behind run_command's output cap. */

function feed(chunks: Array<string | Buffer>, head: number, tail: number): HeadTailBuffer {
  const b = new HeadTailBuffer(head, tail);
  for (const c of chunks) b.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return b;
}

describe("HeadTailBuffer", () => {
  it("returns short output unchanged", () => {
    const b = feed(["hello ", "world\n"], 100, 100);
    expect(b.render(1000)).toEqual({ text: "hello world\n", truncated: false, omittedBytes: 0 });
    expect(b.total).toBe(12);
  });

  it("cuts the middle at line boundaries and counts what was dropped", () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `${i + 1}\n`).join("");
    const b = feed([lines], 60, 60);
    const r = b.render(40);
    expect(r.truncated).toBe(true);
    expect(r.text).toMatch(/^1\n2\n3\n[\s\S]*\[… \d+ bytes omitted …\]\n[\s\S]*999\n1000\n$/);
    expect(r.omittedBytes + Buffer.byteLength(r.text.replace(/\[… \d+ bytes omitted …\]\n/, ""))).toBe(Buffer.byteLength(lines));
  });

  it("cuts output that was kept whole but is longer than the character budget", () => {
    const r = feed(["x".repeat(100)], 1000, 1000).render(40);
    expect(r).toEqual({ text: `${"x".repeat(20)}\n[… 60 bytes omitted …]\n${"x".repeat(20)}`, truncated: true, omittedBytes: 60 });
  });

  it("keeps memory bounded: at most head + tail + one chunk", () => {
    const b = new HeadTailBuffer(1024, 1024);
    const chunk = Buffer.alloc(4096, 0x61);
    for (let i = 0; i < 10_000; i++) b.push(chunk);
    expect(b.total).toBe(40_960_000);
    const held = (b as unknown as { head: Buffer[]; tail: Buffer[] }).head.concat((b as unknown as { tail: Buffer[] }).tail).reduce((n, c) => n + c.length, 0);
    expect(held).toBeLessThanOrEqual(1024 + 1024 + 4096);
    expect(b.render(100).truncated).toBe(true);
  });

  it("never produces broken characters at the cuts, for any chunking", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "é", "€", "😀", "\n"), { minLength: 1, maxLength: 400 }), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 8, max: 200 }), (chars, chunk, budget) => {
        const bytes = Buffer.from(chars.join(""));
        const chunks: Buffer[] = [];
        for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
        const r = feed(chunks, budget * 3, budget * 3).render(budget);
        expect(r.text).not.toContain("\uFFFD");
        expect(r.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
        if (!r.truncated) expect(r.text).toBe(chars.join(""));
      }),
      { numRuns: 300 },
    );
  });
});
