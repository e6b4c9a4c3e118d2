import fs from "node:fs";
import path from "node:path";

/**
 * Linux control groups for `run_command`, part of its containment: each command runs in a cgroup
 * of its own, so the kernel caps the memory and the number of tasks of the whole command (every
 * process it starts, however it forks), counts what it refused, and lets the gateway kill all of
 * it at once, including processes that left the process group (`setsid`, daemons).
 *
 * Why cgroups: RLIMIT_NPROC counts per user and does not apply to root (sessions and CI run as
 * root), and RLIMIT_AS counts reservations rather than use (lib/exec/limits.ts); `pids.max` and
 * `memory.max` count what the command really uses, for any user.
 *
 * Where: under this process's own cgroup, one directory `agent-reach-<gateway pid>/` per controller
 * hierarchy and one child `cmd-<n>/` per command, removed when the command ends. The gateway's
 * directory exists only while a command runs, so nothing is left in a cgroup that belongs to
 * someone else (a service manager's, a sandbox's) when the gateway is idle or gone; what a
 * gateway killed mid-command leaves is removed by the next gateway that probes. Both layouts are handled:
 * cgroup v2 (one unified hierarchy; cgroup(7), Documentation/admin-guide/cgroup-v2.rst) and v1
 * (a hierarchy per controller, Documentation/admin-guide/cgroup-v1/), and hybrids of the two.
 *
 * When it is not available (no write access to /sys/fs/cgroup, a read-only mount, or cgroup v2
 * where the gateway's own cgroup holds processes and cannot delegate controllers: the "no
 * internal processes" rule), `probeCgroups` says why, and lib/exec/run-command.ts falls back to
 * rlimits: RLIMIT_NPROC for processes when not root, nothing for memory. Running the gateway in a
 * delegated cgroup (systemd `Delegate=yes` with `DelegateSubgroup=`) makes v2 available.
 */

/** The controllers used. */
export type ControllerName = "pids" | "memory";

/** Where one controller's commands live. */
export interface ControllerHome {
  controller: ControllerName;
  version: 1 | 2;
  /** This gateway's `agent-reach-<pid>` directory under this process's own cgroup in that hierarchy. */
  parent: string;
}

/** What this machine allows (see `probeCgroups`). */
export interface CgroupSupport {
  pids: ControllerHome | null;
  memory: ControllerHome | null;
  /** Why a controller is not available, in words for an operator. */
  problems: string[];
}

/** The kill switch and counters of one command's cgroup directories. */
interface CommandDir {
  dir: string;
  version: 1 | 2;
  controllers: ControllerName[];
}

/** A gateway's directory: `agent-reach-<gateway pid>`. */
const PARENT_RE = /^agent-reach-(\d+)$/;
let sequence = 0;
/** Commands of this gateway whose cgroup exists; its `agent-reach-<pid>` directories go when it drops to 0. */
let live = 0;

/**
 * Finds, prepares and checks the cgroup directories this process can use: for each controller,
 * the v2 hierarchy when the controller is bound there, else its v1 hierarchy. A controller is
 * available when `agent-reach-<pid>/` can be created under this process's cgroup, the controller
 * is enabled for it (v2: `cgroup.subtree_control`), and a trial child accepts a limit. Also
 * removes the directories of gateways that are gone.
 * @param procRoot where /proc is (tests)
 * @returns the homes found and, for each controller that is not available, the reason.
 *   Never throws.
 */
export function probeCgroups(procRoot = "/proc"): CgroupSupport {
  const problems: string[] = [];
  let mounts: Mount[];
  let memberships: Membership[];
  try {
    mounts = parseMountinfo(fs.readFileSync(path.join(procRoot, "self/mountinfo"), "utf8"));
    memberships = parseProcCgroup(fs.readFileSync(path.join(procRoot, "self/cgroup"), "utf8"));
  } catch (e) {
    return { pids: null, memory: null, problems: [`cgroups unavailable: ${(e as Error).message}`] };
  }
  const home = (controller: ControllerName): ControllerHome | null => {
    const own = ownCgroupDir(controller, mounts, memberships);
    if (!own) {
      problems.push(`${controller}: no cgroup hierarchy has this controller`);
      return null;
    }
    try {
      sweepStale(own.dir, own.version);
      if (own.version === 2) enableController(own.dir, controller);
      const prepared: ControllerHome = { controller, version: own.version, parent: path.join(own.dir, `agent-reach-${process.pid}`) };
      trial(prepared);
      return prepared;
    } catch (e) {
      problems.push(`${controller}: ${own.dir} (cgroup v${own.version}) is not usable: ${(e as NodeJS.ErrnoException).code ?? ""} ${(e as Error).message}`.trim());
      return null;
    }
  };
  return { pids: home("pids"), memory: home("memory"), problems };
}

/**
 * One command's cgroup(s): created before the command starts, joined by the command's first
 * process (it writes its pid to each `cgroup.procs`), removed after it ends.
 */
export class CommandCgroup {
  private removed = false;

  private constructor(private readonly dirs: CommandDir[]) {}

  /**
   * Creates the command's directories and writes its limits (null = "max", no limit). v2 memory
   * also gets `memory.swap.max` 0 (the limit cannot be dodged into swap) and `memory.oom.group`
   * (an OOM kill takes the whole command, as a half-killed build helps nobody).
   * @returns null when `support` has no controller
   * @throws Error (with `code`) when the kernel refuses a directory or a limit
   */
  static create(support: CgroupSupport, limits: { memoryBytes: number | null; processes: number | null }): CommandCgroup | null {
    const homes = [support.pids, support.memory].filter((h): h is ControllerHome => h !== null);
    if (homes.length === 0) return null;
    const name = `cmd-${++sequence}`;
    const byParent = new Map<string, CommandDir>();
    for (const h of homes) {
      const existing = byParent.get(h.parent);
      if (existing) existing.controllers.push(h.controller);
      else byParent.set(h.parent, { dir: path.join(h.parent, name), version: h.version, controllers: [h.controller] });
    }
    const group = new CommandCgroup([...byParent.values()]);
    live++;
    try {
      for (const h of homes) ensureParent(h);
      for (const d of group.dirs) {
        fs.mkdirSync(d.dir);
        for (const c of d.controllers) writeLimit(d, c, c === "pids" ? limits.processes : limits.memoryBytes);
      }
    } catch (e) {
      group.removeNow();
      throw e;
    }
    return group;
  }

  /** The `cgroup.procs` files the command's first process writes its pid to. */
  get procsFiles(): string[] {
    return this.dirs.map((d) => path.join(d.dir, "cgroup.procs"));
  }

  /**
   * The kernel's counters: forks refused by `pids.max` and processes killed by the memory
   * limit's OOM killer (v2 `pids.events`/`memory.events`, v1 `pids.events`/`memory.oom_control`).
   */
  events(): { pidsRefused: number; oomKills: number } {
    let pidsRefused = 0;
    let oomKills = 0;
    for (const d of this.dirs) {
      if (d.controllers.includes("pids")) pidsRefused += counter(path.join(d.dir, "pids.events"), "max");
      if (d.controllers.includes("memory")) oomKills += counter(path.join(d.dir, d.version === 2 ? "memory.events" : "memory.oom_control"), "oom_kill");
    }
    return { pidsRefused, oomKills };
  }

  /**
   * Sends `signal` to every process of the command. SIGKILL uses v2's `cgroup.kill` where the
   * kernel has it; otherwise (v1, other signals) each pid listed in `cgroup.procs` is signalled,
   * repeated for SIGKILL until none is left (bounded: forks are capped by `pids.max`).
   * Synchronous, so it also works in a process `exit` handler.
   */
  signal(signal: NodeJS.Signals): void {
    for (const d of this.dirs) signalDir(d, signal);
  }

  /** True while any process of the command is alive. */
  isPopulated(): boolean {
    return this.dirs.some((d) => members(d.dir).length > 0);
  }

  /**
   * Kills what is left and removes the directories, waiting (bounded, ~2 s) for killed processes
   * to be gone. A directory that still cannot be removed (a process stuck in the kernel) is left
   * for `releaseCgroups` at exit, or the next gateway's probe.
   */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 80 && !this.removeNow(); attempt++) {
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * One removal attempt (kill, rmdir); the last command of this gateway to go also removes the
   * gateway's directories. @returns true when every directory of the command is gone.
   */
  private removeNow(): boolean {
    const done = this.dirs.map(removeDir).every(Boolean);
    if (done && !this.removed) {
      this.removed = true;
      if (--live === 0) for (const d of this.dirs) rmdirQuietly(path.dirname(d.dir));
    }
    return done;
  }
}

/** Creates this gateway's directory for `home` when missing (v2: with the controller enabled for its children). */
function ensureParent(home: ControllerHome): void {
  if (!fs.existsSync(home.parent)) fs.mkdirSync(home.parent, { recursive: true });
  if (home.version === 2) enableController(home.parent, home.controller);
}

function rmdirQuietly(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // ENOENT: gone already; ENOTEMPTY/EBUSY: a child that could not be removed, swept later
  }
}

/** Kills what is in `d` and removes it. @returns true when the directory is gone. */
function removeDir(d: CommandDir): boolean {
  if (!fs.existsSync(d.dir)) return true;
  signalDir(d, "SIGKILL");
  try {
    fs.rmdirSync(d.dir);
    return true;
  } catch {
    return false;
  }
}

/** See `CommandCgroup.signal`. */
function signalDir(d: CommandDir, signal: NodeJS.Signals): void {
  const killFile = path.join(d.dir, "cgroup.kill");
  if (signal === "SIGKILL" && d.version === 2 && fs.existsSync(killFile)) {
    try {
      fs.writeFileSync(killFile, "1");
      return;
    } catch {
      // fall back to one pid at a time
    }
  }
  for (let round = 0; round < (signal === "SIGKILL" ? 200 : 1); round++) {
    const pids = members(d.dir);
    if (pids.length === 0) return;
    for (const pid of pids) signalPid(pid, signal);
  }
}

// ---- probing -------------------------------------------------------------------------------

interface Mount {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

interface Membership {
  /** Controller names of a v1 hierarchy; empty for the v2 line (`0::/path`). */
  controllers: string[];
  path: string;
}

/** Parses /proc/self/mountinfo (proc(5)) into the cgroup mounts. */
export function parseMountinfo(text: string): Mount[] {
  const out: Mount[] = [];
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const f = left.split(" ");
    const [fsType, , superOpts = ""] = right.split(" ");
    if (fsType !== "cgroup" && fsType !== "cgroup2") continue;
    out.push({ root: unescapeMount(f[3]), mountPoint: unescapeMount(f[4]), fsType, superOptions: superOpts.split(",") });
  }
  return out;
}

/** Parses /proc/self/cgroup (cgroups(7)): `hierarchy-id:controller-list:path` per line. */
export function parseProcCgroup(text: string): Membership[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const first = line.indexOf(":");
      const second = line.indexOf(":", first + 1);
      const list = line.slice(first + 1, second);
      return { controllers: list ? list.split(",") : [], path: line.slice(second + 1) };
    });
}

/** This process's own cgroup directory for `controller`: v2 when bound there, else v1. */
function ownCgroupDir(controller: ControllerName, mounts: Mount[], memberships: Membership[]): { dir: string; version: 1 | 2 } | null {
  const v2 = mounts.find((m) => m.fsType === "cgroup2");
  const v2Line = memberships.find((m) => m.controllers.length === 0);
  if (v2 && v2Line) {
    const dir = dirOf(v2, v2Line.path);
    if (readWords(path.join(dir, "cgroup.controllers")).includes(controller)) return { dir, version: 2 };
  }
  const v1 = mounts.find((m) => m.fsType === "cgroup" && m.superOptions.includes(controller));
  const v1Line = memberships.find((m) => m.controllers.includes(controller));
  if (v1 && v1Line) return { dir: dirOf(v1, v1Line.path), version: 1 };
  return null;
}

/** The directory of cgroup `cgroupPath` in a hierarchy mounted at `mount` (whose root may be a sub-path). */
function dirOf(mount: Mount, cgroupPath: string): string {
  const rel = mount.root !== "/" && cgroupPath.startsWith(mount.root) ? cgroupPath.slice(mount.root.length) : cgroupPath;
  const dir = path.join(mount.mountPoint, rel);
  return dir.length > 1 ? dir.replace(/\/+$/, "") : dir;
}

function enableController(dir: string, controller: ControllerName): void {
  const file = path.join(dir, "cgroup.subtree_control");
  if (readWords(file).includes(controller)) return;
  fs.writeFileSync(file, `+${controller}`);
}

/** Creates a child, writes a limit, removes it: proves the controller works before a command relies on it. */
function trial(home: ControllerHome): void {
  ensureParent(home);
  const dir = path.join(home.parent, `probe-${++sequence}`);
  fs.mkdirSync(dir);
  try {
    writeLimit({ dir, version: home.version, controllers: [home.controller] }, home.controller, home.controller === "pids" ? 64 : 64 * 1024 * 1024);
  } finally {
    fs.rmdirSync(dir);
    if (live === 0) rmdirQuietly(home.parent);
  }
}

/** Removes the `agent-reach-<pid>` directories (and their children) of gateways that are gone. */
function sweepStale(own: string, version: 1 | 2): void {
  for (const name of fs.readdirSync(own)) {
    const m = PARENT_RE.exec(name);
    if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) removeTree({ dir: path.join(own, name), version, controllers: [] });
  }
}

/** Removes a gateway's directory: every child (killing what is in it), then the directory. */
function removeTree(parent: CommandDir): boolean {
  let done = true;
  for (const entry of fs.readdirSync(parent.dir, { withFileTypes: true })) {
    if (entry.isDirectory()) done = removeDir({ ...parent, dir: path.join(parent.dir, entry.name) }) && done;
  }
  return done && removeDir(parent);
}

/**
 * Removes this gateway's cgroup directories, killing any command still in them. Synchronous,
 * for the process `exit` handler; best effort (what cannot be removed now is swept by the next
 * gateway's probe).
 */
export function releaseCgroups(support: CgroupSupport): void {
  for (const home of [support.pids, support.memory]) {
    if (home && fs.existsSync(home.parent)) removeTree({ dir: home.parent, version: home.version, controllers: [] });
  }
}

function writeLimit(d: CommandDir, controller: ControllerName, value: number | null): void {
  const w = (file: string, v: string) => fs.writeFileSync(path.join(d.dir, file), v);
  const exists = (file: string) => fs.existsSync(path.join(d.dir, file));
  if (controller === "pids") {
    w("pids.max", value === null ? "max" : String(value));
    return;
  }
  if (d.version === 2) {
    w("memory.max", value === null ? "max" : String(value));
    if (value !== null && exists("memory.swap.max")) w("memory.swap.max", "0");
    if (exists("memory.oom.group")) w("memory.oom.group", "1");
    return;
  }
  w("memory.limit_in_bytes", value === null ? "-1" : String(value));
  if (exists("memory.memsw.limit_in_bytes")) w("memory.memsw.limit_in_bytes", value === null ? "-1" : String(value));
}

// ---- small helpers -------------------------------------------------------------------------

function members(dir: string): number[] {
  try {
    return fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The number after `key` in a flat-keyed cgroup file (`max 3`, `oom_kill 1`), 0 when absent. */
function counter(file: string, key: string): number {
  try {
    const line = fs.readFileSync(file, "utf8").split("\n").find((l) => l.startsWith(`${key} `));
    return line ? Number(line.slice(key.length + 1)) || 0 : 0;
  } catch {
    return 0;
  }
}

function readWords(file: string): string[] {
  try {
    return fs.readFileSync(file, "utf8").split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: gone already
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`). */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}
