import { describe, expect, test } from "vitest";
import { lockedPathCount, withPathLock } from "@/lib/workspace/path-lock";

const tick = () => new Promise((r) => setImmediate(r));

describe("withPathLock (C14)", () => {
  test("holders of one key run one at a time, in arrival order", async () => {
    const events: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const run = (id: number) =>
      withPathLock("/ws/a.txt", async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        events.push(`start ${id}`);
        await tick();
        await tick();
        events.push(`end ${id}`);
        inside--;
        return id;
      });
    const results = await Promise.all([run(1), run(2), run(3)]);
    expect(results).toEqual([1, 2, 3]);
    expect(maxInside).toBe(1);
    expect(events).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(lockedPathCount()).toBe(0);
  });

  test("different keys do not wait for each other", async () => {
    const events: string[] = [];
    let releaseA!: () => void;
    const a = withPathLock("/ws/a", () => new Promise<void>((r) => (releaseA = r)));
    await withPathLock("/ws/b", async () => {
      events.push("b ran while a is held");
    });
    releaseA();
    await a;
    expect(events).toEqual(["b ran while a is held"]);
  });

  test("a throwing holder releases the lock and the error reaches its caller", async () => {
    const first = withPathLock("/ws/x", async () => {
      throw new Error("boom");
    });
    const second = withPathLock("/ws/x", async () => "ran");
    await expect(first).rejects.toThrow("boom");
    await expect(second).resolves.toBe("ran");
    expect(lockedPathCount()).toBe(0);
  });

  test("no entry leaks after many keys", async () => {
    await Promise.all(Array.from({ length: 500 }, (_, i) => withPathLock(`/ws/f${i % 50}`, async () => tick())));
    expect(lockedPathCount()).toBe(0);
  });
});
