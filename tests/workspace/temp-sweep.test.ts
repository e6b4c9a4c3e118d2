import fs from "node:fs/promises";
import path from "node:path";
import { describe, expect } from "vitest";
import { atomicWriteFile } from "@/lib/workspace/atomic-write";
import { sweepOrphanedTemps, TEMP_NAME_PATTERN } from "@/lib/workspace/temp-sweep";
import type { Fixture } from "@/tests/helpers/fixture";
import { workspaceTest as test } from "@/tests/helpers/tool-context";

const TEMP = ".0123456789abcdef.agent-reach.tmp";
const HOUR_AGO = new Date(Date.now() - 3_600_000);
const exists = (p: string) => fs.lstat(p).then(() => true, () => false);

/** Puts a file and sets its mtime (default an hour ago, older than the cut-off). */
async function putAged(f: Fixture, rel: string, mtime = HOUR_AGO): Promise<void> {
  await f.put(rel, "partial bytes");
  await fs.utimes(f.at(rel), mtime, mtime);
}

describe("TEMP_NAME_PATTERN", () => {
  test("matches the temp names atomicWriteFile really uses", async ({ f }) => {
    let seen: string[] = [];
    await atomicWriteFile(f.at("target.txt"), Buffer.from("new\n"), {
      beforeCommit: async () => {
        seen = (await fs.readdir(f.ws)).filter((n) => n !== "target.txt" && n.includes("agent-reach"));
      },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(TEMP_NAME_PATTERN);
  });
});

describe("sweepOrphanedTemps", () => {
  test.for([
    ["a temp file at the root", TEMP, true],
    ["a temp file in a nested directory", `a/b/c/${TEMP}`, true],
    ["a temp file in a dot directory", `.git/${TEMP}`, true],
    ["upper-case hex (not our name)", ".0123456789ABCDEF.agent-reach.tmp", false],
    ["15 hex digits", ".0123456789abcde.agent-reach.tmp", false],
    ["17 hex digits", ".0123456789abcdef0.agent-reach.tmp", false],
    ["no leading dot", "0123456789abcdef.agent-reach.tmp", false],
    ["a suffix after the name", `${TEMP}.bak`, false],
    ["a prefix before the name", `x${TEMP}`, false],
    ["another program's temp file", "notes.txt.0123456789abcdef0123456789abcdef.tmp", false],
    ["a plain .tmp file", "build.tmp", false],
  ] as const)("%s: removed %s", async ([, rel, removed], { f }) => {
    await putAged(f, rel);
    const result = await sweepOrphanedTemps(f.ws, { before: new Date() });
    expect(await exists(f.at(rel))).toBe(!removed);
    expect(result.removed).toEqual(removed ? [rel] : []);
  });

  test("keeps a temp file modified at or after the cut-off (a write in flight)", async ({ f }) => {
    const cutoff = new Date(Date.now() - 60_000);
    await putAged(f, TEMP, new Date());
    const result = await sweepOrphanedTemps(f.ws, { before: cutoff });
    expect(await exists(f.at(TEMP))).toBe(true);
    expect(result).toMatchObject({ removed: [], keptRecent: 1 });
  });

  test("never removes a directory, and never follows or removes a symlink with the temp name", async ({ f }) => {
    await fs.mkdir(f.at(`dir/${TEMP}`), { recursive: true });
    const outsideTemp = path.join(f.root, "proj-out", TEMP);
    await fs.writeFile(outsideTemp, "not ours to judge");
    await fs.utimes(outsideTemp, HOUR_AGO, HOUR_AGO);
    await fs.symlink(outsideTemp, f.at(TEMP));
    await fs.symlink(path.join(f.root, "proj-out"), f.at("linked-dir"));
    const result = await sweepOrphanedTemps(f.ws, { before: new Date() });
    expect(await exists(f.at(`dir/${TEMP}`))).toBe(true);
    expect(await exists(f.at(TEMP))).toBe(true);
    expect(await exists(outsideTemp)).toBe(true);
    expect(result.removed).toEqual([]);
  });

  test("stops after maxEntries and says so", async ({ f }) => {
    for (const name of ["a", "b", "c", "d"]) await putAged(f, `${name}.txt`);
    const result = await sweepOrphanedTemps(f.ws, { before: new Date(), maxEntries: 2 });
    expect(result).toMatchObject({ visited: 2, truncated: true });
  });
});
