import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { takeBuildLock } from "@/scripts/build-if-needed";

/** The build lock of `npm start`: a start stopped by Ctrl-C mid-build must not leave every later start waiting. */
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ar-build-lock-")));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

/** A pid that no process has now (a child that ran and exited). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("takeBuildLock", () => {
  it("takes a lock whose builder is gone at once (Ctrl-C during a build)", async () => {
    const lock = path.join(base, "dead");
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, "pid"), String(deadPid()));
    const t0 = Date.now();
    const release = await takeBuildLock(lock);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(fs.readFileSync(path.join(lock, "pid"), "utf8")).toBe(String(process.pid));
    release();
    expect(fs.existsSync(lock)).toBe(false);
  });

  it("waits while a live builder holds it", async () => {
    const lock = path.join(base, "live");
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, "pid"), String(process.ppid)); // a live process
    const taken = takeBuildLock(lock).then((release) => release);
    const first = await Promise.race([taken.then(() => "taken"), new Promise((r) => setTimeout(() => r("waiting"), 1500))]);
    expect(first).toBe("waiting");
    fs.rmSync(lock, { recursive: true, force: true }); // the live builder finishes
    (await taken)();
  });

  it("takes a lock left without a pid after a few seconds (an older start's lock)", async () => {
    const lock = path.join(base, "nopid");
    fs.mkdirSync(lock);
    const old = new Date(Date.now() - 10_000);
    fs.utimesSync(lock, old, old);
    (await takeBuildLock(lock))();
    expect(fs.existsSync(lock)).toBe(false);
  });
});
