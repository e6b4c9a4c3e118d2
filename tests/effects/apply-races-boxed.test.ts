import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { db } from "@/lib/db";
import { setApplyRaceHook, type ApplyRaceHook } from "@/lib/effects/apply";
import { ToolError } from "@/lib/errors";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import type { Workspace } from "@/lib/tools/define-tool";
import { emptyWorkspace, runBoxed } from "@/tests/effects/run-boxed";

/**
 * A command's change set applied while another change set swaps a name it touches (the race of a
 * second run_command applied in between), the way run_command does it: real bwrap box, real
 * overlay capture, real SQLite journal and backups. The swap happens at the apply's test hook,
 * between a row's check and its chmod / placement / unlink. A host file and a host directory
 * outside the workspace keep their mode and entries; the call fails, the change set is discarded
 * as rolled back, and no temp names are left in the workspace.
 */

let ws: Workspace;
let host: string;
let hostFile: string;
let hostDir: string;
beforeAll(async () => {
  await useFreshDatabase();
  ws = await currentWorkspace();
  host = fs.mkdtempSync(path.join(os.tmpdir(), "ar-host-"));
  hostFile = path.join(host, "secret.conf");
  hostDir = path.join(host, "dir");
});
afterAll(() => fs.rmSync(host, { recursive: true, force: true }));
beforeEach(() => {
  emptyWorkspace(ws);
  fs.rmSync(hostFile, { force: true });
  fs.rmSync(hostDir, { recursive: true, force: true });
  fs.writeFileSync(hostFile, "HOST\n");
  fs.chmodSync(hostFile, 0o600);
  fs.mkdirSync(hostDir);
  fs.chmodSync(hostDir, 0o700);
  fs.writeFileSync(path.join(hostDir, "victim.txt"), "VICTIM\n");
});
afterEach(() => setApplyRaceHook(null));

const at = (rel: string) => path.join(ws.root, rel);
const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777;

function expectHostUntouched(): void {
  expect(modeOf(hostFile).toString(8)).toBe("600");
  expect(fs.readFileSync(hostFile, "utf8")).toBe("HOST\n");
  expect(modeOf(hostDir).toString(8)).toBe("700");
  expect(fs.readdirSync(hostDir)).toEqual(["victim.txt"]);
}

/** Runs `command` boxed; at the first `point` of the apply, `swap` runs (the other change set). */
async function runRacing(command: string, point: Parameters<ApplyRaceHook>[0], swap: () => void) {
  let fired = 0;
  setApplyRaceHook((p) => {
    if (p === point && fired++ === 0) swap();
  });
  const outcome = await runBoxed(ws, command, { sandbox: true }).then(
    (r) => ({ ok: true as const, r }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  // At least once: the roll back of the failed apply passes the same points again.
  expect(fired, `the hook at "${point}" ran`).toBeGreaterThanOrEqual(1);
  return outcome;
}

async function lastChangeSet() {
  return db().changeSet.findFirst({ orderBy: { createdAt: "desc" } });
}

describe("run_command's apply against a name swapped mid-apply", () => {
  it.each([
    ["chmod of a file whose bytes are unchanged (swapped before the open)", "file"],
    ["chmod of a file whose bytes are unchanged (swapped after the hash)", "file-checked"],
  ] as const)("%s: the host file keeps 0600", async (_what, point) => {
    fs.writeFileSync(at("big.bin"), Buffer.alloc(1 << 16, 1));
    fs.chmodSync(at("big.bin"), 0o644);
    const out = await runRacing("chmod 750 big.bin", point, () => {
      fs.unlinkSync(at("big.bin"));
      fs.symlinkSync(hostFile, at("big.bin"));
    });
    expect(out.ok).toBe(false);
    expect(out.ok ? null : (out.err as ToolError).detail).toMatchObject({ path: "big.bin", reason: "type_changed" });
    expectHostUntouched();
    const set = await lastChangeSet();
    expect([set?.status, set?.recovery]).toEqual(["discarded", "rolled_back"]);
  });

  it("chmod of a directory swapped for a link to a host directory: the host directory keeps 0700", async () => {
    fs.mkdirSync(at("d"));
    fs.chmodSync(at("d"), 0o755);
    fs.writeFileSync(at("d/x"), "x\n");
    const out = await runRacing("chmod 750 d", "dir", () => {
      fs.rmSync(at("d"), { recursive: true });
      fs.symlinkSync(hostDir, at("d"));
    });
    expect(out.ok).toBe(false);
    expectHostUntouched();
    expect((await lastChangeSet())?.status).toBe("discarded");
  });

  it("a new link whose directory became a link to a host directory is not placed there", async () => {
    fs.mkdirSync(at("sub"));
    fs.writeFileSync(at("sub/target.txt"), "t\n");
    const out = await runRacing("ln -s target.txt sub/victim.txt && echo n > new.txt", "symlink", () => {
      fs.renameSync(at("sub"), at("sub.moved"));
      fs.symlinkSync(hostDir, at("sub"));
    });
    expect(out.ok).toBe(false);
    expect(out.ok ? null : (out.err as ToolError).detail).toMatchObject({ reason: "parent_symlink" });
    expectHostUntouched();
    expect(fs.readdirSync(at("sub.moved")).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    // The rest of the change set was rolled back too.
    expect(fs.existsSync(at("new.txt"))).toBe(false);
    expect((await lastChangeSet())?.status).toBe("discarded");
  });

  it("a deletion whose directory became a link to a host directory unlinks nothing there", async () => {
    fs.mkdirSync(at("sub"));
    fs.writeFileSync(at("sub/victim.txt"), "mine\n");
    const out = await runRacing("rm sub/victim.txt", "remove", () => {
      fs.renameSync(at("sub"), at("sub.moved"));
      fs.symlinkSync(hostDir, at("sub"));
    });
    expect(out.ok).toBe(false);
    expectHostUntouched();
    expect(fs.readFileSync(at("sub.moved/victim.txt"), "utf8")).toBe("mine\n");
    expect((await lastChangeSet())?.status).toBe("discarded");
  });

  it("without a swap the same commands apply", async () => {
    fs.writeFileSync(at("big.bin"), Buffer.alloc(1 << 16, 1));
    fs.chmodSync(at("big.bin"), 0o644);
    fs.mkdirSync(at("sub"));
    fs.writeFileSync(at("sub/target.txt"), "t\n");
    fs.writeFileSync(at("sub/old.txt"), "o\n");
    const r = await runBoxed(ws, "chmod 755 big.bin && mkdir -m 750 nd && ln -s target.txt sub/link && rm sub/old.txt && echo n > nd/new.txt", { sandbox: true });
    expect(r.changes?.status).toBe("applied");
    expect(modeOf(at("big.bin")).toString(8)).toBe("755");
    expect(modeOf(at("nd")).toString(8)).toBe("750");
    expect(fs.readFileSync(at("sub/link"), "utf8")).toBe("t\n");
    expect(fs.existsSync(at("sub/old.txt"))).toBe(false);
    expect(fs.readFileSync(at("nd/new.txt"), "utf8")).toBe("n\n");
    expectHostUntouched();
  });
});
