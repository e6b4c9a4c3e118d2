import { describe, expect, it } from "vitest";
import { parse } from "diff2html";
import { readableDiffName } from "@/lib/dashboard/diff-names";
import { diffFileBytes } from "@/lib/diff/unified";

describe("readable names in diff headers", () => {
  it("decodes the octal escapes of a non-ASCII path back to its UTF-8 name", () => {
    expect(readableDiffName("caf\\303\\251.txt")).toBe("café.txt");
    expect(readableDiffName('"caf\\303\\251.txt"')).toBe("café.txt");
    expect(readableDiffName("\\346\\227\\245\\346\\234\\254/\\344\\272\\272.md")).toBe("日本/人.md");
  });

  it("keeps plain names, and decodes control escapes so they can be marked", () => {
    expect(readableDiffName("src/app.ts")).toBe("src/app.ts");
    expect(readableDiffName("a\\tb\\nc\\\\d\\\"e")).toBe('a\tb\nc\\d"e');
    expect(readableDiffName("bad\\377byte")).toBe("bad\uFFFDbyte");
  });

  it("reads the names diff2html parses from our own diffs", () => {
    const { diff } = diffFileBytes("dossier/café.txt", Buffer.from("a\n"), Buffer.from("b\n"));
    const [file] = parse(diff);
    expect(readableDiffName(file.newName)).toBe("dossier/café.txt");
    expect(readableDiffName(file.oldName)).toBe("dossier/café.txt");
  });
});
