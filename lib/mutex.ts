/**
 * Keyed async mutex: `withLock(key, fn)` runs `fn` after every earlier holder of `key` has
 * finished, in arrival order, and releases when `fn` settles (resolves or throws). Entries are
 * removed when their queue drains, so the map does not grow with the number of keys ever used.
 *
 * The map lives on `globalThis`: Next.js may load this module once per route bundle, and a lock
 * that two doors (HTTP and MCP routes) did not share would not be a lock.
 */
const globalForLocks = globalThis as unknown as { agentReachLocks?: Map<string, Promise<void>> };

function tails(): Map<string, Promise<void>> {
  globalForLocks.agentReachLocks ??= new Map();
  return globalForLocks.agentReachLocks;
}

/** Runs `fn` holding the lock for `key`. @returns what `fn` returns; rethrows what it throws. */
export async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const map = tails();
  const previous = map.get(key) ?? Promise.resolve();
  let release!: () => void;
  const current = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => current);
  map.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (map.get(key) === tail) map.delete(key);
  }
}

/** Number of keys (with the given prefix) currently held or waited for. */
export function heldLockCount(prefix = ""): number {
  let n = 0;
  for (const key of tails().keys()) if (key.startsWith(prefix)) n++;
  return n;
}
