import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { appendEvent, verifyChain } from "@/lib/audit/events";
import { db } from "@/lib/db";

beforeAll(async () => {
  await useFreshDatabase();
});

describe("hash-chained events", () => {
  it("stays linear under concurrent appends and verifies", async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => appendEvent({ type: "test.event", actor: "system", data: { i } })));
    const result = await verifyChain();
    expect(result).toEqual({ ok: true, checked: 40, from_checkpoint: 0, broken: null, head: { seq: 40, hash: expect.any(String) } });
  });

  it.each([
    ["an edited row", `UPDATE "Event" SET "dataJson" = '{"i":999}' WHERE seq = 10`, 10, "hash_mismatch"],
    ["a deleted row", `DELETE FROM "Event" WHERE seq = 20`, 21, "seq_gap"],
    ["a re-linked row", `UPDATE "Event" SET "prevHash" = '${"0".repeat(64)}' WHERE seq = 5`, 5, "prev_hash_mismatch"],
  ])("reports %s as the first broken link", async (_label, sql, seq, reason) => {
    const before = await db().event.findMany({ orderBy: { seq: "asc" } });
    await db().$executeRawUnsafe(sql);
    const result = await verifyChain();
    expect(result.ok).toBe(false);
    expect(result.broken).toEqual({ seq, reason });
    // put the chain back for the next case
    await db().event.deleteMany({});
    await db().event.createMany({ data: before });
    expect((await verifyChain()).ok).toBe(true);
  });
});

describe("the signed head", () => {
  it.each([
    ["the newest event deleted", `DELETE FROM "Event" WHERE seq = (SELECT MAX(seq) FROM "Event")`, "truncated"],
    ["the newest ten events deleted", `DELETE FROM "Event" WHERE seq > (SELECT MAX(seq) - 10 FROM "Event")`, "truncated"],
    ["every event deleted", `DELETE FROM "Event"`, "truncated"],
    ["the head deleted", `DELETE FROM "Setting" WHERE key = 'audit_head'`, "head_missing"],
    ["the head re-signed with a guessed key", forgeHeadSignature, "head_signature"],
    ["the head moved back one event (its old signature kept)", moveHeadBack, "head_signature"],
  ])("reports %s", async (_label, tamper, reason) => {
    const events = await db().event.findMany({ orderBy: { seq: "asc" } });
    const head = await db().setting.findUniqueOrThrow({ where: { key: "audit_head" } });
    if (typeof tamper === "string") await db().$executeRawUnsafe(tamper);
    else await tamper();
    const result = await verifyChain();
    expect(result.ok).toBe(false);
    expect(result.broken?.reason).toBe(reason);
    await db().event.deleteMany({});
    await db().event.createMany({ data: events });
    await db().setting.upsert({ where: { key: "audit_head" }, create: { key: "audit_head", value: head.value }, update: { value: head.value } });
    expect((await verifyChain()).ok).toBe(true);
  });

  it("reports an older, validly signed head put back over a longer chain", async () => {
    // Replaying an old head together with the matching shorter chain is the one rewrite verify
    // cannot see from the database alone (docs/SECURITY.md); replaying it alone is a mismatch.
    const older = (await db().setting.findUniqueOrThrow({ where: { key: "audit_head" } })).value;
    await appendEvent({ type: "test.event", actor: "system", data: { after: true } });
    await db().setting.update({ where: { key: "audit_head" }, data: { value: older } });
    expect((await verifyChain()).broken?.reason).toBe("head_mismatch");
  });

  it("reports events appended without the key after the head", async () => {
    await appendEvent({ type: "test.event", actor: "system" });
    const last = await db().event.findFirstOrThrow({ orderBy: { seq: "desc" } });
    const { eventHashInput } = await import("@/lib/audit/events");
    const { sha256Hex } = await import("@/lib/ids");
    const createdAt = new Date();
    const forged = { seq: last.seq + 1, type: "test.forged", callId: null, actor: "system", dataJson: "{}", createdAt, prevHash: last.hash };
    await db().event.create({ data: { ...forged, hash: sha256Hex(eventHashInput(last.hash, forged)) } });
    expect((await verifyChain()).broken).toEqual({ seq: last.seq, reason: "head_mismatch" });
    await db().event.delete({ where: { seq: forged.seq } });
    expect((await verifyChain()).ok).toBe(true);
  });


  it("keeps reporting a deleted head after new events are appended", async () => {
    await db().setting.deleteMany({ where: { key: "audit_head" } });
    await appendEvent({ type: "test.event", actor: "system", data: { after: "reset" } });
    const result = await verifyChain();
    expect(result.ok).toBe(false);
    expect(result.broken?.reason).toBe("head_reset");
  });
});

async function forgeHeadSignature(): Promise<void> {
  const row = await db().setting.findUniqueOrThrow({ where: { key: "audit_head" } });
  const head = JSON.parse(row.value);
  head.signature = "deadbeef".repeat(8);
  await db().setting.update({ where: { key: "audit_head" }, data: { value: JSON.stringify(head) } });
}

/** Deletes the newest event and rewrites the head to name the one before, without the key. */
async function moveHeadBack(): Promise<void> {
  const [last, prev] = await db().event.findMany({ orderBy: { seq: "desc" }, take: 2 });
  await db().event.delete({ where: { seq: last.seq } });
  const row = await db().setting.findUniqueOrThrow({ where: { key: "audit_head" } });
  const head = JSON.parse(row.value);
  await db().setting.update({ where: { key: "audit_head" }, data: { value: JSON.stringify({ ...head, seq: prev.seq, hash: prev.hash }) } });
}
