import { heldLockCount, withLock } from "@/lib/mutex";

/**
 * One writer at a time per canonical path within this process (field case C14), on the shared
 * keyed mutex (lib/mutex.ts) so that every door and route bundle meets on the same lock.
 *
 * Scope: one Node process. Calls are executed on the host that owns the workspace (one instance
 * owns each workspace, docs/ARCHITECTURE.md), so all writers of one file meet here; writers
 * outside Agent Reach are caught by the content-hash checks (`expected_sha256`, C15), not by this
 * lock.
 */

const PREFIX = "path:";

/**
 * Runs `fn` while holding the lock for `key`; waits for earlier holders of the same key first.
 * @param key canonical absolute path (the fence's `absolute`)
 * @returns what `fn` returns; rethrows what it throws
 */
export function withPathLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  return withLock(PREFIX + key, fn);
}

/** Number of paths currently locked or waited for (0 when idle; used by tests to prove no leak). */
export function lockedPathCount(): number {
  return heldLockCount(PREFIX);
}
