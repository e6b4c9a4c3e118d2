import path from "node:path";
import { Worker } from "node:worker_threads";

/**
 * WAL checkpoints of a SQLite database, off the event loop.
 *
 * In WAL mode a commit appends pages to the `-wal` file; a checkpoint copies them back into the
 * database file and syncs it to disk. SQLite runs one automatically on the connection whose commit
 * takes the WAL past `wal_autocheckpoint` pages, inside that commit: on the gateway that is the
 * event loop, which then waits for the copy and two fsyncs (a profile of audited reads put it at
 * up to a fifth of a call's time). Here a worker thread with its own connection runs a PASSIVE
 * checkpoint (it never blocks readers or the writer) every `INTERVAL_MS`; the gateway's
 * connections keep an automatic checkpoint only as a backstop at `BACKSTOP_PAGES`, should the
 * worker fall behind or stop.
 *
 * Durability is unchanged: a commit is in the WAL before it returns, checkpointed or not.
 */

/** How often the worker checkpoints (ms). */
const INTERVAL_MS = 200;

/** The automatic checkpoint threshold the gateway's own connections keep (pages of 4 KiB: 40 MiB). */
export const BACKSTOP_PAGES = 10_000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { createRequire } = require("node:module");
const Database = createRequire(workerData.requireFrom)("better-sqlite3");
const conn = new Database(workerData.file, { timeout: 1000 });
const timer = setInterval(() => {
  try {
    conn.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or briefly unavailable: the next tick tries again; the backstop bounds the WAL.
  }
}, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m === "stop") {
    clearInterval(timer);
    conn.close();
    process.exit(0);
  }
});
`;

const globalForCheckpointer = globalThis as unknown as { agentReachCheckpointers?: Map<string, Worker> };

function workers(): Map<string, Worker> {
  globalForCheckpointer.agentReachCheckpointers ??= new Map();
  return globalForCheckpointer.agentReachCheckpointers;
}

/**
 * Starts the checkpoint worker of the SQLite database at `file` (idempotent per file). It does not
 * keep the process alive. A worker that fails to start or dies is logged and forgotten (the
 * backstop threshold then applies); the next call starts it again.
 */
export function startCheckpointer(file: string): void {
  const key = path.resolve(file);
  if (workers().has(key)) return;
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file: key, intervalMs: INTERVAL_MS, requireFrom: path.join(process.cwd(), "package.json") },
    });
  } catch (err) {
    console.error(`[agent-reach] WAL checkpoint worker did not start: ${(err as Error).message}`);
    return;
  }
  worker.unref();
  worker.on("error", (err) => {
    console.error(`[agent-reach] WAL checkpoint worker failed: ${err.message}`);
    workers().delete(key);
  });
  worker.on("exit", () => workers().delete(key));
  workers().set(key, worker);
}

/** Stops the checkpoint worker of `file`, if one runs (its database is being closed). */
export function stopCheckpointer(file: string): void {
  const key = path.resolve(file);
  const worker = workers().get(key);
  if (!worker) return;
  workers().delete(key);
  worker.postMessage("stop");
}
