/**
 * One writer at a time per canonical path within this process (field case C14): an async mutex
 * keyed by absolute path. Callers queue in arrival order; an entry lives only while someone holds
 * or waits for the lock, so the map does not grow with the number of paths ever written.
 *
 * Scope: one Node process. Calls are executed on the host that owns the workspace (DESIGN.md,
 * "Scale path"), so all writers of one file meet here; writers outside Agent Reach are caught by
 * the content-hash checks (`expected_sha256`, C15), not by this lock.
 */

/** Tail of the queue per path: resolves when the last queued holder releases. */
const tails = new Map<string, Promise<void>>();

/**
 * Runs `fn` while holding the lock for `key`; waits for earlier holders of the same key first.
 * The lock is released when `fn` settles, whether it resolves or throws.
 *
 * @param key canonical absolute path (the fence's `absolute`)
 * @returns what `fn` returns; rethrows what it throws
 */
export async function withPathLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** Number of paths currently locked or waited for (0 when idle; used by tests to prove no leak). */
export function lockedPathCount(): number {
  return tails.size;
}
