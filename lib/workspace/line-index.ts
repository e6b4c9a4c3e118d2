import type { Stats } from "node:fs";
import type { Sniffed } from "@/lib/workspace/read-sniff";
import type { Eol } from "@/lib/workspace/text";

/**
 * An in-memory cache of what one full streaming pass over a file learns (field case C12): its
 * exact line count, sha256, line-ending style, UTF-8 validity and a sparse line-offset index
 * (the byte offset where every `LINE_INDEX_STEP`-th line starts). With it, a later page of a
 * huge file is read by seeking to the nearest indexed line instead of scanning from byte 0.
 *
 * An entry is valid only for the exact file version it was built from: the key holds the
 * device, inode, size, mtime and ctime (ctime changes on every write and cannot be set back
 * by `utimes`). The cache is bounded (LRU by entry count and by total indexed offsets).
 */

/** Lines between two indexed offsets. */
export const LINE_INDEX_STEP = 1024;
/** Most files kept. */
const MAX_ENTRIES = 64;
/** Most indexed offsets kept over all entries (8 bytes each: 32 MiB of index at most). */
const MAX_TOTAL_OFFSETS = 4 * 1024 * 1024;

/** Facts about one file version, from one full pass. */
export interface LineIndex {
  sniffed: Sniffed;
  /** Exact number of lines; a final line without a newline counts, an empty file has 0. */
  totalLines: number;
  /** sha256 (hex) of all the file's bytes, BOM included. */
  sha256: string;
  eol: Eol;
  /** True when the text holds a byte sequence that does not decode in `sniffed.encoding` (named for UTF-8, its usual case). */
  invalidUtf8: boolean;
  /** The encoding options (call argument, workspace setting) the index was built under; another choice needs another pass. */
  options?: string;
  /** `lineStarts[k]` = byte offset where line `k * LINE_INDEX_STEP` (0-based) starts. */
  lineStarts: Float64Array;
}

type StatKey = Pick<Stats, "dev" | "ino" | "size" | "mtimeMs" | "ctimeMs">;

const entries = new Map<string, LineIndex>();
let totalOffsets = 0;

function keyOf(st: StatKey): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** The cached index of this exact file version, or undefined. Marks it most recently used. */
export function getLineIndex(st: StatKey): LineIndex | undefined {
  const key = keyOf(st);
  const hit = entries.get(key);
  if (hit) {
    entries.delete(key);
    entries.set(key, hit);
  }
  return hit;
}

/**
 * Stores the index of a file version, evicting least recently used entries to stay within the
 * bounds. An index larger than the whole offset budget is not stored.
 */
export function putLineIndex(st: StatKey, index: LineIndex): void {
  const key = keyOf(st);
  const old = entries.get(key);
  if (old) {
    entries.delete(key);
    totalOffsets -= old.lineStarts.length;
  }
  if (index.lineStarts.length > MAX_TOTAL_OFFSETS) return;
  for (const [k, v] of entries) {
    if (entries.size < MAX_ENTRIES && totalOffsets + index.lineStarts.length <= MAX_TOTAL_OFFSETS) break;
    entries.delete(k);
    totalOffsets -= v.lineStarts.length;
  }
  entries.set(key, index);
  totalOffsets += index.lineStarts.length;
}

/** Empties the cache (tests and benchmarks that need a cold read). */
export function clearLineIndexCache(): void {
  entries.clear();
  totalOffsets = 0;
}
