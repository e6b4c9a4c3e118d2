/**
 * A ceiling on commands running at once (AGENT_REACH_MAX_CONCURRENT_COMMANDS, default the number
 * of cores): more commands wait their turn in arrival order instead of oversubscribing the
 * machine. The state lives on `globalThis`, so every route bundle shares one queue.
 */

interface Waiter {
  grant: () => void;
}

interface SlotState {
  running: number;
  queue: Waiter[];
  /** Commands that had to wait, and for how long in total (ms), since start. */
  waited: number;
  waitedMs: number;
  longestWaitMs: number;
}

const globalForSlots = globalThis as unknown as { agentReachCommandSlots?: SlotState };
function slots(): SlotState {
  globalForSlots.agentReachCommandSlots ??= { running: 0, queue: [], waited: 0, waitedMs: 0, longestWaitMs: 0 };
  return globalForSlots.agentReachCommandSlots;
}

/** A held slot; `release` is idempotent. */
export interface CommandSlot {
  /** How long the command waited for its slot (ms; 0 when one was free). */
  waitedMs: number;
  release(): void;
}

/**
 * Waits for a free slot among `max`.
 * @param onWait called once, at once, when the command has to wait (with how many are ahead of it)
 * @returns the slot, or null when `timeoutMs` passed or `signal` aborted first (nothing is held then)
 */
export async function acquireCommandSlot(max: number, options: { timeoutMs: number; signal?: AbortSignal; onWait?: (ahead: number) => void }): Promise<CommandSlot | null> {
  const s = slots();
  const held = (waitedMs: number): CommandSlot => {
    let released = false;
    return {
      waitedMs,
      release: () => {
        if (released) return;
        released = true;
        s.running--;
        const next = s.queue.shift();
        if (next) next.grant();
      },
    };
  };
  if (s.running < max && s.queue.length === 0) {
    s.running++;
    return held(0);
  }
  const started = Date.now();
  options.onWait?.(s.queue.length + Math.max(0, s.running - max + 1));
  return new Promise<CommandSlot | null>((resolve) => {
    const waiter: Waiter = {
      grant: () => {
        done();
        s.running++;
        const waitedMs = Date.now() - started;
        s.waited++;
        s.waitedMs += waitedMs;
        s.longestWaitMs = Math.max(s.longestWaitMs, waitedMs);
        resolve(held(waitedMs));
      },
    };
    const giveUp = () => {
      done();
      const i = s.queue.indexOf(waiter);
      if (i >= 0) s.queue.splice(i, 1);
      const waitedMs = Date.now() - started;
      s.waited++;
      s.waitedMs += waitedMs;
      s.longestWaitMs = Math.max(s.longestWaitMs, waitedMs);
      resolve(null);
    };
    const timer = setTimeout(giveUp, options.timeoutMs);
    const done = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", giveUp);
    };
    options.signal?.addEventListener("abort", giveUp, { once: true });
    s.queue.push(waiter);
    // A slot freed while we were setting up (or a raised ceiling) is taken at once.
    if (s.running < max && s.queue[0] === waiter) {
      s.queue.shift();
      waiter.grant();
    }
  });
}

/** The queue as health reports it. */
export interface CommandSlotStats {
  running: number;
  waiting: number;
  /** Commands that waited for a slot since start, total and longest wait (ms). */
  waited: number;
  waited_ms_total: number;
  longest_wait_ms: number;
}

export function commandSlotStats(): CommandSlotStats {
  const s = slots();
  return { running: s.running, waiting: s.queue.length, waited: s.waited, waited_ms_total: s.waitedMs, longest_wait_ms: s.longestWaitMs };
}
