import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * One server per data directory and host id. A server starting marks the calls its host id left
 * running as interrupted and removes the temp files of its host id's unfinished writes; a second
 * server started by mistake on the same data directory (a second terminal, a forgotten
 * background job) would do that to the first one's calls while they run. So a server holds a
 * lock file, `<dataDir>/locks/<host id>.lock`, for as long as it runs, and a second one refuses to
 * start, naming the first. Instances of a PostgreSQL deployment have host ids of their own and do
 * not collide.
 *
 * The lock is a file created exclusively (O_EXCL) holding the owner's pid, its start time (from
 * /proc, so a reused pid is not taken for the owner), address and start date. A lock whose owner
 * is gone (killed, crashed) is stale and taken over.
 */

/** What a lock file records about the server holding it. */
export interface LockOwner {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or null off Linux. */
  startTicks: string | null;
  address: string;
  startedAt: string;
}

/** A second server on the same data directory and host id. */
export class InstanceLockError extends Error {
  constructor(
    message: string,
    readonly owner: LockOwner,
  ) {
    super(message);
    this.name = "InstanceLockError";
  }
}

/** Fields 3… of /proc/<pid>/stat (state first), or null (no such process, or not Linux). */
function procStat(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

function startTicks(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

/** Whether the process that wrote `owner` still runs (the same process, not a reuse of its pid). */
function alive(owner: LockOwner): boolean {
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to another user; it is alive.
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const stat = procStat(owner.pid);
  // A zombie (killed, not yet reaped by its parent) holds nothing any more.
  if (stat?.[0] === "Z" || stat?.[0] === "X") return false;
  const ticks = stat?.[19] ?? null;
  return owner.startTicks === null || ticks === null || ticks === owner.startTicks;
}

/** The lock file of `hostId` under `dataDir` (the host id hashed: it may hold any character). */
export function lockPath(dataDir: string, hostId: string): string {
  const safe = hostId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 60);
  const digest = crypto.createHash("sha256").update(hostId).digest("hex").slice(0, 12);
  return path.join(dataDir, "locks", `${safe}-${digest}.lock`);
}

/**
 * Takes the lock of `hostId` in `dataDir` for this process, and releases it when the process exits.
 * @param address where this server listens (shown to a second server)
 * @param shared for a lock on something other than the data directory (a SQLite file): what it
 *   is and what to do, for the message
 * @returns a function that releases the lock now
 * @throws InstanceLockError when a live server holds it (the message names its pid, address and
 *   start date, and what to do)
 */
export function acquireInstanceLock(dataDir: string, hostId: string, address: string, shared?: { what: string; advice: string }): () => void {
  const file = lockPath(dataDir, hostId);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const me: LockOwner = { pid: process.pid, startTicks: startTicks(process.pid), address, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(me), { flag: "wx", mode: 0o600 });
      const release = () => {
        try {
          const now = JSON.parse(fs.readFileSync(file, "utf8")) as LockOwner;
          if (now.pid === me.pid && now.startTicks === me.startTicks) fs.unlinkSync(file);
        } catch {
          // Gone already, or taken over: nothing to release.
        }
      };
      process.once("exit", release);
      return () => {
        process.off("exit", release);
        release();
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let owner: LockOwner | null = null;
    try {
      owner = JSON.parse(fs.readFileSync(file, "utf8")) as LockOwner;
    } catch {
      // Unreadable or half-written (a crash while writing it): stale.
    }
    if (owner && owner.pid !== process.pid && alive(owner)) {
      throw new InstanceLockError(
        shared
          ? `Another Agent Reach server (pid ${owner.pid}, ${owner.address}, started ${owner.startedAt}) is using ${shared.what}. ${shared.advice}`
          : `Another Agent Reach server (pid ${owner.pid}, ${owner.address}, started ${owner.startedAt}) is using the data directory ${dataDir} ` +
            `with host id "${hostId}". Two servers there would mark each other's running calls interrupted. ${SECOND_SERVER_ADVICE}`,
        owner,
      );
    }
    // Stale (its server is gone): remove it and try again.
    fs.rmSync(file, { force: true });
  }
  throw new Error(`Could not take the server lock ${file}: it keeps reappearing.`);
}

/** The live owner of the lock file `file`, or null (none, gone, or unreadable). */
function liveOwner(file: string): LockOwner | null {
  try {
    const owner = JSON.parse(fs.readFileSync(/*turbopackIgnore: true*/ file, "utf8")) as LockOwner;
    return owner.pid !== process.pid && alive(owner) ? owner : null;
  } catch {
    return null;
  }
}

/**
 * Where the SQLite file of `databaseUrl` keeps the lock of `hostId`, and the file's real path;
 * null for other URLs. Servers with their own host ids may share a file (each marks only its own
 * calls interrupted and runs only its own workspace's approvals); one host id, one server.
 */
function databaseLock(databaseUrl: string, hostId: string): { dir: string; key: string; real: string } | null {
  if (!databaseUrl.startsWith("file:")) return null;
  const file = path.resolve(databaseUrl.slice("file:".length));
  let dir = path.dirname(file);
  try {
    dir = fs.realpathSync.native(/*turbopackIgnore: true*/ dir);
  } catch {
    // Not there yet: migration creates it; the spelling as given is the best there is.
  }
  return { dir, key: `sqlite:${path.basename(file)}:${hostId}`, real: path.join(dir, path.basename(file)) };
}


/** What to do about a server already running on this data directory. */
const SECOND_SERVER_ADVICE =
  "It is running: use it at its address as it is, or stop it first to start this one. (A separate AGENT_REACH_DATA_DIR " +
  "starts a separate gateway, with its own database, tokens and audit log, and it does not share this one's approvals; " +
  "for a second instance of the same gateway on PostgreSQL, give it its own AGENT_REACH_HOST_ID.)";
const SQLITE_ADVICE =
  "Two servers with one host id on one SQLite file would mark each other's running calls interrupted and run each other's approvals. Stop it first, or give this one its own AGENT_REACH_HOST_ID.";

/**
 * Refuses early, before anything is created or registered (`npm start` calls it first), when a
 * live server holds the data directory's lock for `hostId` or the SQLite file's lock; the server
 * process takes the locks themselves when it starts.
 * @throws InstanceLockError naming the server that holds one
 */
export function assertNoLiveServer(dataDir: string, hostId: string, databaseUrl: string): void {
  const own = liveOwner(lockPath(dataDir, hostId));
  if (own) {
    throw new InstanceLockError(
      `Another Agent Reach server (pid ${own.pid}, ${own.address}, started ${own.startedAt}) is using the data directory ${dataDir} with host id "${hostId}". ` +
        SECOND_SERVER_ADVICE,
      own,
    );
  }
  const db = databaseLock(databaseUrl, hostId);
  const other = db ? liveOwner(lockPath(db.dir, db.key)) : null;
  if (db && other) {
    throw new InstanceLockError(`Another Agent Reach server (pid ${other.pid}, ${other.address}, started ${other.startedAt}) is using the SQLite database ${db.real} with host id "${hostId}". ${SQLITE_ADVICE}`, other);
  }
}

/**
 * The lock of host id `hostId` on a SQLite database file, whichever data directory a server has:
 * two servers with one host id on one file would mark each other's running calls interrupted.
 * Two spellings of the same file (a symlinked directory) take the same lock.
 * @returns a function that releases the lock, or null when `databaseUrl` is not a SQLite file
 * @throws InstanceLockError when a live server with this host id uses the file
 */
export function acquireDatabaseLock(databaseUrl: string, hostId: string, address: string): (() => void) | null {
  const db = databaseLock(databaseUrl, hostId);
  if (!db) return null;
  return acquireInstanceLock(db.dir, db.key, address, { what: `the SQLite database ${db.real} with host id "${hostId}"`, advice: SQLITE_ADVICE });
}
