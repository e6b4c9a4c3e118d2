import { heldLockCount, withLock } from "@/lib/mutex";

/**
 * One change set at a time per workspace: reading a command's upper layer, staging it (backups
 * of the before-bytes, the diff, the hold decision) and applying it run under this lock, and so
 * do applying an approved held change set and an undo (revert, rewind). Without it, a second
 * command's change set could be applied between the moment the first one recorded a file and the
 * moment it read that file's bytes or replaced it (swapping the file for a link to a secret, say).
 *
 * The write tools (write_file, edit_file, restore_backup: lib/workspace/update-file.ts) take it
 * too, around their path lock, so a write never lands between a change set's staging and its
 * apply (the change set would replace bytes its backups and record do not name). The command
 * itself runs outside the lock (it may take minutes; its writes go to its own upper layer). Scope: one Node process, on the shared keyed mutex (lib/mutex.ts), as the path locks of
 * the write tools (lib/workspace/path-lock.ts); one instance owns each workspace.
 */

const PREFIX = "change-set:";

/**
 * Runs `fn` holding the change-set lock of the workspace at `root`; waits for earlier holders.
 * Never nest: `fn` must not take the same lock again.
 * @param root canonical workspace root
 * @returns what `fn` returns; rethrows what it throws
 */
export function withChangeSetLock<T>(root: string, fn: () => Promise<T>): Promise<T> {
  return withLock(PREFIX + root, fn);
}

/** Number of workspaces whose change-set lock is held or waited for (0 when idle; for tests). */
export function changeSetLockCount(): number {
  return heldLockCount(PREFIX);
}
