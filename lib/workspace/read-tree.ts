import type { Dirent } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

/**
 * Depth-first walk of a fenced directory for list_directory and search_files. Symlinks are
 * reported but never followed (so a walk cannot leave the workspace or loop); siblings come in
 * code-point order of their names, each directory before its contents.
 */

/** Kind of a directory entry, from `lstat` (a symlink is a symlink, whatever it points to). */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** One entry met by the walk. */
export interface TreeEntry {
  name: string;
  /** Absolute path (under the walked directory, no symlink followed). */
  absolute: string;
  /** Path relative to the walked directory, "/"-separated. */
  relative: string;
  type: EntryType;
  /** 1 for the walked directory's own children. */
  depth: number;
}

/** Options of `walkTree`. */
export interface WalkOptions {
  /** Deepest level returned (1 = children only). */
  maxDepth: number;
  /** Skip names starting with "." (and everything under them). */
  skipHidden?: boolean;
  /** Directories yielded but not entered (e.g. `.git`, `node_modules`); given the entry. */
  dontEnter?: (entry: TreeEntry) => boolean;
  signal?: AbortSignal;
}

/** Directories whose contents tools skip unless the agent points inside them. */
export const HEAVY_DIRS = new Set([".git", "node_modules"]);

function typeOf(d: Dirent): EntryType {
  if (d.isSymbolicLink()) return "symlink";
  if (d.isDirectory()) return "directory";
  if (d.isFile()) return "file";
  return "other";
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Yields the entries under the directory `absolute` (not the directory itself), depth-first.
 * A subdirectory that cannot be read (permissions, removed meanwhile) is yielded and skipped.
 *
 * @param absolute canonical absolute directory (fenced by the caller)
 */
export async function* walkTree(absolute: string, options: WalkOptions): AsyncGenerator<TreeEntry> {
  yield* walkLevel(absolute, "", 1, options);
}

async function* walkLevel(dir: string, relDir: string, depth: number, options: WalkOptions): AsyncGenerator<TreeEntry> {
  options.signal?.throwIfAborted();
  let dirents: Dirent[];
  try {
    dirents = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (depth === 1) throw err;
    return;
  }
  dirents.sort(byName);
  for (const d of dirents) {
    if (options.skipHidden && d.name.startsWith(".")) continue;
    const entry: TreeEntry = {
      name: d.name,
      absolute: path.join(dir, d.name),
      relative: relDir ? `${relDir}/${d.name}` : d.name,
      type: typeOf(d),
      depth,
    };
    yield entry;
    if (entry.type === "directory" && depth < options.maxDepth && !options.dontEnter?.(entry)) {
      yield* walkLevel(entry.absolute, entry.relative, depth + 1, options);
    }
  }
}
