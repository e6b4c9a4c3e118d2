import type fsp from "node:fs/promises";

/**
 * Fault injection for atomic writes, done from the test side: a test file replaces
 * `node:fs/promises` for the modules it loads with `withWriteFaults` (vitest module mocking), then
 * arms a fault; the next temp file an atomic write opens (a name ending `.agent-reach.tmp`) takes
 * `afterBytes` bytes and then fails with `code`, exactly like a disk that fills up mid-write.
 * One-shot. The product code runs unchanged: it only sees a file handle whose write failed.
 *
 *   vi.mock("node:fs/promises", async (importOriginal) =>
 *     (await import("@/tests/helpers/write-fault")).withWriteFaults(await importOriginal()));
 */
export interface WriteFault {
  /** Bytes written to the temp file before the failure. */
  afterBytes: number;
  /** The errno code to fail with. */
  code: "ENOSPC" | "EIO" | "EACCES" | "EROFS" | "EDQUOT";
}

const TEMP_SUFFIX = ".agent-reach.tmp";
let armed: WriteFault | null = null;

/** Arms `fault` for the next atomic write's temp file in this process; `null` disarms. */
export function armWriteFault(fault: WriteFault | null): void {
  armed = fault;
}

/** A handle whose writes stop after `fault.afterBytes` bytes in total and then fail with its code. */
function faultyHandle(handle: fsp.FileHandle, fault: WriteFault): fsp.FileHandle {
  let written = 0;
  const write = async (buffer: Buffer, offset = 0, length = buffer.length - offset, position?: number | null) => {
    const room = fault.afterBytes - written;
    if (room <= 0) throw Object.assign(new Error(`${fault.code}: injected fault after ${written} bytes`), { code: fault.code });
    const res = await handle.write(buffer, offset, Math.min(length, room), position);
    written += res.bytesWritten;
    return res;
  };
  return new Proxy(handle, {
    get(target, prop) {
      if (prop === "write") return write;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * `node:fs/promises` with `open` wrapped: an armed fault applies to the next temp file of an
 * atomic write, and everything else passes through to the real module.
 */
export function withWriteFaults(real: typeof fsp): typeof fsp {
  const open = (async (...args: Parameters<typeof fsp.open>) => {
    const handle = await real.open(...args);
    const fault = armed;
    if (!fault || !String(args[0]).endsWith(TEMP_SUFFIX)) return handle;
    armed = null;
    return faultyHandle(handle, fault);
  }) as typeof fsp.open;
  return { ...real, open, default: { ...real, open } } as typeof fsp;
}
