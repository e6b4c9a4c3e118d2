import fs from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";

/**
 * File names that are not valid UTF-8 in a command's change set: every later step names files as
 * text, so such an entry is listed as skipped (escaped, with the reason) and left out, while the
 * rest of the change set applies; a directory that keeps one is kept, not half-deleted.
 */

let ws: Workspace;
const bytes = (rel: string) => Buffer.from(rel, "latin1");
const listRaw = (rel: string) => fs.readdirSync(Buffer.concat([Buffer.from(ws.root + "/"), bytes(rel)]), { encoding: "buffer" }).map((b) => b.toString("latin1")).sort();

beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
});

beforeEach(() => emptyWorkspace(ws));

describe("names that are not UTF-8", () => {
  it.each([
    ["a lone 0xff byte", "a\\377b", "a\\xffb"],
    ["a truncated two-byte sequence", "x\\303", "x\\xc3"],
    ["an overlong encoding of '/'", "o\\300\\257", "o\\xc0\\xaf"],
    ["a UTF-16 surrogate encoded in UTF-8", "s\\355\\240\\200", "s\\xed\\xa0\\x80"],
  ])("a file created with %s is skipped and named; the rest of the change set applies", async (_, octal, escaped) => {
    const r = await runBoxed(ws, `printf x > "$(printf '${octal}')" && mkdir -p d && printf y > "d/$(printf '${octal}')" && printf ok > ok.txt`, { sandbox: true });
    expect(r.result.exit_code, r.result.stderr).toBe(0);
    expect(fs.readFileSync(path.join(ws.root, "ok.txt"), "utf8")).toBe("ok");
    expect(listRaw(".")).toEqual(["d", "ok.txt"]);
    expect(listRaw("d")).toEqual([]);
    const skipped = (r.changes?.skipped ?? []).map((s) => s.path).sort();
    expect(skipped).toEqual([escaped, `d/${escaped}`].sort());
    expect(r.changes?.skipped?.[0].reason).toContain("not valid UTF-8");
  });

  it("rm -rf of a directory holding such a name (the person's) deletes the rest; the name and its directories stay", async () => {
    fs.mkdirSync(path.join(ws.root, "dir/sub"), { recursive: true });
    fs.writeFileSync(path.join(ws.root, "dir/plain.txt"), "p\n");
    fs.writeFileSync(path.join(ws.root, "dir/sub/deeper.txt"), "d\n");
    fs.writeFileSync(Buffer.concat([Buffer.from(path.join(ws.root, "dir/sub") + "/"), Buffer.from([0x6b, 0xfe])]), "kept\n");
    // In the box the name is masked like a secret (a mount point): rm cannot remove it, and says so.
    const r = await runBoxed(ws, "rm -rf dir", { sandbox: true });
    expect(r.result.stderr).toContain("Device or resource busy");
    expect(listRaw("dir")).toEqual(["sub"]);
    expect(listRaw("dir/sub")).toEqual([Buffer.from([0x6b, 0xfe]).toString("latin1")]);
    expect(fs.readFileSync(Buffer.concat([Buffer.from(path.join(ws.root, "dir/sub") + "/"), Buffer.from([0x6b, 0xfe])]), "utf8")).toBe("kept\n");
    expect(r.changes?.files.map((f) => `${f.kind} ${f.path}`).sort()).toEqual(["deleted dir/plain.txt", "deleted dir/sub/deeper.txt"]);
  });
});
