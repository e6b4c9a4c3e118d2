import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { acquireDatabaseLock, acquireInstanceLock, assertNoLiveServer, InstanceLockError, lockPath, type LockOwner } from "@/lib/runtime/instance-lock";

/**
 * The data directory's server lock: a live server's lock refuses a second one (naming it), a lock
 * left by a server that is gone (dead pid, reused pid, half-written file) is taken over, and
 * another host id has a lock of its own.
 */

const dirs: string[] = [];
const releases: Array<() => void> = [];
afterEach(() => {
  releases.splice(0).forEach((r) => r());
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "ar-lock-"));
  dirs.push(d);
  return d;
}

function ticksOf(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}

function plant(dir: string, hostId: string, owner: Partial<LockOwner>): void {
  const file = lockPath(dir, hostId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ pid: 1, startTicks: null, address: "http://127.0.0.1:3000", startedAt: "2026-12-01T00:00:00.000Z", ...owner }));
}

describe("instance lock", () => {
  it("a live server's lock refuses a second server, naming the first and what to do", async () => {
    const dir = dataDir();
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      await new Promise((r) => other.once("spawn", r));
      plant(dir, "host-a", { pid: other.pid!, startTicks: ticksOf(other.pid!), address: "http://127.0.0.1:4111" });
      let error: unknown;
      try {
        acquireInstanceLock(dir, "host-a", "http://127.0.0.1:4222");
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(InstanceLockError);
      expect((error as Error).message).toContain(`pid ${other.pid}, http://127.0.0.1:4111`);
      expect((error as Error).message).toContain("AGENT_REACH_DATA_DIR");
      // Another host id (a second instance on PostgreSQL) has its own lock.
      releases.push(acquireInstanceLock(dir, "host-b", "http://127.0.0.1:4333"));
    } finally {
      other.kill("SIGKILL");
    }
  });

  it.each([
    ["its process is gone", () => ({ pid: 2 ** 22 + 12345, startTicks: "1" })],
    ["its pid now belongs to another process (a different start time)", () => ({ pid: process.ppid, startTicks: "1" })],
  ])("a lock is taken over when %s", (_, owner) => {
    const dir = dataDir();
    plant(dir, "host-a", owner());
    const release = acquireInstanceLock(dir, "host-a", "http://127.0.0.1:4222");
    const held = JSON.parse(fs.readFileSync(lockPath(dir, "host-a"), "utf8")) as LockOwner;
    expect([held.pid, held.address]).toEqual([process.pid, "http://127.0.0.1:4222"]);
    release();
    expect(fs.existsSync(lockPath(dir, "host-a"))).toBe(false);
  });

  it("a half-written lock file is taken over; the lock is ours until released", () => {
    const dir = dataDir();
    fs.mkdirSync(path.dirname(lockPath(dir, "h")), { recursive: true });
    fs.writeFileSync(lockPath(dir, "h"), '{"pid": 12');
    const release = acquireInstanceLock(dir, "h", "http://127.0.0.1:1");
    // The file names this process and its start time: another live process is refused by it.
    const held = JSON.parse(fs.readFileSync(lockPath(dir, "h"), "utf8")) as LockOwner;
    expect(held).toMatchObject({ pid: process.pid, startTicks: ticksOf(process.pid) });
    release();
  });

  it("a SQLite file has one lock per host id, whatever the data directory or spelling of its path", async () => {
    const dir = dataDir();
    fs.mkdirSync(path.join(dir, "real"));
    fs.symlinkSync(path.join(dir, "real"), path.join(dir, "link"));
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      await new Promise((r) => other.once("spawn", r));
      plant(path.join(dir, "real"), "sqlite:agent-reach.db:h1", { pid: other.pid!, startTicks: ticksOf(other.pid!), address: "http://127.0.0.1:4111" });
      for (const url of [`file:${dir}/real/agent-reach.db`, `file:${dir}/link/agent-reach.db`, `file:${dir}/real/../link/agent-reach.db`]) {
        expect(() => acquireDatabaseLock(url, "h1", "http://127.0.0.1:4222"), url).toThrow(/is using the SQLite database .*real\/agent-reach\.db with host id "h1"/);
      }
      // Another host id on the same file (its own calls, its own workspace), and another file, are free.
      releases.push(acquireDatabaseLock(`file:${dir}/link/agent-reach.db`, "h2", "http://127.0.0.1:4222")!);
      releases.push(acquireDatabaseLock(`file:${dir}/real/other.db`, "h1", "http://127.0.0.1:4222")!);
      expect(acquireDatabaseLock("postgresql://u@127.0.0.1/db", "h1", "http://127.0.0.1:4222")).toBeNull();
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("the early check (npm start, before anything is made) refuses on either lock and takes none", async () => {
    const dir = dataDir();
    expect(() => assertNoLiveServer(dir, "h", `file:${dir}/agent-reach.db`)).not.toThrow();
    expect(fs.existsSync(path.join(dir, "locks"))).toBe(false);
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      await new Promise((r) => other.once("spawn", r));
      plant(fs.realpathSync(dir), "sqlite:agent-reach.db:h", { pid: other.pid!, startTicks: ticksOf(other.pid!) });
      expect(() => assertNoLiveServer(dir, "h", `file:${dir}/agent-reach.db`)).toThrow(/SQLite database/);
      expect(() => assertNoLiveServer(dir, "h", "postgresql://u@127.0.0.1/db")).not.toThrow();
      plant(dir, "h", { pid: other.pid!, startTicks: ticksOf(other.pid!) });
      expect(() => assertNoLiveServer(dir, "h", "postgresql://u@127.0.0.1/db")).toThrow(/data directory .* host id "h"/);
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("host ids with any character get distinct, safe file names", () => {
    const dir = dataDir();
    const a = lockPath(dir, "../../etc/x");
    const b = lockPath(dir, "..-..-etc-x");
    expect(path.dirname(a)).toBe(path.join(dir, "locks"));
    expect(a).not.toBe(b);
  });
});
