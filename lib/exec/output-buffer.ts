/**
 * Bounded capture of a process's output stream: the first and the last bytes are kept, the middle
 * is counted but dropped, so a command that prints gigabytes costs at most `headBytes + tailBytes`
 * (+ one chunk) of memory. Rendering decodes UTF-8 with U+FFFD replacement and never splits a
 * multi-byte character at a cut.
 */
export class HeadTailBuffer {
  private readonly head: Buffer[] = [];
  private headLength = 0;
  private tail: Buffer[] = [];
  private tailLength = 0;
  /** Every byte seen, kept or not. */
  total = 0;

  /**
   * @param headBytes bytes kept from the start
   * @param tailBytes bytes kept from the end
   */
  constructor(
    private readonly headBytes: number,
    private readonly tailBytes: number,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.headBytes - this.headLength;
    if (room > 0) {
      const take = chunk.subarray(0, room);
      this.head.push(take);
      this.headLength += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailLength += chunk.length;
    while (this.tail.length > 1 && this.tailLength - this.tail[0].length >= this.tailBytes) {
      this.tailLength -= this.tail.shift()!.length;
    }
  }

  /** True when bytes between head and tail were dropped. */
  get dropped(): boolean {
    return this.total > this.headLength + Math.min(this.tailLength, this.tailBytes);
  }

  /**
   * The captured text, at most `maxChars` characters (UTF-16 code units) plus a marker line where
   * the middle was cut: `[… N bytes omitted …]`.
   * @returns text, whether anything was cut, and how many bytes of the stream are not in `text`
   */
  render(maxChars: number): { text: string; truncated: boolean; omittedBytes: number } {
    const headBuf = Buffer.concat(this.head);
    let tailBuf = Buffer.concat(this.tail);
    if (tailBuf.length > this.tailBytes) tailBuf = tailBuf.subarray(tailBuf.length - this.tailBytes);
    if (!this.dropped) {
      const full = Buffer.concat([headBuf, tailBuf]).toString("utf8");
      if (full.length <= maxChars) return { text: full, truncated: false, omittedBytes: 0 };
      return cutText(full, full, maxChars, this.total);
    }
    const headText = completeUtf8Prefix(headBuf).toString("utf8");
    const tailText = completeUtf8Suffix(tailBuf).toString("utf8");
    return cutText(headText, tailText, maxChars, this.total);
  }
}

/**
 * Keeps the first half of the budget from `head` and the second half from the end of `tail`,
 * moving each cut to a line boundary when one is near (within half of that side's budget).
 */
function cutText(head: string, tail: string, maxChars: number, totalBytes: number): { text: string; truncated: boolean; omittedBytes: number } {
  const headChars = Math.ceil(maxChars / 2);
  const tailChars = maxChars - headChars;
  let h = safeSlice(head, 0, Math.min(headChars, head.length));
  let t = tailChars > 0 ? safeSlice(tail, Math.max(0, tail.length - tailChars), tail.length) : "";
  const lastNewline = h.lastIndexOf("\n");
  if (lastNewline >= h.length / 2) h = h.slice(0, lastNewline + 1);
  const firstNewline = t.indexOf("\n");
  if (firstNewline !== -1 && firstNewline < t.length / 2) t = t.slice(firstNewline + 1);
  const omittedBytes = Math.max(0, totalBytes - Buffer.byteLength(h) - Buffer.byteLength(t));
  const marker = `[… ${omittedBytes} bytes omitted …]\n`;
  return { text: `${h}${h.endsWith("\n") || h === "" ? "" : "\n"}${marker}${t}`, truncated: true, omittedBytes };
}

/** `s.slice(a, b)` without splitting a surrogate pair at either edge. */
function safeSlice(s: string, a: number, b: number): string {
  if (a > 0 && isLowSurrogate(s.charCodeAt(a))) a++;
  if (b < s.length && b > a && isLowSurrogate(s.charCodeAt(b))) b--;
  return s.slice(a, b);
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** Drops an incomplete UTF-8 sequence at the end of `buf` (cut in the middle of a character). */
function completeUtf8Prefix(buf: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, buf.length); back++) {
    const byte = buf[buf.length - back];
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? buf.subarray(0, buf.length - back) : buf;
  }
  return buf;
}

/** Drops continuation bytes at the start of `buf` (the rest of a character cut off before it). */
function completeUtf8Suffix(buf: Buffer): Buffer {
  let i = 0;
  while (i < Math.min(3, buf.length) && (buf[i] & 0xc0) === 0x80) i++;
  return buf.subarray(i);
}
