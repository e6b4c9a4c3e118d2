import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * The dashboard's reads and the restore, in process on a real SQLite file and workspace: a write
 * queued for approval as the inbox shows it (target state, edit preview), decided, then found
 * again on the call page (history, full diff, backup) and in the backups (versions, diffs,
 * restore that can itself be undone), and in the JSONL export.
 */

let workspace: string;
type Lib = {
  callTool: typeof import("@/lib/gateway/call-tool").callTool;
  queue: typeof import("@/lib/approvals/queue");
  approvals: typeof import("@/lib/dashboard/approvals");
  calls: typeof import("@/lib/dashboard/calls");
  backups: typeof import("@/lib/dashboard/backups");
  restore: typeof import("@/lib/backups/restore");
  audit: typeof import("@/lib/dashboard/audit");
};
let lib: Lib;
let agent: import("@/lib/gateway/call-tool").Caller;

beforeAll(async () => {
  ({ workspace } = await useFreshDatabase());
  const { seedDefaultRules } = await import("@/lib/policy/rule-store");
  await seedDefaultRules();
  const { createAgentToken } = await import("@/lib/auth/tokens");
  agent = { door: "http", agent: (await createAgentToken("test agent")).agent, sessionKey: "s1" };
  lib = {
    callTool: (await import("@/lib/gateway/call-tool")).callTool,
    queue: await import("@/lib/approvals/queue"),
    approvals: await import("@/lib/dashboard/approvals"),
    calls: await import("@/lib/dashboard/calls"),
    backups: await import("@/lib/dashboard/backups"),
    restore: await import("@/lib/backups/restore"),
    audit: await import("@/lib/dashboard/audit"),
  };
});

async function queueWrite(file: string, content: string): Promise<string> {
  const envelope = await lib.callTool(agent, "write_file", { path: file, content }, { waitMs: 0 });
  expect(envelope.ok ? null : envelope.error.name).toBe("approval_pending");
  return envelope.call_id!;
}

describe("approvals inbox reads", () => {
  it("lists a queued write with its proposed content and notices when the file changes", async () => {
    fs.writeFileSync(path.join(workspace, "a.txt"), "one\n");
    const callId = await queueWrite("a.txt", "one\ntwo\n");
    let item = (await lib.approvals.loadInbox()).items.find((i) => i.call_id === callId)!;
    expect(item.proposedContent).toBe("one\ntwo\n");
    expect(item.external).toBe(false);
    expect(item.target).toMatchObject({ changedSince: false, error: null });
    expect(item.preview.diff).toContain("+two");
    expect(await lib.approvals.countPending()).toBeGreaterThanOrEqual(1);

    fs.writeFileSync(path.join(workspace, "a.txt"), "changed\n");
    item = (await lib.approvals.loadInbox()).items.find((i) => i.call_id === callId)!;
    expect(item.target?.changedSince).toBe(true);
    const outcome = lib.approvals.describeDecision(callId, await lib.queue.approveCall(callId, "admin"), "Approved");
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toContain("conflict");
    expect(fs.readFileSync(path.join(workspace, "a.txt"), "utf8")).toBe("changed\n");
  });

  it("previews an edit with the write tool's own rules and refuses calls that cannot be edited", async () => {
    fs.writeFileSync(path.join(workspace, "crlf.txt"), "x\r\ny\r\n");
    const callId = await queueWrite("crlf.txt", "x\r\ny\r\nz\r\n");
    const preview = await lib.approvals.previewEditedWrite(callId, "x\ny\nedited\n");
    expect(preview.ok).toBe(true);
    if (preview.ok) {
      expect(preview.preview.diff).toContain("+edited");
      expect(preview.preview.warnings?.join(" ")).toContain("CRLF");
    }
    expect(await lib.approvals.previewEditedWrite("call_missing", "x")).toMatchObject({
      ok: false,
      error: { name: "conflict", code: 605, message: "This call is not waiting for approval any more.", detail: { reason: "not_pending" } },
    });
    expect(await lib.approvals.previewEditedWrite(callId, 7 as never)).toMatchObject({ ok: false, error: { name: "invalid_arguments" } });
    const outcome = lib.approvals.describeDecision(callId, await lib.queue.approveCall(callId, "admin", { content: "x\ny\nedited\n" }), "Approved");
    expect(outcome).toMatchObject({ ok: true, status: "succeeded" });
    expect(fs.readFileSync(path.join(workspace, "crlf.txt"), "utf8")).toBe("x\r\ny\r\nedited\r\n");
    const again = lib.approvals.describeDecision(callId, await lib.queue.rejectCall(callId, "admin", "late"), "Rejected");
    expect(again).toMatchObject({ ok: false, message: `Not rejected (call ${callId}): it was already decided` });
  });
});

describe("call page, backups and restore", () => {
  let writeCall: string;

  beforeAll(async () => {
    fs.writeFileSync(path.join(workspace, "config.json"), '{ "version": 1 }\n');
    writeCall = await queueWrite("config.json", '{ "version": 2 }\n');
    await lib.queue.approveCall(writeCall, "admin");
  });

  it("shows the call with its approval history, the full diff from the stored bytes and the backup it made", async () => {
    const detail = (await lib.calls.getCallDetail(writeCall))!;
    expect(detail.status).toBe("succeeded");
    expect(detail.reviewer).toBe("admin");
    expect(detail.events.map((e) => e.type)).toEqual(["call.received", "call.pending", "call.approved", "call.running", "call.succeeded"]);
    expect(detail.events.find((e) => e.type === "call.approved")?.actor).toBe("reviewer:admin");
    expect(detail.backupMade?.path).toBe("config.json");
    const diff = (await lib.calls.callDiff(detail))!;
    expect(diff.source).toBe("bytes");
    expect(diff.diff).toContain('-{ "version": 1 }');
    expect(diff.diff).toContain('+{ "version": 2 }');
    expect(await lib.calls.getCallDetail("call_missing")).toBeNull();
    expect(await lib.calls.callExists(writeCall)).toBe(true);
  });

  it("lists files and versions, diffs a version against the current file, restores it, and the restore can be undone", async () => {
    const files = await lib.backups.listBackedUpFiles("config", 1);
    expect(files.items.map((f) => f.path)).toEqual(["config.json"]);
    const [version] = await lib.backups.listVersions("config.json");
    expect(version.call).toMatchObject({ id: writeCall, tool: "write_file", status: "succeeded", reviewer: "admin" });
    const diff = (await lib.backups.diffVersion(version.id, { kind: "current" }))!;
    expect(diff.oldLabel).toBe("current file");
    expect(diff.diff).toContain('-{ "version": 2 }');
    expect(diff.diff).toContain('+{ "version": 1 }');
    const shown = lib.backups.showContent((await lib.backups.versionBytes(version.id))!.bytes);
    expect(shown).toMatchObject({ kind: "text", text: '{ "version": 1 }\n', eol: "lf" });

    const restored = await lib.restore.restoreBackupAsReviewer(version.id, "admin");
    expect(restored.envelope.ok).toBe(true);
    expect(fs.readFileSync(path.join(workspace, "config.json"), "utf8")).toBe('{ "version": 1 }\n');
    const restoreCall = (await lib.calls.getCallDetail(restored.callId!))!;
    expect(restoreCall).toMatchObject({ tool: "restore_backup", status: "succeeded", reviewer: "admin" });
    expect(restoreCall.restoredFrom?.id).toBe(version.id);

    // The restore backed up version 2 first: restoring that undoes the restore.
    const undo = restoreCall.backupMade!;
    const between = (await lib.backups.diffVersion(version.id, { kind: "version", backupId: undo.id }))!;
    expect(between.diff).toContain('-{ "version": 1 }');
    expect(between.diff).toContain('+{ "version": 2 }');
    expect((await lib.restore.restoreBackupAsReviewer(undo.id, "admin")).envelope.ok).toBe(true);
    expect(fs.readFileSync(path.join(workspace, "config.json"), "utf8")).toBe('{ "version": 2 }\n');
    expect((await lib.backups.listVersions("config.json")).length).toBe(3);
  });

  it("reports an unknown backup as not_found from the restore call", async () => {
    const outcome = await lib.restore.restoreBackupAsReviewer("bak_missing", "admin");
    expect(outcome.envelope.ok ? null : outcome.envelope.error.name).toBe("not_found");
    expect(await lib.backups.diffVersion("bak_missing", { kind: "current" })).toBeNull();
  });

  it("exports calls then events as JSON lines with the chain links, within the range", async () => {
    const lines: Record<string, unknown>[] = [];
    for await (const line of lib.audit.exportJsonl({})) {
      expect(line.endsWith("\n")).toBe(true);
      lines.push(JSON.parse(line));
    }
    const kinds = lines.map((l) => l.kind);
    expect(kinds.indexOf("event")).toBeGreaterThan(kinds.lastIndexOf("call"));
    const call = lines.find((l) => l.call_id === writeCall)!;
    expect(call).toMatchObject({ kind: "call", tool: "write_file", status: "succeeded", reviewer: "admin", decision: "ask" });
    const events = lines.filter((l) => l.kind === "event");
    for (let i = 1; i < events.length; i++) expect(events[i].prev_hash).toBe(events[i - 1].hash);

    const future = { from: new Date(Date.now() + 3600_000) };
    const none: string[] = [];
    for await (const line of lib.audit.exportJsonl(future)) none.push(line);
    expect(none).toEqual([]);
  });
});
