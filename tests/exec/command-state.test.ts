import { describe, expect, it } from "vitest";
import { BOX_STARTED, CommandState, SETUP_FAILED } from "@/lib/exec/command-state";

describe("CommandState", () => {
  it("settles an exited command once, and not before it exited", () => {
    const s = new CommandState();
    expect(s.settleExited()).toBe(false);
    s.exited({ code: 0, signal: null });
    expect(s.settleExited()).toBe(true);
    expect(s.settleExited()).toBe(false);
    expect(s.settleFailed()).toBe(false);
    expect(s.settled).toBe(true);
  });

  it("a spawn error settles it; a later exit does not settle it again", () => {
    const s = new CommandState();
    expect(s.settleFailed()).toBe(true);
    s.exited({ code: null, signal: "SIGKILL" });
    expect(s.exit).toEqual({ code: null, signal: "SIGKILL" });
    expect(s.settleExited()).toBe(false);
  });

  it("records a timeout and an abort independently, each as a stop by the gateway", () => {
    const s = new CommandState();
    expect([s.timedOut, s.aborted, s.weKilled]).toEqual([false, false, false]);
    s.timeOut();
    expect([s.timedOut, s.aborted, s.weKilled]).toEqual([true, false, true]);
    s.abort();
    expect([s.timedOut, s.aborted, s.weKilled]).toEqual([true, true, true]);
  });

  it("takes the first limit only, and none after the command exited", () => {
    const s = new CommandState();
    expect(s.hitLimit("processes")).toBe(true);
    expect(s.hitLimit("memory")).toBe(false);
    expect(s.killedFor).toBe("processes");
    expect(s.weKilled).toBe(true);
    const t = new CommandState();
    t.exited({ code: 0, signal: null });
    expect(t.hitLimit("memory")).toBe(false);
    expect([t.killedFor, t.weKilled]).toEqual([null, false]);
  });

  it.each([
    ["a command that ran unboxed", false, 0, "", "", "ran"],
    ["a boxed command whose box started", true, 1, "", `${BOX_STARTED}\n`, "ran"],
    ["the wrapper could not set a limit", false, SETUP_FAILED, "could not join cgroup x\n", "", "setup_failed"],
    ["the wrapper could not mount the overlay", true, SETUP_FAILED, "sandbox: the overlay could not be mounted\n", "", "setup_failed"],
    ["status 125 without a report is the command's own", false, SETUP_FAILED, "", "", "ran"],
    ["bwrap failed before the command started", true, 1, "", "", "box_failed"],
  ])("%s", (_name, boxed, code, setup, marker, kind) => {
    const s = new CommandState();
    s.reportSetup(setup);
    s.reportBox(marker);
    s.exited({ code, signal: null });
    const ending = s.ending(boxed);
    expect(ending.kind).toBe(kind);
    if (ending.kind === "setup_failed") expect(ending.boxStep).toBe(setup.startsWith("sandbox:"));
  });

  it("a boxed command the gateway stopped before its marker arrived ran (it is not a box failure)", () => {
    for (const stop of [(s: CommandState) => s.timeOut(), (s: CommandState) => s.abort(), (s: CommandState) => s.hitLimit("memory")]) {
      const s = new CommandState();
      stop(s);
      s.exited({ code: null, signal: "SIGKILL" });
      expect(s.ending(true).kind).toBe("ran");
    }
  });
});
