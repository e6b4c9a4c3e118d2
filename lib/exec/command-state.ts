/**
 * The life of one started command, as the runner sees it, kept in one object instead of loose
 * flags in a closure:
 *
 * ```
 *   running ──exit──▶ exited ──close / drain──▶ settled (a result, or a start error)
 *      │                                           ▲
 *      └────────── spawn error ────────────────────┘
 * ```
 *
 * While running or after exit the gateway may stop the command: for its timeout, for the call's
 * abort, or for a limit the kernel reported (processes, memory). Those are recorded as they
 * happen (a command can both time out and be aborted); a limit is recorded only once and never
 * after the command exited. The two side channels of the wrapper are collected here too: what
 * it reports on fd 3 when a limit or the box could not be set up, and the marker the first
 * process in the box writes on fd 4.
 */

/** Exit status of the limits wrapper when it could not set a limit (it then reports on fd 3). */
export const SETUP_FAILED = 125;
/** Written on fd 4 by the first process inside the box: the box was built and the command starts. */
export const BOX_STARTED = "agent-reach-box-started";

/** The limit the gateway stopped a command for, having read the cgroup's counters. */
export type WatchedLimit = "processes" | "memory";

/** How bash ended: its exit status, or the signal that ended it. */
export interface CommandExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * How a settled command ended: it ran (a result, whatever its status); the wrapper could not set
 * a limit or the box up (`setup_failed`, its report in `problem`); or bwrap itself failed before
 * the command started (`box_failed`).
 */
export type CommandEnding = { kind: "ran" } | { kind: "setup_failed"; problem: string; boxStep: boolean } | { kind: "box_failed" };

export class CommandState {
  private phase: "running" | "exited" | "settled" = "running";
  private exitStatus: CommandExit | null = null;
  private timedOutFlag = false;
  private abortedFlag = false;
  private stoppedByUs = false;
  private limit: WatchedLimit | null = null;
  private setupReport = "";
  private boxMarker = "";

  /** The command's exit, once bash has exited. */
  get exit(): CommandExit | null {
    return this.exitStatus;
  }

  /** Its timeout passed (it was told to stop). */
  get timedOut(): boolean {
    return this.timedOutFlag;
  }

  /** The call was aborted (it was told to stop). */
  get aborted(): boolean {
    return this.abortedFlag;
  }

  /** The gateway signalled the command: timeout, abort or a limit. */
  get weKilled(): boolean {
    return this.stoppedByUs;
  }

  /** The limit the command was killed for, if any. */
  get killedFor(): WatchedLimit | null {
    return this.limit;
  }

  /** True once the outcome has been decided (resolved or rejected). */
  get settled(): boolean {
    return this.phase === "settled";
  }

  /** The timeout passed: the command is being stopped. */
  timeOut(): void {
    this.timedOutFlag = true;
    this.stoppedByUs = true;
  }

  /** The call was aborted: the command is being stopped. */
  abort(): void {
    this.abortedFlag = true;
    this.stoppedByUs = true;
  }

  /**
   * The cgroup reported `limit`. @returns true when this is news (kill the command now); false
   * when it was already stopped for a limit or has exited.
   */
  hitLimit(limit: WatchedLimit): boolean {
    if (this.limit || this.exitStatus) return false;
    this.limit = limit;
    this.stoppedByUs = true;
    return true;
  }

  /** Bytes the wrapper wrote on fd 3 (a limit or the box could not be set up). */
  reportSetup(text: string): void {
    this.setupReport += text;
  }

  /** Bytes written on fd 4 (the box's start marker). */
  reportBox(text: string): void {
    this.boxMarker += text;
  }

  /** bash exited (its output may still be draining). */
  exited(exit: CommandExit): void {
    this.exitStatus = exit;
    if (this.phase === "running") this.phase = "exited";
  }

  /**
   * Settles a command that has exited. @returns false when there is nothing to settle (not yet
   * exited, or already settled): each command settles once.
   */
  settleExited(): boolean {
    if (this.phase !== "exited") return false;
    this.phase = "settled";
    return true;
  }

  /** Settles a command that could not be spawned. @returns false when it had settled already. */
  settleFailed(): boolean {
    if (this.phase === "settled") return false;
    this.phase = "settled";
    return true;
  }

  /** How the exited command ended (see `CommandEnding`); `boxed` when it was to run in the sandbox. */
  ending(boxed: boolean): CommandEnding {
    if (this.exitStatus?.code === SETUP_FAILED && this.setupReport) {
      return { kind: "setup_failed", problem: this.setupReport, boxStep: this.setupReport.startsWith("sandbox:") };
    }
    if (boxed && !this.boxMarker.includes(BOX_STARTED) && !this.timedOutFlag && !this.abortedFlag && !this.stoppedByUs) return { kind: "box_failed" };
    return { kind: "ran" };
  }
}
