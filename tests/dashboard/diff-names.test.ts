import { describe, expect, it } from "vitest";
import { parse } from "diff2html";
import { readableDiffName, withFileHeaders } from "@/lib/dashboard/diff-names";
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

describe("withFileHeaders", () => {
  const binary = "diff --git a/.git/objects/65/ab b/.git/objects/65/ab\nBinary files /dev/null and b/.git/objects/65/ab differ\n";
  const text = "--- a/.git/refs/heads/master\n+++ b/.git/refs/heads/master\n@@ -1 +1 @@\n-aaa\n+bbb\n";

  it("gives a plain unified diff after a binary block its own diff --git line, so diff2html opens a new file", () => {
    const fixed = withFileHeaders(binary + text);
    expect(fixed).toBe(binary + "diff --git a/.git/refs/heads/master b/.git/refs/heads/master\n" + text);
    const files = parse(fixed);
    expect(files.map((f) => f.newName)).toEqual([".git/objects/65/ab", ".git/refs/heads/master"]);
    expect(files[1].blocks[0].lines.map((l) => l.content)).toEqual(["-aaa", "+bbb"]);
  });

  it("names created and deleted files from their real side; leaves git-style blocks and single diffs alone", () => {
    expect(withFileHeaders("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n")).toBe("diff --git a/new.txt b/new.txt\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n");
    expect(withFileHeaders("--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")).toMatch(/^diff --git a\/old.txt b\/old.txt\n/);
    const git = "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n";
    expect(withFileHeaders(git)).toBe(git);
  });

  it("never takes a removed line that reads '-- x' for a file header", () => {
    const tricky = "--- a/f.md\n+++ b/f.md\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n keep\n";
    expect(withFileHeaders(tricky)).toBe("diff --git a/f.md b/f.md\n" + tricky);
    expect(parse(withFileHeaders(tricky))).toHaveLength(1);
  });
});
