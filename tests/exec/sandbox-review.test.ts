import { describe, expect, it } from "vitest";
import { reviewSandbox } from "@/lib/gateway/contexts";
import type { PolicyInput, PolicyVerdict } from "@/lib/policy/types";

/**
 * The gateway's floor under the policy for commands: never unboxed silently because the sandbox
 * is broken, never the network without a reviewer; deny stays deny; reasons lead the list.
 */
const input = (extra: Partial<PolicyInput>): PolicyInput => ({ tool: "run_command", risk: "exec", paths: [], boxed: true, ...extra });
const allow: PolicyVerdict = { decision: "allow", rule: { id: "default:read-only", note: null }, reasons: ["cat: read-only"] };

describe("reviewSandbox", () => {
  it("leaves a boxed call without grants as the policy decided", () => {
    expect(reviewSandbox(allow, input({}))).toBe(allow);
  });
  it("an allowed call that would run unboxed because the sandbox is broken asks, with the reason first", () => {
    const v = reviewSandbox(allow, input({ boxed: false, sandboxProblem: "bubblewrap (bwrap) not found on PATH. Fix: apt-get install -y bubblewrap" }));
    expect(v.decision).toBe("ask");
    expect(v.reasons[0]).toMatch(/^runs unboxed, with the gateway's own rights: the sandbox is unavailable \(bubblewrap \(bwrap\) not found/);
    expect(v.reasons).toContain("cat: read-only");
  });
  it("the operator's opt-out and the hook door (boxed: false, no problem) are the policy's call", () => {
    expect(reviewSandbox(allow, input({ boxed: false }))).toBe(allow);
  });
  it("asking for the network always asks; an ask keeps asking with the grant first; deny stays deny", () => {
    expect(reviewSandbox(allow, input({ grants: { network: true } }))).toMatchObject({ decision: "ask", reasons: [expect.stringMatching(/asks for network access/), "cat: read-only"] });
    const ask: PolicyVerdict = { ...allow, decision: "ask", reasons: ["npm: not read-only"] };
    expect(reviewSandbox(ask, input({ grants: { network: true } })).reasons[0]).toMatch(/network/);
    const deny: PolicyVerdict = { ...allow, decision: "deny", reasons: ["rm -rf /"] };
    expect(reviewSandbox(deny, input({ grants: { network: true }, sandboxProblem: "x" }))).toBe(deny);
  });
});
