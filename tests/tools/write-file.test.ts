import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { editFileTool } from "@/lib/tools/edit-file";
import { restoreBackupTool } from "@/lib/tools/restore-backup";
import { writeFileTool } from "@/lib/tools/write-file";
import { lockedPathCount } from "@/lib/workspace/path-lock";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { makeToolContext, type TestContext } from "@/tests/helpers/tool-context";
import { call, expectError, hex, okData, shaOf, snapshot, tempFiles } from "@/tests/tools/write-tool-helpers";
import { armWriteFault } from "@/tests/helpers/write-fault";

// Disk faults come from a wrapped node:fs/promises (tests/helpers/write-fault.ts), not from the product.
vi.mock("node:fs/promises", async (importOriginal) => (await import("@/tests/helpers/write-fault")).withWriteFaults(await importOriginal()));

let f: Fixture;
let ctx: TestContext;
beforeEach(async () => {
  f = await makeFixture();
  ctx = makeToolContext(f.ws);
});
afterEach(async () => {
  armWriteFault(null);
  await f.cleanup();
});

const BOM8 = hex("EFBBBF");
const write = (args: Record<string, unknown>, c: TestContext = ctx) => call(writeFileTool, args, c);
const modeOf = async (p: string) => (await fs.stat(p)).mode & 0o7777;

describe("write_file: basic results", () => {
  test("creates a file (parents included) and reports created, sha256, diff and counts", async () => {
    const data = okData(await write({ path: "src/deep/new.ts", content: "a\nb\n" }));
    expect(data).toMatchObject({
      path: "src/deep/new.ts",
      created: true,
      changed: true,
      size_bytes: 4,
      sha256_before: null,
      sha256: shaOf("a\nb\n"),
      backup_id: null,
      additions: 2,
      deletions: 0,
      eol: "lf",
      bom: false,
      encoding: "utf-8",
      mode: "0644",
      warnings: [],
    });
    expect(data.diff).toContain("--- /dev/null");
    expect(await fs.readFile(f.at("src/deep/new.ts"), "utf8")).toBe("a\nb\n");
    expect(ctx.notes).toMatchObject({ pathRaw: "src/deep/new.ts", pathResolved: f.at("src/deep/new.ts"), shaBefore: null, shaAfter: shaOf("a\nb\n") });
  });

  test("replacing a file backs up the old bytes and mode, with a diff", async () => {
    const data = okData(await write({ path: "notes.txt", content: "inside notes\nmore\n" }));
    expect(data).toMatchObject({ created: false, sha256_before: shaOf("inside notes\n"), backup_id: "bak_1", additions: 1, deletions: 0 });
    expect(ctx.savedBackups).toHaveLength(1);
    expect(ctx.savedBackups[0]).toMatchObject({ path: "notes.txt", mode: 0o644 });
    expect(ctx.savedBackups[0].bytes.toString()).toBe("inside notes\n");
    expect(ctx.notes).toMatchObject({ backupId: "bak_1", summary: "+1 −0 notes.txt" });
  });

  test("writing the same bytes again changes nothing and makes no backup", async () => {
    const data = okData(await write({ path: "notes.txt", content: "inside notes\n" }));
    expect(data).toMatchObject({ changed: false, backup_id: null, diff: "", additions: 0, deletions: 0 });
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("large content (4 MiB) is written whole; the returned diff is capped at the read cap", async () => {
    const content = "0123456789abcdef\n".repeat(4 << 16);
    const data = okData(await write({ path: "big.txt", content }));
    expect(data.size_bytes).toBe(Buffer.byteLength(content));
    expect((await fs.readFile(f.at("big.txt"))).equals(Buffer.from(content))).toBe(true);
    expect((data.diff as string).length).toBeLessThanOrEqual(ctx.config.readMaxChars);
    expect(data.diff_truncated).toBe(true);
    expect(data.additions).toBe(4 << 16);
  });

  const refusals: Array<{ name: string; args: Record<string, unknown>; setup?: () => Promise<unknown>; error: string; detail?: Record<string, unknown> }> = [
    { name: "a directory", setup: () => fs.mkdir(f.at("dir")), args: { path: "dir", content: "x" }, error: "is_directory" },
    { name: "the workspace root", args: { path: ".", content: "x" }, error: "is_directory" },
    { name: "missing parent with create_dirs: false", args: { path: "a/b/c.txt", content: "x", create_dirs: false }, error: "not_found", detail: { reason: "parent_missing" } },
    { name: "a parent that is a file", args: { path: "notes.txt/x.txt", content: "x" }, error: "not_found", detail: { reason: "parent_not_directory" } },
    { name: "a lone surrogate in content", args: { path: "s.txt", content: "a\ud800b" }, error: "invalid_arguments", detail: { reason: "lone_surrogate" } },
    { name: "C05-style path: NUL byte", args: { path: "a\u0000b", content: "x" }, error: "path_invalid", detail: { reason: "nul_byte" } },
  ];
  test.each(refusals)("refuses $name with $error, nothing changes", async ({ args, setup, error, detail }) => {
    await setup?.();
    const before = await snapshot(f.root);
    expectError(await write(args), error, detail);
    expect(await snapshot(f.root)).toEqual(before);
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("expected_sha256 must be 64 hex digits (schema)", () => {
    expect(() => writeFileTool.input.parse({ path: "a", content: "", expected_sha256: "abc" })).toThrow();
    expect(() => writeFileTool.input.parse({ path: "a", content: "", extra: 1 })).toThrow();
  });
});

describe("write_file: fencing (C01, C02, C03)", () => {
  beforeEach(async () => {
    await fs.mkdir(path.join(f.root, "proj_evil"));
    await fs.mkdir(path.join(f.root, "projX"));
    await fs.symlink(path.join(f.root, "proj-out", "secret.txt"), f.at("leak.txt"));
    await fs.symlink(path.join(f.root, "proj-out"), f.at("ext"));
    await fs.symlink(path.join(f.root, "proj-out", "created.txt"), f.at("dangle"));
  });

  const cases: Array<{ name: string; args: () => Record<string, unknown>; reason: string }> = [
    { name: "C01-3 absolute path in a prefix sibling", args: () => ({ path: path.join(f.root, "projX", "new.txt"), content: "x\n", create_dirs: true }), reason: "lexical" },
    { name: "C01-4 relative path into a prefix sibling", args: () => ({ path: "../proj_evil/sub/new.txt", content: "x\n", create_dirs: true }), reason: "lexical" },
    { name: "C02-3 directory symlink leading outside", args: () => ({ path: "ext/new.txt", content: "x\n" }), reason: "symlink" },
    { name: "C02-5 file symlink leading outside", args: () => ({ path: "leak.txt", content: "overwritten\n" }), reason: "symlink" },
    { name: "C03-1 dangling symlink leading outside", args: () => ({ path: "dangle", content: "x\n" }), reason: "symlink" },
    { name: "C03-2 missing dirs under a symlink leading outside", args: () => ({ path: "ext/a/b/new.txt", content: "x\n", create_dirs: true }), reason: "parent_symlink" },
  ];
  test.each(cases)("$name → path_outside_workspace ($reason); nothing created or changed", async ({ args, reason }) => {
    const before = await snapshot(f.root);
    expectError(await write(args()), "path_outside_workspace", { reason });
    expect(await snapshot(f.root)).toEqual(before);
    expect(await fs.readFile(path.join(f.root, "proj-out", "secret.txt"), "utf8")).toBe("TOP-SECRET\n");
    expect((await fs.lstat(f.at("leak.txt"))).isSymbolicLink()).toBe(true);
  });

  test("C03-4: a workspace configured through a symlink works", async () => {
    await fs.symlink("proj", path.join(f.root, "proj-link"));
    const linked = makeToolContext(path.join(f.root, "proj-link"));
    okData(await write({ path: "new/deep/file.txt", content: "ok\n", create_dirs: true }, linked));
    expect(await fs.readFile(path.join(f.root, "proj", "new", "deep", "file.txt"), "utf8")).toBe("ok\n");
  });
});

describe("write_file: encoding, BOM and line endings (C06, C07, C08, C10)", () => {
  const csproj = Buffer.concat([BOM8, Buffer.from("<Project>\r\n  <Name>Caf\u00c3\u00a9</Name>\r\n</Project>\r\n", "latin1")]);
  const cases: Array<{ name: string; file: Buffer; content: string; expected: Buffer; warnings?: string[]; notes?: string[] }> = [
    {
      name: "C07-3 content with a BOM over a BOM file: exactly one BOM",
      file: csproj,
      content: "\ufeff<Project>\r\n</Project>\r\n",
      expected: Buffer.concat([BOM8, Buffer.from("<Project>\r\n</Project>\r\n")]),
    },
    {
      name: "C07-4 content without a BOM over a BOM file: the BOM is kept",
      file: csproj,
      content: "<Project>\r\n</Project>\r\n",
      expected: Buffer.concat([BOM8, Buffer.from("<Project>\r\n</Project>\r\n")]),
    },
    {
      name: "C08-4 LF content over a CRLF file is written with CRLF",
      file: Buffer.from('def greet(name):\r\n    print("hello")\r\n'),
      content: "a\nb\n",
      expected: Buffer.from("a\r\nb\r\n"),
      warnings: ["line endings written as CRLF, like the existing file (content had LF only)"],
    },
    { name: "CRLF content over a CRLF file is kept, no \\r\\r\\n", file: Buffer.from("x\r\n"), content: "a\r\nb\r\n", expected: Buffer.from("a\r\nb\r\n") },
    { name: "CRLF content over an LF file is written as given", file: Buffer.from("x\n"), content: "a\r\nb\r\n", expected: Buffer.from("a\r\nb\r\n"), notes: ["line endings change: LF → CRLF"] },
    { name: "LF content over a mixed file is written as given", file: Buffer.from("x\r\ny\n"), content: "a\nb\n", expected: Buffer.from("a\nb\n") },
    { name: "a BOM in content adds one to a file without", file: Buffer.from("x\n"), content: "\ufeffx\n", expected: Buffer.concat([BOM8, Buffer.from("x\n")]), notes: ["byte order mark (BOM) added"] },
    { name: "C10 UTF-16LE file stays UTF-16LE with BOM", file: hex("FFFE 6800 6900 0D00 0A00"), content: "yo\n", expected: hex("FFFE 7900 6F00 0D00 0A00") },
    { name: "UTF-16BE file stays UTF-16BE", file: hex("FEFF 0068 0069"), content: "\ufeffyo", expected: hex("FEFF 0079 006F") },
    { name: "C06-3 text over invalid UTF-8 is plain UTF-8", file: hex("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a"), content: "const x = 3;\n", expected: Buffer.from("const x = 3;\n") },
    {
      name: "C10-4 text over a binary file",
      file: Buffer.concat([hex("89504E470D0A1A0A0000000D49484452"), Buffer.alloc(1000)]),
      content: "now text\n",
      expected: Buffer.from("now text\n"),
      warnings: ["replaces a binary file (1016 bytes); its bytes are kept in the backup"],
    },
  ];
  test.each(cases)("$name", async ({ file, content, expected, warnings, notes }) => {
    await f.put("t.txt", file);
    const data = okData(await write({ path: "t.txt", content }));
    const bytes = await fs.readFile(f.at("t.txt"));
    expect(bytes.toString("hex")).toBe(expected.toString("hex"));
    expect(bytes.includes(hex("EFBBBF EFBBBF"))).toBe(false);
    expect(data.sha256).toBe(shaOf(expected));
    expect(ctx.savedBackups[0].bytes.equals(file)).toBe(true);
    for (const w of [...(warnings ?? []), ...(notes ?? [])]) expect(data.warnings).toContain(w);
  });

  test("C07: the diff of a BOM-preserving rewrite does not list the BOM", async () => {
    await f.put("app.csproj", csproj);
    const data = okData(await write({ path: "app.csproj", content: "\ufeff<Project>\r\n</Project>\r\n" }));
    expect(data.diff).not.toContain("\ufeff");
    expect(data).toMatchObject({ additions: 0, deletions: 1, bom: true, eol: "crlf" });
    expect((data.warnings as string[]).some((w) => w.includes("BOM"))).toBe(false);
  });

  test.each([
    ["UTF-8 text with a stray invalid byte", Buffer.concat([Buffer.from("const x = 1;\n// caf\u00e9 "), hex("e9"), Buffer.from(" note\n")]), "lossy_rewrite"],
    ["C06 legacy.js (Latin-1 byte, encoding only guessed)", hex("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a"), "uncertain_encoding"],
  ])("C06: content holding U+FFFD over %s is refused (%s)", async (_name, legacy, reason) => {
    await f.put("legacy.js", legacy);
    expectError(await write({ path: "legacy.js", content: "const x = 2;\n// caf\ufffd note\n" }), "encoding_unsupported", { reason });
    expect((await fs.readFile(f.at("legacy.js"))).equals(legacy)).toBe(true);
    expect(ctx.savedBackups).toHaveLength(0);
  });
});

describe("write_file: write safety (C13)", () => {
  test("C13-1 run.sh keeps mode 0755, sha256 992e1ee5…b561afbd, backup holds the old bytes", async () => {
    await f.put("run.sh", "#!/bin/sh\necho hi\n", 0o755);
    expect(shaOf("#!/bin/sh\necho hi\n")).toMatch(/^29900186[0-9a-f]{48}a6a9cbba$/);
    const data = okData(await write({ path: "run.sh", content: "#!/bin/sh\necho bye\n" }));
    expect(data.sha256).toMatch(/^992e1ee5[0-9a-f]{48}b561afbd$/);
    expect(data.mode).toBe("0755");
    expect(await modeOf(f.at("run.sh"))).toBe(0o755);
    expect(ctx.savedBackups[0]).toMatchObject({ mode: 0o755, sha256: shaOf("#!/bin/sh\necho hi\n") });
  });

  test("C13-2 secret.env keeps mode 0600", async () => {
    await f.put("secret.env", "K=V\n", 0o600);
    expect(okData(await write({ path: "secret.env", content: "K=W\n" })).mode).toBe("0600");
    expect(await modeOf(f.at("secret.env"))).toBe(0o600);
  });

  test.each([
    ["ENOSPC", "enospc"],
    ["EIO", "io"],
  ] as const)("C13-3 fault %s after 4 KiB of 1 MiB → write_failed (%s); old bytes and mode, no temp file, no backup", async (code, reason) => {
    await f.put("run.sh", "#!/bin/sh\necho hi\n", 0o755);
    armWriteFault({ afterBytes: 4096, code });
    expectError(await write({ path: "run.sh", content: "#".repeat(1 << 20) }), "write_failed", { reason });
    expect(await fs.readFile(f.at("run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
    expect(await modeOf(f.at("run.sh"))).toBe(0o755);
    expect(await tempFiles(f.ws)).toEqual([]);
    expect(ctx.savedBackups).toHaveLength(0);
    expect(lockedPathCount()).toBe(0);
  });

  test("C13-4 a symlink inside is kept; its target is written and reported as the path", async () => {
    await f.put("releases/v2.txt", "v2\n");
    await fs.symlink("releases/v2.txt", f.at("current.txt"));
    const data = okData(await write({ path: "current.txt", content: "v2b\n" }));
    expect(data.path).toBe("releases/v2.txt");
    expect(ctx.notes.pathResolved).toBe(f.at("releases/v2.txt"));
    expect((await fs.lstat(f.at("current.txt"))).isSymbolicLink()).toBe(true);
    expect(await fs.readFile(f.at("releases/v2.txt"), "utf8")).toBe("v2b\n");
    expect(ctx.savedBackups[0].path).toBe("releases/v2.txt");
  });

  test("C13-5 a hard link to a file outside is not written through; nlink_before: 2", async () => {
    const shared = path.join(f.root, "proj-out", "shared.txt");
    await fs.writeFile(shared, "shared\n");
    await fs.link(shared, f.at("hl.txt"));
    const data = okData(await write({ path: "hl.txt", content: "changed\n" }));
    expect(data.nlink_before).toBe(2);
    expect((data.warnings as string[]).some((w) => w.includes("2 hard links"))).toBe(true);
    expect(await fs.readFile(shared, "utf8")).toBe("shared\n");
    expect(await fs.readFile(f.at("hl.txt"), "utf8")).toBe("changed\n");
  });
});

describe("write_file: stale content and queued conflicts (C15, DESIGN 605)", () => {
  const GREEN = "The mat was green\n";
  const PURPLE = "The mat was purple\n";
  const GREEN_SHA = "d55118c031bef12d075ff6e8a1174d283a18a6bc5abe77ee5b97978e628877bd";

  test("the case's hashes are what the bytes give", () => {
    expect(shaOf(GREEN)).toBe(GREEN_SHA);
    expect(shaOf(PURPLE)).toMatch(/^bdf728e6[0-9a-f]{48}391f8162$/);
  });

  test("C15-3 changed on disk → stale_content with current_sha256; file still purple; no backup", async () => {
    await f.put("story.md", PURPLE);
    expectError(await write({ path: "story.md", content: `${GREEN}More.\n`, expected_sha256: GREEN_SHA }), "stale_content", {
      current_sha256: shaOf(PURPLE),
      expected_sha256: GREEN_SHA,
    });
    expect(await fs.readFile(f.at("story.md"), "utf8")).toBe(PURPLE);
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("C15-4 same bytes with a new mtime → succeeds (hash, not mtime)", async () => {
    await f.put("story.md", GREEN);
    const later = new Date(Date.now() + 3_600_000);
    await fs.utimes(f.at("story.md"), later, later);
    okData(await write({ path: "story.md", content: `${GREEN}More.\n`, expected_sha256: GREEN_SHA.toUpperCase() }));
    expect(await fs.readFile(f.at("story.md"), "utf8")).toBe(`${GREEN}More.\n`);
  });

  test("C15-5 without expected_sha256 → succeeds, records sha256_before of purple, and restore_backup recovers it", async () => {
    await f.put("story.md", PURPLE);
    const data = okData(await write({ path: "story.md", content: `${GREEN}More.\n` }));
    expect(data.sha256_before).toBe(shaOf(PURPLE));
    expect(ctx.notes.shaBefore).toBe(shaOf(PURPLE));
    okData(await call(restoreBackupTool, { backup_id: data.backup_id }, ctx));
    expect(await fs.readFile(f.at("story.md"), "utf8")).toBe(PURPLE);
  });

  test("expected_sha256 for a file that does not exist → stale_content with current_sha256 null", async () => {
    expectError(await write({ path: "gone.md", content: "x", expected_sha256: GREEN_SHA }), "stale_content", { current_sha256: null });
    await expect(fs.stat(f.at("gone.md"))).rejects.toThrow();
  });

  const queued: Array<{ name: string; queuedSha: () => string | null; setup: () => Promise<void>; ok: boolean }> = [
    { name: "unchanged since queued", queuedSha: () => shaOf(GREEN), setup: () => f.put("story.md", GREEN), ok: true },
    { name: "changed since queued", queuedSha: () => shaOf(GREEN), setup: () => f.put("story.md", PURPLE), ok: false },
    { name: "created since queued (queued as missing)", queuedSha: () => null, setup: () => f.put("story.md", PURPLE), ok: false },
    { name: "still missing as queued", queuedSha: () => null, setup: async () => {}, ok: true },
  ];
  test.each(queued)("approved call, target $name", async ({ queuedSha, setup, ok }) => {
    await setup();
    ctx.queuedTargetSha256 = queuedSha();
    const before = await snapshot(f.ws);
    const outcome = await write({ path: "story.md", content: "approved\n" });
    if (ok) {
      expect(okData(outcome).sha256).toBe(shaOf("approved\n"));
    } else {
      expectError(outcome, "conflict", { queued_sha256: queuedSha(), current_sha256: shaOf(PURPLE) });
      expect(await snapshot(f.ws)).toEqual(before);
      expect(ctx.savedBackups).toHaveLength(0);
    }
  });
});

describe("write_file / edit_file: concurrency on one path (C14), 50 repetitions each", () => {
  const ORIGINAL = "alpha\nbeta\n";
  const ORIGINAL_SHA = "e49c81e2d2f84e259d40e2fb8192f3bcd198b355184845d76d8f58807d0d78ee";
  const REPS = 50;

  test("the case's hashes are what the bytes give", () => {
    expect(shaOf(ORIGINAL)).toBe(ORIGINAL_SHA);
    expect(shaOf("ALPHA\nBETA\n")).toMatch(/^83df7e59[0-9a-f]{48}3b94a12a$/);
  });

  test("C14-1 two parallel edits: both applied, ALPHA\\nBETA\\n every time", async () => {
    for (let i = 0; i < REPS; i++) {
      await fs.writeFile(f.at("plan.md"), ORIGINAL);
      const c = makeToolContext(f.ws);
      const [a, b] = await Promise.all([
        call(editFileTool, { path: "plan.md", old_string: "alpha", new_string: "ALPHA" }, c),
        call(editFileTool, { path: "plan.md", old_string: "beta", new_string: "BETA" }, c),
      ]);
      okData(a);
      okData(b);
      expect(await fs.readFile(f.at("plan.md"), "utf8")).toBe("ALPHA\nBETA\n");
      const [firstBackup, secondBackup] = c.savedBackups.map((x) => x.bytes.toString());
      expect(firstBackup).toBe(ORIGINAL);
      expect(["ALPHA\nbeta\n", "alpha\nBETA\n"]).toContain(secondBackup);
    }
    expect(await tempFiles(f.ws)).toEqual([]);
    expect(lockedPathCount()).toBe(0);
  });

  test("C14-2 two parallel writes: both ok, final is one of them, the second backup holds the first's result", async () => {
    for (let i = 0; i < REPS; i++) {
      await fs.writeFile(f.at("plan.md"), ORIGINAL);
      const c = makeToolContext(f.ws);
      const results = (await Promise.all([write({ path: "plan.md", content: "one\n" }, c), write({ path: "plan.md", content: "two\n" }, c)])).map(okData);
      const first = results.find((r) => r.sha256_before === ORIGINAL_SHA)!;
      const second = results.find((r) => r !== first)!;
      expect(second.sha256_before).toBe(first.sha256);
      const final = await fs.readFile(f.at("plan.md"), "utf8");
      expect(shaOf(final)).toBe(second.sha256);
      expect(c.savedBackups.map((b) => b.bytes.toString())).toEqual([ORIGINAL, final === "one\n" ? "two\n" : "one\n"]);
    }
    expect(await tempFiles(f.ws)).toEqual([]);
    expect(lockedPathCount()).toBe(0);
  });

  test("C14-3 two parallel writes with the same expected_sha256: exactly one ok, the other stale_content with the current sha256", async () => {
    for (let i = 0; i < REPS; i++) {
      await fs.writeFile(f.at("plan.md"), ORIGINAL);
      const c = makeToolContext(f.ws);
      const outcomes = await Promise.all([
        write({ path: "plan.md", content: "one\n", expected_sha256: ORIGINAL_SHA }, c),
        write({ path: "plan.md", content: "two\n", expected_sha256: ORIGINAL_SHA }, c),
      ]);
      const oks = outcomes.filter((o) => o.ok);
      expect(oks).toHaveLength(1);
      const winner = okData(oks[0]);
      expectError(outcomes.find((o) => !o.ok)!, "stale_content", { current_sha256: winner.sha256 });
      expect(shaOf(await fs.readFile(f.at("plan.md")))).toBe(winner.sha256);
      expect(c.savedBackups).toHaveLength(1);
    }
    expect(await tempFiles(f.ws)).toEqual([]);
  });

  test("C14-4 two parallel creations of fresh.md: one created, the other sees the first's content as before", async () => {
    for (let i = 0; i < REPS; i++) {
      await fs.rm(f.at("fresh.md"), { force: true });
      const c = makeToolContext(f.ws);
      const results = (await Promise.all([write({ path: "fresh.md", content: "one\n" }, c), write({ path: "fresh.md", content: "two\n" }, c)])).map(okData);
      expect(results.filter((r) => r.created)).toHaveLength(1);
      const first = results.find((r) => r.created)!;
      const second = results.find((r) => !r.created)!;
      expect(second.sha256_before).toBe(first.sha256);
      const firstContent = first.sha256 === shaOf("one\n") ? "one" : "two";
      expect(second.diff).toContain(`-${firstContent}`);
      expect(c.savedBackups.map((b) => b.bytes.toString())).toEqual([`${firstContent}\n`]);
    }
    expect(await tempFiles(f.ws)).toEqual([]);
    expect(lockedPathCount()).toBe(0);
  });
});

describe("write_file: preview for the approval queue", () => {
  test("computes the diff and the target's sha256 without writing anything", async () => {
    await f.put("app.py", "a\r\nb\r\n");
    const before = await snapshot(f.root);
    const preview = await writeFileTool.preview!(writeFileTool.input.parse({ path: "app.py", content: "a\nc\n" }), ctx);
    expect(preview).toMatchObject({ path: "app.py", targetSha256: shaOf("a\r\nb\r\n"), additions: 1, deletions: 1 });
    expect(preview.diff).toContain("+c");
    expect(preview.warnings).toContain("line endings written as CRLF, like the existing file (content had LF only)");
    expect(await snapshot(f.root)).toEqual(before);
    expect(ctx.savedBackups).toHaveLength(0);
  });

  test("a very large change previews a diff cut to 1,000,000 characters, with a warning and whole counts", async () => {
    const content = "line\n".repeat(300_000);
    const preview = await writeFileTool.preview!(writeFileTool.input.parse({ path: "big.txt", content }), ctx);
    expect(preview.diff!.length).toBeLessThanOrEqual(1_000_000);
    expect(preview.additions).toBe(300_000);
    expect(preview.warnings).toContain("the diff is cut to its first 1000000 characters; the counts are for the whole change");
  });

  test("a new file previews with targetSha256 null", async () => {
    const preview = await writeFileTool.preview!(writeFileTool.input.parse({ path: "n/new.txt", content: "x\n" }), ctx);
    expect(preview).toMatchObject({ path: "n/new.txt", targetSha256: null, additions: 1, deletions: 0 });
    await expect(fs.stat(f.at("n"))).rejects.toThrow();
  });

  test("a write that cannot succeed is refused by the preview (same error as run)", async () => {
    await fs.symlink(path.join(f.root, "proj-out", "secret.txt"), f.at("leak.txt"));
    await expect(writeFileTool.preview!(writeFileTool.input.parse({ path: "leak.txt", content: "x" }), ctx)).rejects.toMatchObject({
      errorName: "path_outside_workspace",
    });
  });
});
