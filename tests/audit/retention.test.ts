import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { appendEvent, verifyChain } from "@/lib/audit/events";
import { pruneBefore } from "@/lib/audit/retention";
import { putBlob } from "@/lib/backups/blobs";
import { db } from "@/lib/db";

/**
 * Retention prunes old calls, events, backups and blobs, and the chain still verifies from the
 * signed checkpoint it leaves; a forged checkpoint is detected.
 */

const DAY = 24 * 3600 * 1000;
const old = new Date(Date.now() - 40 * DAY);

beforeAll(async () => {
  await useFreshDatabase();
  await db().workspace.create({ data: { id: "ws_r", root: "/r", hostId: "h" } });
  await db().session.create({ data: { id: "ses_r", workspaceId: "ws_r", externalId: "r", door: "http" } });
  const call = (id: string, status: string, at: Date) =>
    db().toolCall.create({
      data: { id, sessionId: "ses_r", workspaceId: "ws_r", door: "http", tool: "write_file", argsJson: "{}", status, hostId: "h", createdAt: at, finishedAt: status === "pending" ? null : at },
    });
  await call("call_old_done", "succeeded", old);
  await call("call_old_pending", "pending", old);
  await call("call_new_done", "succeeded", new Date());
  for (let i = 0; i < 10; i++) await appendEvent({ type: "test.old", actor: "system", data: { i } });
  await db().event.updateMany({ data: { createdAt: old } }); // the first ten are old
  for (let i = 0; i < 5; i++) await appendEvent({ type: "test.new", actor: "system", data: { i } });
  const oldSha = await putBlob(Buffer.from("old bytes"));
  const keptSha = await putBlob(Buffer.from("kept bytes"));
  await db().blob.updateMany({ data: { createdAt: old } });
  await db().backup.create({ data: { id: "bak_old", workspaceId: "ws_r", path: "a", blobSha: oldSha, size: 9, mode: 420, callId: "call_old_done", createdAt: old } });
  await db().backup.create({ data: { id: "bak_new", workspaceId: "ws_r", path: "a", blobSha: keptSha, size: 10, mode: 420, callId: "call_new_done" } });
});

describe("retention", () => {
  it("prunes what is older than the cutoff, keeps pending calls, and leaves a verifiable chain", async () => {
    const result = await pruneBefore(new Date(Date.now() - 30 * DAY));
    expect(result).toMatchObject({ prunedEvents: 10, prunedCalls: 1, prunedBackups: 1, prunedBlobs: 1, checkpointSeq: 10 });
    const ids = (await db().toolCall.findMany({ select: { id: true } })).map((c) => c.id).sort();
    expect(ids).toEqual(["call_new_done", "call_old_pending"]);
    expect(await db().blob.count()).toBe(1);
    expect(await verifyChain()).toEqual({ ok: true, checked: 5, from_checkpoint: 10, broken: null, head: { seq: 15, hash: expect.any(String) } });
  });

  it("keeps the chain linear across a prune: new events link to the kept ones", async () => {
    await appendEvent({ type: "test.after", actor: "system" });
    expect((await verifyChain()).ok).toBe(true);
  });

  it("detects a forged checkpoint", async () => {
    await db().checkpoint.updateMany({ data: { prunedCalls: 0 } });
    expect((await verifyChain()).broken).toEqual({ seq: 10, reason: "checkpoint_signature" });
  });
});
