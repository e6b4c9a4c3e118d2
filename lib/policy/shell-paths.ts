import fs from "node:fs/promises";
import path from "node:path";
import { isInside } from "@/lib/workspace/fence";

/**
 * Where a path named in a shell command really lands, seen the way the kernel will open it from
 * the command's working directory. Unlike the file tools' fence (lib/workspace/fence.ts), which
 * applies `..` lexically and then opens exactly the path it checked, a shell opens the string as
 * written: `ext/../x` with `ext -> /elsewhere` is `/x`. So `..` is applied physically here, after
 * the symlink before it (C02, C03, C23-10).
 */

/** Symlinks followed for one path before it counts as a loop (Linux MAXSYMLINKS). */
const MAX_SYMLINK_HOPS = 40;

/** Devices every command may use: they are not files (C23-9). */
const HARMLESS_DEVICES = new Set(["/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd/0", "/dev/fd/1", "/dev/fd/2", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom"]);

/** Devices a read never ends on: as an input they only ask (an endless read needs a person's yes). */
export const ENDLESS_DEVICES = new Set(["/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty"]);

/**
 * Paths that name another process's view of the file system or its open files
 * (`/proc/PID/root/…`, `/proc/self/cwd`, `/proc/1/fd/3`, `/proc/PID/map_files/…`, `/dev/fd/5`,
 * also under `task/TID/`). What they lead to depends on the process that opens them, not on the
 * gateway that checks them, so they always count as outside the workspace. `/dev/fd/0-2` (the
 * command's own standard streams) are harmless devices instead.
 */
const PROCESS_LINK = /^\/proc\/[^/]+\/(?:task\/[^/]+\/)?(?:root|cwd|exe|fd|fdinfo|map_files)(?:\/|$)|^\/dev\/fd\/(?!(?:0|1|2)$)[^/]+|^\/dev\/std(?:in|out|err)\/|^\/proc\/(?:self|thread-self)$/;

/** True when `absolute` (already lexically normalised) names a process's view or open file. */
export function isProcessLink(absolute: string): boolean {
  return PROCESS_LINK.test(absolute);
}

/** Where a path lands. */
export type PathPlace =
  | { place: "inside"; absolute: string; relative: string }
  | { place: "outside"; absolute: string; processLink?: boolean }
  | { place: "device"; absolute: string }
  | { place: "unknown"; why: string };

/**
 * Resolves the absolute path `p` physically: every existing component is looked up with lstat,
 * symlinks (also dangling ones, which `open(O_CREAT)` follows) are replaced by their targets and
 * `..` goes to the physical parent. The first missing component ends the lookup; the rest is
 * appended lexically.
 * @returns the canonical absolute path, null on a symlink loop / unreadable component, or
 *   `{processLink}` when the lookup reaches a `/proc/PID/root`-like path (`isProcessLink`).
 */
export async function physicalPath(p: string): Promise<string | null | { processLink: string }> {
  const queue = p.split("/");
  let cur = "/";
  let hops = 0;
  while (queue.length) {
    const comp = queue.shift()!;
    if (comp === "" || comp === ".") continue;
    if (comp === "..") {
      cur = path.dirname(cur);
      continue;
    }
    const next = path.join(cur, comp);
    if (isProcessLink(next)) return { processLink: next };
    let isLink: boolean;
    try {
      isLink = (await fs.lstat(next)).isSymbolicLink();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") {
        return path.resolve(next, ...queue);
      }
      return null;
    }
    if (!isLink) {
      cur = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) return null;
    const target = await fs.readlink(next).catch(() => null);
    if (target === null) return null;
    queue.unshift(...target.split("/"));
    if (path.isAbsolute(target)) cur = "/";
  }
  return cur;
}

/**
 * Classifies a path written in a command.
 * @param value the word after expansion (tilde and variables already applied)
 * @param cwds every directory the command may run in (logical, as `cd` left them), or null when
 *   unknown; a relative path is checked from each of them and the worst place wins
 * @param workspaceRoot the canonical workspace root
 */
export async function placeOf(value: string, cwds: readonly string[] | null, workspaceRoot: string): Promise<PathPlace> {
  if (value === "") return { place: "unknown", why: "empty path" };
  if (HARMLESS_DEVICES.has(value)) return { place: "device", absolute: value };
  let candidates: string[];
  if (value.startsWith("/")) candidates = [value];
  else if (cwds === null) return { place: "unknown", why: `${value} is relative to a directory that is not known before the command runs` };
  else candidates = cwds.map((c) => `${c}/${value}`);
  let result: PathPlace | null = null;
  for (const candidate of candidates) {
    const place = await placeOfAbsolute(candidate, workspaceRoot);
    if (!result || rank(place) > rank(result)) result = place;
  }
  return result!;
}

async function placeOfAbsolute(candidate: string, workspaceRoot: string): Promise<PathPlace> {
  const lexical = path.posix.normalize(candidate);
  if (isProcessLink(lexical)) return { place: "outside", absolute: lexical, processLink: true };
  const physical = await physicalPath(candidate);
  if (physical === null) return { place: "unknown", why: `${candidate} cannot be resolved (a symlink loop, or a directory the policy may not read)` };
  if (typeof physical === "object") return { place: "outside", absolute: physical.processLink, processLink: true };
  if (HARMLESS_DEVICES.has(physical)) return { place: "device", absolute: physical };
  if (!isInside(workspaceRoot, physical)) return { place: "outside", absolute: physical };
  return { place: "inside", absolute: physical, relative: path.relative(workspaceRoot, physical).split(path.sep).join("/") };
}

function rank(p: PathPlace): number {
  return { device: 0, inside: 1, unknown: 2, outside: 3 }[p.place];
}

/** The directory `cd arg` leads to from `cwd`, as bash's default logical `cd` computes it. */
export function logicalCd(cwd: string, arg: string): string {
  return path.resolve(cwd, arg);
}
