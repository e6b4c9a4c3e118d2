import { describe, expect, it } from "vitest";
import { matchCommandPattern, parseCommandPattern, type Argv, type PatternMatch } from "@/lib/policy/command-pattern";

/** argv from words: `?x` is a glob token, `…` a run-time token; a trailing `+` means open-ended (xargs). */
function argv(spec: string): Argv {
  const words = spec.split(" ").filter(Boolean);
  const openEnded = words[words.length - 1] === "+";
  const tokens = (openEnded ? words.slice(0, -1) : words).map((w) =>
    w === "…" ? { value: null, glob: false } : w.startsWith("?") ? { value: w.slice(1), glob: true } : { value: w, glob: false },
  );
  return { tokens, openEnded };
}

describe("parseCommandPattern", () => {
  it.each([
    ["git log *", { words: ["git", "log"], rest: true }],
    ["git log [args]", { words: ["git", "log"], rest: true }],
    ["cat [paths]", { words: ["cat"], rest: true }],
    ["git status", { words: ["git", "status"], rest: false }],
    ["  npm   run  test  ", { words: ["npm", "run", "test"], rest: false }],
    ["docker * ps", { words: ["docker", "*", "ps"], rest: false }],
    ["", { words: [], rest: false }],
  ])("%s", (pattern, expected) => {
    expect(parseCommandPattern(pattern)).toEqual(expected);
  });
});

describe("matchCommandPattern", () => {
  const cases: Array<[pattern: string, argv: string, byBasename: boolean, expected: PatternMatch]> = [
    ["git log *", "git log", false, "match"],
    ["git log *", "git log -1 --oneline", false, "match"],
    ["git log *", "git logout", false, "no"],
    ["git log *", "git", false, "no"],
    ["git status", "git status", false, "match"],
    ["git status", "git status -s", false, "no"],
    ["docker * ps", "docker -H x ps", false, "no"],
    ["docker * ps", "docker x ps", false, "match"],
    ["rm *", "/bin/rm -rf x", true, "match"],
    ["rm *", "/bin/rm -rf x", false, "no"],
    ["rm *", "./rm x", true, "match"],
    ["sh *", "dash -c x", true, "match"],
    ["bash *", "/usr/bin/zsh", true, "match"],
    ["sh *", "dash -c x", false, "no"],
    ["git push *", "git ?p*sh origin", true, "maybe"],
    ["git push *", "git … origin", true, "maybe"],
    ["rm *", "rm …", true, "match"],
    ["cat *", "cat ?*.txt", false, "match"],
    ["ls", "ls ?*", false, "no"],
    ["grep x *", "grep + ", false, "maybe"],
    ["grep *", "grep x +", false, "match"],
    ["git status", "git status +", false, "maybe"],
    ["git log *", "?g* log", true, "maybe"],
    ["", "ls", false, "no"],
  ];
  it.each(cases)("%s vs %s (basename %s) → %s", (pattern, spec, byBasename, expected) => {
    expect(matchCommandPattern(parseCommandPattern(pattern), argv(spec), byBasename)).toBe(expected);
  });
});
