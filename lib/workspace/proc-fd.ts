import fsSync from "node:fs";

/**
 * Linux's per-descriptor links: `/proc/self/fd/N/name` resolves `name` in the directory open as
 * descriptor N, whatever happened since to the path that led to it. Node has no `openat`, so the
 * gateway places and opens entries in a directory it holds open through these paths
 * (lib/workspace/atomic-write.ts, lib/workspace/hold-directory.ts).
 */
export const PROC_FD = "/proc/self/fd";

/** Whether `/proc/self/fd` can be used here (checked once per process). */
export const procFdAvailable = (() => {
  try {
    return fsSync.statSync(PROC_FD).isDirectory();
  } catch {
    return false;
  }
})();
