import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import type { Decision, PolicyVerdict } from "@/lib/policy/types";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { decideCommand } from "@/tests/policy/fixtures";

/**
 * `~` in a boxed command is the box's own HOME (lib/exec/box-home.ts, fresh for every command):
 * listing that directory itself reads nothing secret, so it is neither labelled `reads_secret`
 * nor asked about. A path under it that names a secret, any content read or recursive listing
 * of it, and every spelling of it in a command that does not run boxed (the Claude Code hook's,
 * whose HOME is the person's own) are judged as before. Nothing is executed.
 */

let fx: Fixture;
beforeAll(async () => {
  fx = await makeFixture();
});
afterAll(() => fx.cleanup());

const rules = [...DEFAULT_RULES];
const decide = (command: string, boxed: boolean) => decideCommand(fx, command, rules, fx.ws, { boxed });
const secretLabelled = (v: PolicyVerdict) => (v.risks ?? []).some((r) => r.kind === "reads_secret");

/** The HOME directory itself, in every spelling a shell gives it. */
const HOME_ITSELF = ["ls ~", "ls ~/", "ls $HOME", 'ls "$HOME"', "ls ${HOME}", 'ls "${HOME}"', "ls ~/.", "ls $HOME/", "ls -la ~", "ls -a -l ~/", "ls -d ~", "ls -- ~", "stat ~", "ls ~ notes.txt"];

/** Reads that stay as strict as before, boxed or not: [command, decision, substring of a reason]. */
const STILL_JUDGED: Array<[string, Decision, string]> = [
  ["ls ~/.ssh", "ask", "read_outside_workspace"],
  ["ls ~/.ssh/", "ask", "read_outside_workspace"],
  ["ls $HOME/.ssh", "ask", "read_outside_workspace"],
  ['ls "$HOME/.ssh"', "ask", "read_outside_workspace"],
  ["cat ~/.ssh/id_rsa", "ask", "read_outside_workspace"],
  ["cat ~/.aws/credentials", "ask", "read_outside_workspace"],
  ["cat ${HOME}/.netrc", "ask", "read_outside_workspace"],
  ["cat ~/.netrc", "ask", "read_outside_workspace"],
  ["ls ~/.cache", "ask", "read_outside_workspace"],
  ["ls ~ ~/.ssh", "ask", "/.ssh (ls)"],
  ["ls ~root", "ask", "tilde form ~root"],
  ["ls ~root/.ssh", "ask", "tilde form ~root"],
  // Content and tree readers of HOME itself.
  ["cat ~", "ask", "read_outside_workspace"],
  ["grep -r token ~", "ask", "read_outside_workspace"],
  ["ls -R ~", "ask", "read_outside_workspace"],
  ["ls -laR ~", "ask", "read_outside_workspace"],
  ["ls --recursive ~", "ask", "read_outside_workspace"],
  ["du -sh ~", "ask", "read_outside_workspace"],
  ["tree ~", "ask", "read_outside_workspace"],
  ["find ~ -name id_rsa", "ask", "read_outside_workspace"],
  ["tar cf - ~", "ask", "tar: not on the allow list"],
  // Out of HOME.
  ["ls ~/..", "ask", "read_outside_workspace"],
  ["ls /", "ask", "read_outside_workspace"],
];

describe("boxed: the box's own HOME", () => {
  it.each(HOME_ITSELF)("%j lists it: allowed, not labelled as reading a secret", async (command) => {
    const v = await decide(command, true);
    expect(v.decision, v.reasons.join("\n")).toBe("allow");
    expect(secretLabelled(v)).toBe(false);
    expect(v.reasons.join("\n")).not.toContain("read_outside_workspace");
  });

  it.each(STILL_JUDGED)("%j stays %s (%s)", async (command, decision, reason) => {
    const v = await decide(command, true);
    expect(v.decision).toBe(decision);
    expect(v.reasons.join("\n")).toContain(reason);
    if (reason === "read_outside_workspace") expect(secretLabelled(v)).toBe(true);
  });

  it("a HOME the command line changed first is not the box's", async () => {
    const v = await decide("HOME=/etc; ls ~", true);
    expect(v.decision).toBe("ask");
  });
});

describe("not boxed: as strict as before", () => {
  it.each([...HOME_ITSELF, ...STILL_JUDGED.map(([c]) => c)])("%j asks", async (command) => {
    const v = await decide(command, false);
    expect(v.decision).toBe("ask");
  });

  it.each(HOME_ITSELF.filter((c) => !c.includes("notes.txt")))("%j is still labelled as reading outside the workspace", async (command) => {
    const v = await decide(command, false);
    expect(v.reasons.join("\n")).toContain("read_outside_workspace");
    expect(secretLabelled(v)).toBe(true);
  });
});
