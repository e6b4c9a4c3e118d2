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
    expect(result).toEqual({ ok: true, checked: 40, from_checkpoint: 0, broken: null });
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
