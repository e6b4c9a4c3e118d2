import { describe, expect, it } from "vitest";
import { analyzeSedScript, type SedEffects } from "@/lib/policy/sed-script";

const pure: SedEffects = { writes: [], reads: [], executes: false, understood: true };

describe("analyzeSedScript", () => {
  const cases: Array<[string, Partial<SedEffects>]> = [
    ["p", {}],
    ["1,5p", {}],
    ["/foo/,/bar/{p;=}", {}],
    ["\\%a/b%p", {}],
    ["$!N;P;D", {}],
    ["s/a/b/g", {}],
    ["s|a|b|2p", {}],
    ["s/a\\/b/c/", {}],
    ["y/abc/xyz/", {}],
    ["1~2d", {}],
    ["0,/x/d", {}],
    ["/x/,+2d", {}],
    ["a hello", {}],
    ["i\\\nline one\\\nline two", {}],
    [":a;N;ba", {}],
    ["q5", {}],
    ["# comment\np", {}],
    ["w out.txt", { writes: ["out.txt"] }],
    ["1w ../proj-out/escape.txt", { writes: ["../proj-out/escape.txt"] }],
    ["W a;b", { writes: ["a;b"] }],
    ["p;W x", { writes: ["x"] }],
    ["s/a/b/w /tmp/x", { writes: ["/tmp/x"] }],
    ["s/a/b/gw out", { writes: ["out"] }],
    ["s/x/y/;e touch pwned", { executes: true }],
    ["1e touch pwned", { executes: true }],
    ["s/a/b/e", { executes: true }],
    ["r /etc/passwd", { reads: ["/etc/passwd"] }],
    ["/x/R other.txt", { reads: ["other.txt"] }],
    ["k", { understood: false }],
    ["s/a/b", { understood: false }],
    ["w", { understood: false }],
    ["p x", { understood: false }],
  ];
  it.each(cases)("%j", (script, expected) => {
    expect(analyzeSedScript(script)).toEqual({ ...pure, ...expected });
  });
});
