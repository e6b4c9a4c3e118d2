import http from "node:http";
import fs from "node:fs";
import { performance } from "node:perf_hooks";

/**
 * Measuring helpers shared by the benchmark sections (bench/run.ts, bench/side-by-side.ts).
 */

/** A table of the report: title, a paragraph, a header row and rows. */
export interface Section {
  title: string;
  intro: string;
  header: string[];
  rows: (string | number)[][];
  /** Paragraphs printed after the table (notes on semantics). */
  notes?: string[];
}

/** Median and 99th percentile (nearest rank) of samples in ms. */
export function quantiles(samples: number[]): { median: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p99: at(0.99) };
}

/** Milliseconds with one decimal. */
export const ms = (v: number) => v.toFixed(1);

/** Resident set size of a process (MiB) from /proc; `peak` reads VmHWM (the high-water mark). */
export function rssMiB(pid: number, peak = false): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const m = new RegExp(`${peak ? "VmHWM" : "VmRSS"}:\\s+(\\d+) kB`).exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * Resets a process's peak RSS (VmHWM) to its current RSS (Linux: writing 5 to
 * /proc/PID/clear_refs, root or the same user). @returns false when the kernel refused.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Runs `fn` `n` times one after the other. @returns each run's wall time (ms). */
export async function timeCalls(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Writes numbered lines `line-%06d` with streams until `lines` lines or `targetBytes` bytes
 * (whichever is given). @returns the line and byte counts written.
 */
export async function writeLog(file: string, targetBytes: number | null, lines: number | null): Promise<{ lines: number; bytes: number }> {
  const out = fs.createWriteStream(file);
  let n = 0;
  let bytes = 0;
  let buf = "";
  while ((lines !== null && n < lines) || (targetBytes !== null && bytes < targetBytes)) {
    n++;
    const line = `line-${String(n).padStart(6, "0")}\n`;
    buf += line;
    bytes += line.length;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once("drain", () => r()));
      buf = "";
    }
  }
  out.end(buf);
  await new Promise<void>((r) => out.once("finish", () => r()));
  return { lines: n, bytes };
}

/** Total bytes of the files in a directory tree. */
export function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(`${entry.parentPath}/${entry.name}`).size;
  }
  return total;
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 256 });

/**
 * A tool call as a load generator makes it: `POST {base}/api/tools/{tool}` with the bearer
 * token, over Node's http module with kept-alive connections. The benchmarks' client shares the
 * 2 cores with the server, and this costs it about 0.4 ms of CPU per call against about 1.2 ms
 * for `fetch`, so more of the machine measures the server.
 * @returns the HTTP status and the parsed JSON body
 */
export function toolCall(base: string, token: string, tool: string, args: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const url = new URL(`/api/tools/${tool}`, base);
  const payload = JSON.stringify(args);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent: keepAlive,
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: url.pathname,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
          } catch (err) {
            reject(err);
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

