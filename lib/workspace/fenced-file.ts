import fs, { type Stats } from "node:fs";

/**
 * An open regular file that the fence checked (`openForRead` in lib/workspace/fence.ts): a file
 * descriptor with the few operations the tools use, in the shapes of `fs/promises`' FileHandle
 * (`stat`, positional `read`, `readFile`, `close`), so a FileHandle can stand in for it in tests.
 *
 * Reads of at most `SYNC_READ_MAX` bytes are synchronous `pread`s: a small file's page is in the
 * page cache, and reading it directly costs about a microsecond where a trip through the thread
 * pool costs about 25 µs of CPU and a turn of the event loop. Larger reads go through the thread
 * pool, so one big file does not hold the event loop. Every read is positional: the descriptor's
 * own offset is never used.
 */
export class FencedFile {
  #fd: number | null;

  /** @param fd a descriptor opened for reading; this object owns it and closes it in `close`. */
  constructor(fd: number) {
    this.#fd = fd;
  }

  /** The descriptor. @throws Error when the file was closed. */
  get fd(): number {
    if (this.#fd === null) throw new Error("The file was closed.");
    return this.#fd;
  }

  /** The open file's own stat (`fstat`), now. */
  statNow(): Stats {
    return fs.fstatSync(this.fd);
  }

  /** The open file's own stat (`fstat`). */
  async stat(): Promise<Stats> {
    return this.statNow();
  }

  /**
   * Reads up to `length` bytes at byte `position` of the file into `buffer` at `offset`.
   * @returns the bytes read (0 at the end of the file) and the buffer
   */
  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number; buffer: Buffer }> {
    const fd = this.fd;
    if (length <= SYNC_READ_MAX) return { bytesRead: fs.readSync(fd, buffer, offset, length, position), buffer };
    return new Promise((resolve, reject) =>
      fs.read(fd, buffer, offset, length, position, (err, bytesRead) => (err ? reject(err) : resolve({ bytesRead, buffer }))),
    );
  }

  /** The whole file from its first byte to its end (it may have grown since it was opened). */
  async readFile(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let total = 0;
    // One byte more than the size, so a file that did not change ends in one read plus the one that finds its end.
    let want = Math.max(1, this.statNow().size + 1);
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(want, READ_FILE_CHUNK));
      const { bytesRead } = await this.read(buf, 0, buf.length, total);
      if (bytesRead === 0) break;
      chunks.push(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
      total += bytesRead;
      want = Math.max(1, want - bytesRead);
    }
    return Buffer.concat(chunks, total);
  }

  /** Closes the descriptor; closing twice is a no-op. */
  async close(): Promise<void> {
    const fd = this.#fd;
    if (fd === null) return;
    this.#fd = null;
    fs.closeSync(fd);
  }
}

/** Largest read done as a direct system call (bytes); larger ones use the thread pool. */
export const SYNC_READ_MAX = 256 * 1024;

/** Largest single read of `readFile` (bytes). */
const READ_FILE_CHUNK = 4 * 1024 * 1024;
