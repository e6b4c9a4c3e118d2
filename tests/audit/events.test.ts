import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { appendEvent, verifyChain } from "@/lib/audit/events";

let file: string;

beforeAll(() => {
  ({ file } = useFreshDatabase());
});

describe("hash-chained events", () => {
  it("stays linear under concurrent appends and verifies", async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => appendEvent({ type: "test.event", actor: "system", data: { i } })));
    const result = await verifyChain();
    expect(result).toEqual({ ok: true, checked: 40, broken: null });
  });

  it.each([
    ["an edited row", "UPDATE Event SET dataJson = '{\"i\":999}' WHERE seq = 10", 10, "hash_mismatch"],
    ["a deleted row", "DELETE FROM Event WHERE seq = 20", 21, "seq_gap"],
  ])("reports %s as the first broken link", async (_label, sql, seq, reason) => {
    const conn = new Database(file);
    const before = conn.prepare("SELECT * FROM Event").all();
    conn.exec(sql);
    const result = await verifyChain();
    expect(result.ok).toBe(false);
    expect(result.broken).toEqual({ seq, reason });
    // put the chain back for the next case
    conn.exec("DELETE FROM Event");
    const insert = conn.prepare("INSERT INTO Event (seq, callId, type, actor, dataJson, createdAt, prevHash, hash) VALUES (@seq, @callId, @type, @actor, @dataJson, @createdAt, @prevHash, @hash)");
    for (const row of before) insert.run(row);
    conn.close();
    expect((await verifyChain()).ok).toBe(true);
  });
});
