import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { editFileTool } from "@/lib/tools/edit-file";
import { listBackupsTool } from "@/lib/tools/list-backups";
import { restoreBackupTool } from "@/lib/tools/restore-backup";
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

const write = (args: Record<string, unknown>) => call(writeFileTool, args, ctx);
const restore = (args: Record<string, unknown>) => call(restoreBackupTool, args, ctx);
const list = (args: Record<string, unknown>) => call(listBackupsTool, args, ctx);
const modeOf = async (p: string) => (await fs.stat(p)).mode & 0o7777;

const LEGACY = hex("636f6e73742078203d20313b0a2f2f20636166e9206e6f74650a");
const LOGO = Buffer.concat([hex("89504E470D0A1A0A0000000D49484452"), Buffer.alloc(1000)]);

describe("restore_backup: bytes, not decoded strings (C06-3, C10-4)", () => {
  const cases: Array<{ name: string; file: Buffer; mode: number; content: string; sha?: RegExp }> = [
    { name: "C06-3 invalid UTF-8 file", file: LEGACY, mode: 0o644, content: "const x = 3;\n", sha: /^6b402505[0-9a-f]{48}b299eb51$/ },
    { name: "C10-4 binary logo.txt (1,016 bytes)", file: LOGO, mode: 0o644, content: "now text\n" },
    { name: "UTF-16LE file", file: hex("FFFE 6800 6900 0D00 0A00"), mode: 0o600, content: "yo\n" },
    { name: "executable script keeps 0755", file: Buffer.from("#!/bin/sh\necho hi\n"), mode: 0o755, content: "#!/bin/sh\necho bye\n" },
  ];
  test.each(cases)("$name: write, then restore gives the original bytes and mode back", async ({ file, mode, content, sha }) => {
    await f.put("t.bin", file, mode);
    const written = okData(await write({ path: "t.bin", content }));
    const data = okData(await restore({ backup_id: written.backup_id }));
    const bytes = await fs.readFile(f.at("t.bin"));
    expect(bytes.equals(file)).toBe(true);
    expect(await modeOf(f.at("t.bin"))).toBe(mode);
    if (sha) expect(data.sha256).toMatch(sha);
    expect(data).toMatchObject({
      path: "t.bin",
      restored_from: written.backup_id,
      created: false,
      sha256_before: written.sha256,
      sha256: shaOf(file),
      size_bytes: file.length,
      mode: mode.toString(8).padStart(4, "0"),
    });
    expect(ctx.notes).toMatchObject({ pathRaw: "t.bin", shaBefore: written.sha256, shaAfter: shaOf(file), backupId: data.backup_id });
  });
});

describe("restore_backup: an audited write like any other", () => {
  test("backs up the current bytes first, so the restore can be undone", async () => {
    const w = okData(await write({ path: "notes.txt", content: "v2\n" }));
    const r = okData(await restore({ backup_id: w.backup_id }));
    expect(r.backup_id).not.toBe(w.backup_id);
    expect(await fs.readFile(f.at("notes.txt"), "utf8")).toBe("inside notes\n");
    okData(await restore({ backup_id: r.backup_id }));
    expect(await fs.readFile(f.at("notes.txt"), "utf8")).toBe("v2\n");
    expect(ctx.savedBackups.map((b) => b.bytes.toString())).toEqual(["inside notes\n", "v2\n", "inside notes\n"]);
  });

  test("restores the mode saved with the backup even when the file's mode changed since", async () => {
    await f.put("run.sh", "#!/bin/sh\necho hi\n", 0o755);
    const w = okData(await write({ path: "run.sh", content: "x\n" }));
    await fs.chmod(f.at("run.sh"), 0o600);
    okData(await restore({ backup_id: w.backup_id }));
    expect(await modeOf(f.at("run.sh"))).toBe(0o755);
  });

  test("recreates a deleted file and its deleted directory", async () => {
    await f.put("a/b/c.txt", "orig\n");
    const e = okData(await call(editFileTool, { path: "a/b/c.txt", old_string: "orig", new_string: "new" }, ctx));
    await fs.rm(f.at("a"), { recursive: true });
    const r = okData(await restore({ backup_id: e.backup_id }));
    expect(r).toMatchObject({ created: true, sha256_before: null, backup_id: null });
    expect(await fs.readFile(f.at("a/b/c.txt"), "utf8")).toBe("orig\n");
  });

  test("bytes and mode already equal: nothing is written and no backup is made", async () => {
    const w = okData(await write({ path: "notes.txt", content: "v2\n" }));
    await fs.writeFile(f.at("notes.txt"), "inside notes\n");
    const r = okData(await restore({ backup_id: w.backup_id }));
    expect(r).toMatchObject({ changed: false, backup_id: null, diff: "" });
    expect(ctx.savedBackups).toHaveLength(1);
  });

  const refusals: Array<{ name: string; setup: () => Promise<Record<string, unknown>>; error: string; detail?: Record<string, unknown> }> = [
    { name: "unknown backup id", setup: async () => ({ backup_id: "bak_404" }), error: "not_found", detail: { reason: "backup_not_found", backup_id: "bak_404" } },
    {
      name: "expected_sha256 that is not the current content (C15)",
      setup: async () => {
        const w = okData(await write({ path: "notes.txt", content: "v2\n" }));
        return { backup_id: w.backup_id, expected_sha256: shaOf("inside notes\n") };
      },
      error: "stale_content",
      detail: { current_sha256: shaOf("v2\n") },
    },
    {
      name: "the path became a symlink leading outside (fenced again, C02)",
      setup: async () => {
        const w = okData(await write({ path: "notes.txt", content: "v2\n" }));
        await fs.rm(f.at("notes.txt"));
        await fs.symlink(path.join(f.root, "proj-out", "secret.txt"), f.at("notes.txt"));
        return { backup_id: w.backup_id };
      },
      error: "path_outside_workspace",
      detail: { reason: "symlink" },
    },
    {
      name: "a backup whose stored bytes do not match its sha256",
      setup: async () => {
        const w = okData(await write({ path: "notes.txt", content: "v2\n" }));
        ctx.savedBackups[0].bytes = Buffer.from("tampered\n");
        return { backup_id: w.backup_id };
      },
      error: "internal",
    },
    {
      name: "an approved restore whose target changed after queueing (605)",
      setup: async () => {
        const w = okData(await write({ path: "notes.txt", content: "v2\n" }));
        ctx.queuedTargetSha256 = shaOf("v1\n");
        return { backup_id: w.backup_id };
      },
      error: "conflict",
      detail: { queued_sha256: shaOf("v1\n"), current_sha256: shaOf("v2\n") },
    },
  ];
  test.each(refusals)("refuses $name → $error; nothing changes", async ({ setup, error, detail }) => {
    const args = await setup();
    const backupsBefore = ctx.savedBackups.length;
    const before = await snapshot(f.root);
    expectError(await restore(args), error, detail);
    expect(await snapshot(f.root)).toEqual(before);
    expect(ctx.savedBackups).toHaveLength(backupsBefore);
    expect(await fs.readFile(path.join(f.root, "proj-out", "secret.txt"), "utf8")).toBe("TOP-SECRET\n");
  });

  test("preview shows the diff back to the backup without writing", async () => {
    const w = okData(await write({ path: "notes.txt", content: "v2\n" }));
    const before = await snapshot(f.root);
    const preview = await restoreBackupTool.preview!(restoreBackupTool.input.parse({ backup_id: w.backup_id }), ctx);
    expect(preview).toMatchObject({ path: "notes.txt", targetSha256: shaOf("v2\n"), additions: 1, deletions: 1 });
    expect(preview.diff).toContain("+inside notes");
    expect(await snapshot(f.root)).toEqual(before);
  });
});

describe("list_backups", () => {
  beforeEach(async () => {
    await f.put("releases/v2.txt", "v2\n");
    await fs.symlink("releases/v2.txt", f.at("current.txt"));
    okData(await write({ path: "notes.txt", content: "n2\n" }));
    okData(await write({ path: "current.txt", content: "v2b\n" }));
    okData(await write({ path: "notes.txt", content: "n3\n" }));
  });

  test("every backup, newest first, with wire fields", async () => {
    const data = okData(await list({}));
    expect(data).toMatchObject({ path: null, total: 3, offset: 0, limit: 50, next_offset: null });
    const items = data.backups as Array<Record<string, unknown>>;
    expect(items.map((i) => [i.id, i.path])).toEqual([
      ["bak_3", "notes.txt"],
      ["bak_2", "releases/v2.txt"],
      ["bak_1", "notes.txt"],
    ]);
    expect(items[2]).toMatchObject({ sha256: shaOf("inside notes\n"), size_bytes: 13, mode: "0644", call_id: ctx.callId });
    expect(new Date(items[2].created_at as string).toISOString()).toBe(items[2].created_at);
  });

  test.each([
    ["notes.txt", ["bak_3", "bak_1"]],
    ["./sub/../notes.txt", ["bak_3", "bak_1"]],
    ["current.txt", ["bak_2"]],
    ["releases/v2.txt", ["bak_2"]],
    ["never-written.txt", []],
  ])("filtered by path %s (fenced: symlinks list their target's backups)", async (p, ids) => {
    const data = okData(await list({ path: p }));
    expect((data.backups as Array<{ id: string }>).map((i) => i.id)).toEqual(ids);
  });

  test("pages with offset / limit and next_offset", async () => {
    const page1 = okData(await list({ limit: 2 }));
    expect(page1).toMatchObject({ total: 3, next_offset: 2 });
    const page2 = okData(await list({ offset: page1.next_offset, limit: 2 }));
    expect(page2).toMatchObject({ next_offset: null });
    expect((page2.backups as unknown[]).length).toBe(1);
  });

  test("a path outside the workspace is refused", async () => {
    expectError(await list({ path: "../proj-out/secret.txt" }), "path_outside_workspace", { reason: "lexical" });
  });

  test.each([{ limit: 0 }, { limit: 201 }, { offset: -1 }, { offset: 1.5 }, { extra: true }])("schema refuses %o", (args) => {
    expect(() => listBackupsTool.input.parse(args)).toThrow();
  });
});
