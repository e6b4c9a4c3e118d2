import os from "node:os";
import { Worker } from "node:worker_threads";

/**
 * Line matching for search_files, off the server's main thread.
 *
 * Why: JavaScript's RegExp is a backtracking engine. `(a+)+$` against a line of 40 "a"s and a
 * "!" runs for minutes, and while it runs the Node.js event loop (every other agent, the
 * dashboard, /api/health) stands still. Literal queries are not safe either: measured on
 * Node 20.20 (V8 11.3), the escaped literal "a"×15000 + "b" + "a"×15000 against one 1 MiB line
 * of "a" takes 7.6 s as a RegExp and 10 s with String.prototype.indexOf, and "b" + "a"×30000
 * with the `i` flag takes 20 s. Every content search, literal or not, therefore runs here.
 *
 * How:
 * - One worker thread per search call, spawned when the call meets its first text file
 *   (≈25 ms) and terminated when the call ends. No state survives a call, and a worker killed
 *   for overrunning needs no pool repair.
 * - At most MAX_MATCHERS workers run at once, process-wide; further calls wait for a slot
 *   (abortable). A burst of hostile searches thus cannot take every core or unbounded memory,
 *   and the main thread keeps a core's share of CPU.
 * - A wall-clock budget per call covers the time the worker spends matching (summed over the
 *   call's files, from posting a file to its answer; reading files and waiting for a slot are
 *   not counted). When it runs out the worker is terminated (`worker.terminate()` interrupts a
 *   running RegExp within milliseconds) and `match` rejects with a MatchFailure "timeout".
 * - resourceLimits cap the worker's heap and stack. A worker that runs out of memory, or a
 *   RegExp that overflows its backtracking stack, gives a MatchFailure "too_complex".
 * - The worker is a plain CommonJS string run with `eval: true` and no execArgv: there is no
 *   file to resolve at run time, so it loads the same way under vitest (TypeScript sources),
 *   tsx and the Turbopack-bundled Next.js server (where a worker file referenced through
 *   `new URL("./x.js", import.meta.url)` does not survive bundling).
 */

/** Most matcher workers alive at once in this process (at least 2, at most 8, one core left free). */
export const MAX_MATCHERS = Math.max(2, Math.min(8, os.availableParallelism() - 1));

/** Heap and stack limits of one matcher worker (MiB). A file sent to it is ≤ 8 MiB of bytes (≤ 16 MiB as UTF-16). */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };

/**
 * The worker: compiles the query once (workerData {source, flags}); for each message
 * {text, limit} answers {hits} (at most `limit`) or {error: {name, message}} when RegExp#exec
 * throws. Lines are split on "\n", a trailing "\r" is not part of a line, and the empty string
 * after a final "\n" is not a line (as in grep).
 */
const WORKER_SOURCE = `"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on("message", ({ text, limit }) => {
  const hits = [];
  try {
    for (let start = 0, line = 1; start < text.length && hits.length < limit; line++) {
      const newline = text.indexOf("\\n", start);
      const next = newline === -1 ? text.length : newline + 1;
      let end = newline === -1 ? text.length : newline;
      if (end > start && text.charCodeAt(end - 1) === 13) end--;
      const m = re.exec(text.slice(start, end));
      if (m) hits.push({ line, start, end, index: m.index });
      start = next;
    }
  } catch (err) {
    parentPort.postMessage({ error: { name: err && err.name, message: String(err && err.message) } });
    return;
  }
  parentPort.postMessage({ hits });
});
`;

/** One matching line of a text sent to `LineMatcher.match`. */
export interface LineHit {
  /** 1-based line number. */
  line: number;
  /** Offsets (UTF-16 code units) of the line in the text: `text.slice(start, end)` is the line without "\n" / "\r\n". */
  start: number;
  end: number;
  /** 0-based index (UTF-16 code units) of the first match within the line. */
  index: number;
}

/**
 * Why matching stopped: "timeout" (the call's budget ran out), "too_complex" (backtracking
 * stack or worker memory exhausted), "invalid" (V8 refused to compile the pattern, e.g.
 * "Regular expression too large", which V8 only reports when the pattern first runs).
 */
export type MatchFailureKind = "timeout" | "too_complex" | "invalid";

/** Expected end of a search's matching; the tool turns it into a ToolError for the agent. */
export class MatchFailure extends Error {
  readonly kind: MatchFailureKind;
  constructor(kind: MatchFailureKind, message: string) {
    super(message);
    this.name = "MatchFailure";
    this.kind = kind;
  }
}

/** Options of `LineMatcher.open`. */
export interface LineMatcherOptions {
  /** RegExp source and flags (already validated with `new RegExp` by the caller). */
  source: string;
  flags: string;
  /** Wall-clock milliseconds the worker may spend matching, over all `match` calls. */
  budgetMs: number;
  /** Aborts waiting for a slot and matching (rejects with `signal.reason`, the worker is terminated). */
  signal?: AbortSignal;
}

interface Slots {
  active: number;
  waiting: Array<() => void>;
}

/** Process-wide slot count, on globalThis because a bundled server may load this module more than once. */
const slots: Slots = ((globalThis as { __agentReachSearchSlots?: Slots }).__agentReachSearchSlots ??= { active: 0, waiting: [] });

/** Waits for one of the MAX_MATCHERS slots (first come, first served); rejects with `signal.reason` on abort. */
function acquireSlot(signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  if (slots.active < MAX_MATCHERS) {
    slots.active++;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const grant = () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    const onAbort = () => {
      slots.waiting.splice(slots.waiting.indexOf(grant), 1);
      reject(signal!.reason);
    };
    slots.waiting.push(grant);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Hands the slot to the next waiting call, or frees it. */
function releaseSlot(): void {
  const next = slots.waiting.shift();
  if (next) next();
  else slots.active--;
}

/** Maps what the worker threw (or how it died) to a MatchFailure; anything unexpected stays an Error (a bug). */
function classify(err: { name?: string; message?: string; code?: string }): Error {
  const message = err.message ?? String(err);
  if (err.code === "ERR_WORKER_OUT_OF_MEMORY") {
    return new MatchFailure("too_complex", `matching ran out of memory (${RESOURCE_LIMITS.maxOldGenerationSizeMb} MiB)`);
  }
  if (err.name === "RangeError") return new MatchFailure("too_complex", `its backtracking stack overflowed: ${message}`);
  if (err.name === "SyntaxError") return new MatchFailure("invalid", message);
  return new Error(`search matcher failed: ${message}`);
}

/**
 * A worker that matches one query against the lines of texts, for one search call. Open it
 * with `LineMatcher.open`, call `match` once per file (one call at a time), and always `close`
 * it (in a `finally`). After a rejected `match` the worker is gone and further calls reject
 * with the same error.
 */
export class LineMatcher {
  private usedMs = 0;
  private failure: unknown = null;
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    private readonly options: LineMatcherOptions,
  ) {
    // An 'error' event without a listener would crash the process; one between files is kept for the next `match`.
    worker.on("error", (err) => (this.failure ??= classify(err)));
  }

  /**
   * Waits for a matcher slot and starts the worker.
   * Rejects with `signal.reason` when aborted while waiting.
   */
  static async open(options: LineMatcherOptions): Promise<LineMatcher> {
    await acquireSlot(options.signal);
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { source: options.source, flags: options.flags },
        resourceLimits: RESOURCE_LIMITS,
        execArgv: [],
        env: {},
      });
    } catch (err) {
      releaseSlot();
      throw err;
    }
    return new LineMatcher(worker, options);
  }

  /**
   * The matching lines of `text`, in order, at most `limit` (≥ 1).
   * Rejects with MatchFailure ("timeout" when the call's budget runs out, "too_complex",
   * "invalid"), with `signal.reason` when aborted; the worker is then terminated.
   */
  match(text: string, limit: number): Promise<LineHit[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error("LineMatcher is closed"));
    if (this.options.signal?.aborted) return Promise.reject(this.options.signal.reason);
    const { worker, options } = this;
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const settle = () => {
        clearTimeout(timer);
        worker.off("message", onMessage).off("error", onFail).off("exit", onExit);
        options.signal?.removeEventListener("abort", onAbort);
        this.usedMs += performance.now() - started;
      };
      const fail = (err: unknown) => {
        settle();
        this.failure = err;
        void this.close();
        reject(err);
      };
      const onMessage = (msg: { hits?: LineHit[]; error?: { name: string; message: string } }) => {
        if (msg.error) return fail(classify(msg.error));
        settle();
        resolve(msg.hits!);
      };
      const onFail = (err: Error & { code?: string }) => fail(classify(err));
      const onExit = (code: number) => fail(new Error(`search matcher exited unexpectedly (code ${code})`));
      const onAbort = () => fail(options.signal!.reason);
      const remaining = Math.max(0, options.budgetMs - this.usedMs);
      const timer = setTimeout(() => fail(new MatchFailure("timeout", `matching took longer than ${options.budgetMs} ms`)), remaining);
      worker.on("message", onMessage).on("error", onFail).on("exit", onExit);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      worker.postMessage({ text, limit });
    });
  }

  /** Terminates the worker and frees its slot (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    releaseSlot();
    await this.worker.terminate();
  }
}
