import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, test, vi } from "vitest";
import { errorBody, httpStatusOf, ToolError } from "@/lib/errors";
import { writeFileTool } from "@/lib/tools/write-file";
import { asExpectedWriteFailure } from "@/lib/workspace/atomic-write";
import { workspaceTest } from "@/tests/helpers/tool-context";
import { call, expectError } from "@/tests/tools/write-tool-helpers";
import { armWriteFault } from "@/tests/helpers/write-fault";

// Disk faults come from a wrapped node:fs/promises (tests/helpers/write-fault.ts), not from the product.
vi.mock("node:fs/promises", async (importOriginal) => (await import("@/tests/helpers/write-fault")).withWriteFaults(await importOriginal()));

/**
 * Expected file-system failures of a write are answers an agent can act on, not server errors:
 * a full disk is `write_failed` with 507 and `retryable: false` naming what was not written; a
 * folder that vanished or became a symlink during the call is `not_found` / `path_outside_workspace`
 * with reason "changed_during_call". (The doors: tests/reliability/faults-fs.test.ts.)
 */

afterEach(() => {
  armWriteFault(null);
});

describe("status and retryability of write_failed by reason", () => {
  test.each([
    ["enospc", 507, false],
    ["erofs", 507, false],
    ["eacces", 403, false],
    ["io", 500, true],
    [undefined, 500, true],
  ])("%s → HTTP %i, retryable %s", (reason, status, retryable) => {
    const detail: Record<string, unknown> = reason ? { reason } : {};
    expect(httpStatusOf("write_failed", detail)).toBe(status);
    expect(errorBody("write_failed", "x", detail).retryable).toBe(retryable);
  });

  test("other names keep the table's status whatever their reason", () => {
    expect(httpStatusOf("not_found", { reason: "enospc" })).toBe(404);
    // A reason not declared for the name (the type forbids it; a detail read back from storage may hold anything).
    const stray: Record<string, unknown> = { reason: "enospc" };
    expect(errorBody("internal", "x", stray).retryable).toBe(true);
  });
});

describe("write_file on a full disk", () => {
  workspaceTest.for(["ENOSPC", "EDQUOT"] as const)("%s mid-write: 507-class write_failed naming the path and size; the file is unchanged", async (code, { f, ctx }) => {
    await f.put("keep.txt", "old\n");
    armWriteFault({ afterBytes: 3, code });
    const err = expectError(await call(writeFileTool, { path: "keep.txt", content: "new content\n" }, ctx), "write_failed", {
      reason: "enospc",
      path: "keep.txt",
      size_bytes: 12,
    });
    expect(err.message).toMatch(/Nothing was written to keep\.txt \(12 bytes\); the file is unchanged\.$/);
    expect(err.toBody()).toMatchObject({ retryable: false });
    expect(httpStatusOf(err.errorName, err.detail)).toBe(507);
    expect(await fs.readFile(f.at("keep.txt"), "utf8")).toBe("old\n");
  });
});

describe("a folder changed during the call", () => {
  const errno = (code: string) => Object.assign(new Error(code), { code });

  workspaceTest("a raw ENOENT or ENOTDIR from any step → not_found changed_during_call", async ({ f }) => {
    for (const code of ["ENOENT", "ENOTDIR"]) {
      const out = (await asExpectedWriteFailure(errno(code), f.ws, "d/x.txt")) as ToolError;
      expect(out.errorName).toBe("not_found");
      expect(out.detail).toMatchObject({ reason: "changed_during_call", path: "d/x.txt" });
    }
  });

  workspaceTest("ELOOP (a symlink met where O_NOFOLLOW forbids one) → path_outside_workspace changed_during_call", async ({ f }) => {
    const out = (await asExpectedWriteFailure(errno("ELOOP"), f.ws, "d/x.txt")) as ToolError;
    expect(out.errorName).toBe("path_outside_workspace");
    expect(out.detail.reason).toBe("changed_during_call");
  });

  workspaceTest("write_failed target_changed: the folder gone → not_found; the folder now a symlink outside → path_outside_workspace", async ({ f }) => {
    const changed = new ToolError("write_failed", "moved", { reason: "target_changed" });
    expect(((await asExpectedWriteFailure(changed, f.ws, "gone/x.txt")) as ToolError).errorName).toBe("not_found");
    await fs.symlink(f.root, path.join(f.ws, "link"));
    const out = (await asExpectedWriteFailure(changed, f.ws, "link/x.txt")) as ToolError;
    expect(out.errorName).toBe("path_outside_workspace");
    expect(out.detail).toMatchObject({ reason: "changed_during_call", race: true });
  });

  workspaceTest("write_failed with errno ENOENT (the temp file's folder vanished) → not_found", async ({ f }) => {
    const vanished = new ToolError("write_failed", "The write failed: I/O error (ENOENT).", { reason: "io", errno: "ENOENT" });
    expect(((await asExpectedWriteFailure(vanished, f.ws, "d/x.txt")) as ToolError).errorName).toBe("not_found");
  });

  workspaceTest("other refusals pass through unchanged", async ({ f }) => {
    const stale = new ToolError("stale_content", "changed", {});
    expect(await asExpectedWriteFailure(stale, f.ws, "x.txt")).toBe(stale);
    const missing = new ToolError("not_found", "parent missing", { reason: "parent_missing" });
    expect(await asExpectedWriteFailure(missing, f.ws, "x.txt")).toBe(missing);
    const bug = new TypeError("boom");
    expect(await asExpectedWriteFailure(bug, f.ws, "x.txt")).toBe(bug);
  });
});
