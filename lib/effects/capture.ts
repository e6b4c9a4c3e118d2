import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { ToolError } from "@/lib/errors";

/**
 * The copy-on-write view a command runs on: an overlayfs mount of the workspace (lower = the real
 * workspace root, upper = `${dir}/upper`, work = `${dir}/work`) in the command's own mount
 * namespace, mounted over the workspace root itself so every path stays the same. The real
 * workspace is untouched while the command runs; its effect is exactly the upper layer.
 *
 * The mount uses `redirect_dir=off,metacopy=off,index=off`, so the upper layer is
 * self-contained: renamed directories are copied (EXDEV makes `mv` copy), and every changed file
 * holds its full bytes.
 *
 * Capture directories live under `${dataDir}/effects/<call id>`; they are kept while a change set
 * is held for review or being applied, and removed once it was applied or discarded.
 */

/** Where one call's capture lives. */
export interface CaptureDir {
  dir: string;
  upper: string;
  work: string;
}

/** The capture directory of a call (not created). */
export function captureDirOf(dataDir: string, callId: string): CaptureDir {
  const dir = path.join(dataDir, "effects", callId);
  return { dir, upper: path.join(dir, "upper"), work: path.join(dir, "work") };
}

/** Creates a call's capture directory (fresh: an old one of the same id is removed first). */
export async function prepareCapture(dataDir: string, callId: string): Promise<CaptureDir> {
  const cap = captureDirOf(dataDir, callId);
  await fs.rm(cap.dir, { recursive: true, force: true });
  await fs.mkdir(cap.upper, { recursive: true, mode: 0o700 });
  await fs.mkdir(cap.work, { recursive: true, mode: 0o700 });
  return cap;
}

/** Removes a capture directory (best effort: a leftover is swept at the next start). */
export async function removeCapture(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find((p) => existsSync(p)) ?? null;
/** Exit status of the entry script when the overlay could not be mounted (the reason is in `mount-error`). */
export const CAPTURE_SETUP_FAILED = 126;

/** Characters overlayfs cannot take in a layer path of its mount options. */
const UNSAFE_LAYER_PATH = /[,:\\\n]/;

/** Whether capture can work here, and why not. Cached per process on globalThis. */
export function captureSupport(root: string, dataDir: string): { ok: true } | { ok: false; reason: string } {
  const g = globalThis as unknown as { agentReachCaptureProbe?: Map<string, { ok: true } | { ok: false; reason: string }> };
  g.agentReachCaptureProbe ??= new Map();
  const key = `${root}\0${dataDir}`;
  const cached = g.agentReachCaptureProbe.get(key);
  if (cached) return cached;
  const result = probe(root, dataDir);
  g.agentReachCaptureProbe.set(key, result);
  return result;
}

function probe(root: string, dataDir: string): { ok: true } | { ok: false; reason: string } {
  if (!UNSHARE) return { ok: false, reason: "unshare(1) is not installed" };
  if (process.getuid?.() !== 0) return { ok: false, reason: "overlay capture needs root until the sandbox maps the workspace in a user namespace" };
  if (UNSAFE_LAYER_PATH.test(root) || UNSAFE_LAYER_PATH.test(dataDir)) return { ok: false, reason: "the workspace or data path holds a character overlayfs options cannot carry (, : \\)" };
  const rel = path.relative(root, dataDir);
  if (!rel.startsWith("..") && !path.isAbsolute(rel)) return { ok: false, reason: "the data directory is inside the workspace" };
  try {
    execFileSync(/*turbopackIgnore: true*/ UNSHARE, ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", "grep -qw overlay /proc/filesystems"], { stdio: "ignore", timeout: 5000 });
    return { ok: true };
  } catch {
    return { ok: false, reason: "no private mount namespace with overlayfs here" };
  }
}

/**
 * Writes the entry script and returns the command line that runs `command` inside the capture:
 * a new private mount namespace, the overlay mounted over the workspace root, then
 * `bash -c command` in `cwd` (which must be inside the root). The result is for runCommand,
 * which adds its limits and process-group handling around it.
 */
export async function captureCommandLine(cap: CaptureDir, root: string, cwd: string, command: string): Promise<string> {
  if (!UNSHARE) throw new ToolError("command_failed_to_start", "unshare(1) is not installed; commands cannot be captured.", { reason: "capture_unavailable" });
  await fs.writeFile(path.join(cap.dir, "command"), command, { mode: 0o600 });
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const options = `lowerdir=${root},upperdir=${cap.upper},workdir=${cap.work},redirect_dir=off,metacopy=off,index=off`;
  const script = [
    "set -u",
    `if ! err=$(mount -t overlay overlay -o ${q(options)} ${q(root)} 2>&1); then printf '%s' "$err" > ${q(path.join(cap.dir, "mount-error"))}; exit ${CAPTURE_SETUP_FAILED}; fi`,
    `cd -- ${q(cwd)} || exit ${CAPTURE_SETUP_FAILED}`,
    // Trailing newlines of the command survive the substitution thanks to the "x" cut off again.
    `c=$(cat ${q(path.join(cap.dir, "command"))}; printf x); exec /bin/bash -c "\${c%x}"`,
  ].join("\n");
  await fs.writeFile(path.join(cap.dir, "enter.sh"), `${script}\n`, { mode: 0o700 });
  return `exec ${UNSHARE} --mount --propagation private -- /bin/bash ${q(path.join(cap.dir, "enter.sh"))}`;
}

/** The mount error the entry script recorded, or null when the overlay was mounted. */
export async function captureSetupError(cap: CaptureDir): Promise<string | null> {
  try {
    return (await fs.readFile(path.join(cap.dir, "mount-error"), "utf8")) || "mount failed";
  } catch {
    return null;
  }
}
