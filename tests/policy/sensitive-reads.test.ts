import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import type { Decision } from "@/lib/policy/types";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { decideCommand, rule } from "@/tests/policy/fixtures";

/**
 * Recursive and indirect reads of sensitive files (the files the sensitive-path rules make
 * read_file ask for) ask like `cat .env` does, in many spellings: grep's recursive options and
 * their abbreviations, ripgrep with and without hidden files, git grep, git's `REV:path` and
 * index forms, pathspecs with magic and wildcards. Trees without such files stay allowed.
 * Nothing is executed. Default rules, boxed (the sandbox would run them).
 */

let fx: Fixture;
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "pipe", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd } });

beforeAll(async () => {
  fx = await makeFixture();
  await fx.put(".env", "PASSWORD=hunter2\nSECRET=abc\n");
  await fx.put("keys/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n");
  await fx.put("keys/readme.md", "keys live here\n");
  await fx.put("src/app.ts", "export const x = 1;\n");
  await fx.put("src/lib/util.ts", "export const y = 2;\n");
  await fx.put("docs/.hidden/deploy.pem", "-----BEGIN CERTIFICATE-----\n");
  await fx.put("docs/guide.md", "guide\n");
  git(fx.ws, "init", "-q", ".");
});
afterAll(() => fx.cleanup());

/** git grep is not on the default allow list; an operator rule allows it here so the walk decides. */
const ALLOW_GIT_GREP = rule("op:git-grep", { command: "git grep *" }, "allow", 200);

async function verdict(command: string) {
  const cwd = /^\(in (\S+)\) /.exec(command);
  return decideCommand(fx, cwd ? command.slice(cwd[0].length) : command, [...DEFAULT_RULES, ALLOW_GIT_GREP], cwd ? fx.at(cwd[1]) : fx.ws, { boxed: true });
}

/** [command, decision, substrings of some reason] */
const CASES: Array<[string, Decision, string[]?]> = [
  // grep: recursive in every spelling reads .env, the key and .git.
  ["grep -r PASSWORD .", "ask", [".env: needs approval by rule default:sensitive-env", "grep -r reads it"]],
  ["grep -R PASSWORD .", "ask"],
  ["grep --recursive PASSWORD .", "ask"],
  ["grep --recur PASSWORD .", "ask"],
  ["grep --rec PASSWORD", "ask"],
  ["grep -d recurse PASSWORD .", "ask"],
  ["grep --directories=recurse PASSWORD .", "ask"],
  ["grep --directories=rec PASSWORD .", "ask"],
  ["grep -drecurse PASSWORD .", "ask"],
  ["grep -rh b3Bl .", "ask", [".env", ".git/", "keys/id_ed25519"]],
  ["grep -rn -A1 BEGIN keys", "ask", ["keys/id_ed25519: needs approval by rule default:sensitive-ssh-keys"]],
  ["grep -r -A1 BEGIN keys/", "ask", ["keys/id_ed25519"]],
  ["grep -ril secret", "ask"],
  ["egrep -r 'PASS|SECRET' .", "ask"],
  ["fgrep -r SECRET .", "ask"],
  ["grep -r --exclude-dir=.git PASSWORD .", "ask", [".env"]],
  ["grep -r BEGIN docs", "ask", ["docs/.hidden/deploy.pem: needs approval by rule default:sensitive-pem"]],
  ["(in keys) grep -r BEGIN .", "ask", ["keys/id_ed25519"]],
  ["(in keys) grep -r BEGIN", "ask", ["keys/id_ed25519"]],
  ["(in src) grep -r export .", "allow"],
  ["grep -r BEGIN .", "ask", [], ],
  ["timeout 5 grep -r x keys", "ask", ["keys/id_ed25519"]],
  // …but not when the tree holds no sensitive file, or the filters keep grep away from it.
  ["grep -r export src", "allow"],
  ["grep -rn export src/lib", "allow"],
  ["grep -r keys keys/readme.md", "allow"],
  ["grep -r --exclude=id_* BEGIN keys", "allow"],
  ["grep -r --include=*.md keys keys", "allow"],
  ["grep -r --exclude-dir=.hidden BEGIN docs", "allow"],
  ["grep PASSWORD src/app.ts", "allow"],
  ["grep -h export src/app.ts src/lib/util.ts", "allow"],
  // rg: recursive by default; hidden files and directories only with --hidden / -. / -uu.
  ["rg SECRET", "ask", ["keys/id_ed25519"]],
  ["rg b3Bl keys", "ask", ["keys/id_ed25519: needs approval by rule default:sensitive-ssh-keys", "rg reads it"]],
  ["rg --hidden SECRET docs", "ask", ["docs/.hidden/deploy.pem"]],
  ["rg -. SECRET docs", "ask", ["docs/.hidden/deploy.pem"]],
  ["rg -uu SECRET docs", "ask", ["docs/.hidden/deploy.pem"]],
  ["rg -u -u SECRET docs", "ask", ["docs/.hidden/deploy.pem"]],
  ["rg --unrestricted --unrestricted SECRET docs", "ask", ["docs/.hidden/deploy.pem"]],
  ["rg -uuu SECRET docs", "ask", ["docs/.hidden/deploy.pem"]],
  ["rg --hidden SECRET", "ask", [".env"]],
  ["rg SECRET docs", "allow"],
  ["rg -u SECRET docs", "allow"],
  ["rg export src", "allow"],
  ["rg --files", "allow"],
  ["rg SECRET .env", "ask", [".env: needs approval"]],
  // git grep walks the working tree (not .git).
  ["git grep PASSWORD", "ask", [".env", "git grep reads it"]],
  ["git grep -n BEGIN -- keys", "ask", ["keys/id_ed25519"]],
  ["git -C src grep export", "allow"],
  // git REV:path and index forms name a file whose content git prints.
  ["git show :.env", "ask", [".env: needs approval by rule default:sensitive-env"]],
  ["git show @:.env", "ask", [".env"]],
  ["git show :0:.env", "ask", [".env"]],
  ["git show :2:.env", "ask", [".env"]],
  ["git show HEAD:.env", "ask", [".env"]],
  ["git show HEAD~1:.env", "ask", [".env"]],
  ["git show HEAD^2:./.env", "ask", [".env"]],
  ["git show 'main@{1}:.env'", "ask", [".env"]],
  ["git show 4b825dc642cb6eb9a060e54bf8d69288fbee4904:keys/id_ed25519", "ask", ["keys/id_ed25519"]],
  ["git show ':/initial commit:.env'", "ask", [".env"]],
  ["git cat-file -p HEAD:.env", "ask", [".env"]],
  ["git cat-file blob :.env", "ask", [".env"]],
  ["git rev-parse HEAD:.env", "ask", [".env"]],
  ["git show HEAD:src/app.ts", "allow"],
  ["git show :src/app.ts", "allow"],
  ["git show ':/fix the build'", "allow"],
  // Pathspecs: after `--`, bare, with magic, with wildcards.
  ["git log -p -- .env", "ask", [".env"]],
  ["git log -p .env", "ask", [".env"]],
  ["git log --follow -p -- keys/id_ed25519", "ask", ["keys/id_ed25519"]],
  ["git diff -- .env", "ask", [".env"]],
  ["git diff HEAD~1 -- .env", "ask", [".env"]],
  ["git blame .env", "ask", [".env"]],
  ["git log -p -- ':(top).env'", "ask", [".env"]],
  ["git log -p -- ':/.env'", "ask", [".env"]],
  ["git log -p -- ':(literal).env'", "ask", [".env"]],
  ["git log -p -- '*.env'", "ask", [".env"]],
  ["git log -p -- '.en?'", "ask", [".env"]],
  ["git log -p -- 'keys/*'", "ask", ["keys/id_ed25519"]],
  ["git log -p -- ':(glob)**/id_*'", "ask", ["keys/id_ed25519"]],
  ["git log -p -- 'src/*.ts'", "allow"],
  ["git log -p -- src/app.ts", "allow"],
  ["git log --oneline -5", "allow"],
  ["git show HEAD --stat", "allow"],
  ["git diff HEAD~1 HEAD -- src", "allow"],
];

describe("recursive and indirect reads of sensitive files", () => {
  it.each(CASES)("%s → %s", async (command, decision, reasons) => {
    const v = await verdict(command);
    expect({ command, decision: v.decision }).toEqual({ command, decision });
    for (const r of reasons ?? []) expect(v.reasons.join("\n")).toContain(r);
    if (decision !== "allow") expect(v.risks?.some((r) => r.kind === "reads_secret") || v.reasons.some((r) => /unclassifiable|by rule default:sensitive/.test(r))).toBe(true);
  });

  it("asks when the tree is too large to check", async () => {
    const big = await makeFixture();
    try {
      const names = Array.from({ length: 20_100 }, (_, i) => `f${i}`);
      await big.put("many/f", "");
      execFileSync("xargs", ["touch"], { cwd: big.at("many"), input: names.join("\n") });
      const v = await decideCommand(big, "grep -r x many", [...DEFAULT_RULES], big.ws, { boxed: true });
      expect(v.decision).toBe("ask");
      expect(v.reasons.join("\n")).toMatch(/more than 20000 entries/);
    } finally {
      await big.cleanup();
    }
  });
});
