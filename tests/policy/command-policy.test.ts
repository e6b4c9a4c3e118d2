import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import type { Decision, PolicyRuleData } from "@/lib/policy/types";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { decideCommand, policyP1, rule, sentinelsPresent } from "@/tests/policy/fixtures";

/**
 * Other spellings of the classes behind C20, C21 and C23: every way of hiding a command (lists,
 * groups, loops, functions, substitutions in redirect targets, wrappers, nested shells, quoting,
 * lookalikes, aliases, heredocs) and every way of writing a file (redirect operators, tee, sed,
 * git --output, find -delete, symlinks, cd). Policy P1 unless stated; nothing is executed.
 */

interface Case {
  command: string;
  decision: Decision;
  /** Each entry is a prefix of some reason. */
  reasons?: string[];
  /** [part text, decision] in order, when given. */
  parts?: Array<[string, Decision]>;
}

let fx: Fixture;
beforeEach(async () => {
  fx = await makeFixture();
  await fs.mkdir(fx.at("sub"));
  await fs.symlink(path.join(fx.root, "proj-out"), fx.at("ext"));
  await fs.symlink(path.join(fx.root, "proj-out", "created.txt"), fx.at("dangle"));
});
afterEach(async () => {
  await fx.cleanup();
});

async function check(c: Case, rules: PolicyRuleData[]): Promise<void> {
  const v = await decideCommand(fx, c.command, rules);
  expect(v.decision, JSON.stringify(v, null, 1)).toBe(c.decision);
  for (const r of c.reasons ?? []) {
    const want = r.replaceAll("$ROOT", fx.root);
    expect(v.reasons.some((x) => x.startsWith(want)), `reason "${want}" in ${JSON.stringify(v.reasons)}`).toBe(true);
  }
  if (c.parts) expect(v.parts?.map((p) => [p.text, p.decision])).toEqual(c.parts);
  expect(sentinelsPresent(fx)).toEqual([]);
}

describe("hidden commands are found wherever they are (P1)", () => {
  const cases: Case[] = [
    { command: "git status\r\nrm x", decision: "deny", reasons: ["rm:", "unclassifiable: control characters"] },
    { command: "git status;rm x", decision: "deny", reasons: ["rm:"] },
    { command: "git status&&rm x", decision: "deny", reasons: ["rm:"] },
    { command: "{ git status; rm x; }", decision: "deny", reasons: ["rm:"] },
    { command: "(git status; rm x)", decision: "deny", reasons: ["rm:"] },
    { command: "git status | rm x", decision: "deny", reasons: ["rm:"] },
    { command: "true && (false || { rm x; })", decision: "deny", reasons: ["rm:"] },
    { command: "! rm x", decision: "deny", reasons: ["rm:"] },
    { command: "if git status; then rm x; fi", decision: "deny", reasons: ["rm:"] },
    { command: "if false; then ls; elif true; then ls; else curl x; fi", decision: "deny", reasons: ["curl:"] },
    { command: "for f in a b; do rm $f; done", decision: "deny", reasons: ["rm:"] },
    { command: "for f in $(curl x); do echo $f; done", decision: "deny", reasons: ["curl:"] },
    { command: "for ((i=0; i<3; i++)); do ls; done", decision: "ask", reasons: ["unclassifiable:"] },
    { command: "while false; do wget x; done", decision: "deny", reasons: ["wget:"] },
    { command: "until git status; do ls; done", decision: "allow" },
    { command: "case a in a) rm x;; *) ls;; esac", decision: "deny", reasons: ["rm:"] },
    { command: "case $(touch pwned) in *) ls;; esac", decision: "ask", reasons: ["touch:"] },
    { command: "f() { rm x; }; f", decision: "deny", reasons: ["rm:"] },
    { command: "ls() { touch pwned; }; ls", decision: "ask", reasons: ["touch:"] },
    { command: "echo x > $(touch pwned)", decision: "ask", reasons: ["touch:", "unclassifiable: redirect target"] },
    { command: 'echo x > "$(rm y)"', decision: "deny", reasons: ["rm:"] },
    { command: "cat < $(curl x)", decision: "deny", reasons: ["curl:"] },
    { command: "cat <<< $(curl x)", decision: "deny", reasons: ["curl:"] },
    { command: "echo ${x:-$(touch pwned)}", decision: "ask", reasons: ["touch:"] },
    { command: "echo $((1 + $(touch pwned)))", decision: "ask", reasons: ["touch:"] },
    { command: "(( x = $(touch pwned) ))", decision: "ask", reasons: ["touch:"] },
    { command: "[[ $(touch pwned) == x ]]", decision: "ask", reasons: ["touch:"] },
    { command: "a=(1 $(curl x))", decision: "deny", reasons: ["curl:"] },
    { command: "export B=$(curl x)", decision: "deny", reasons: ["curl:"] },
    { command: "ls `echo \\`touch pwned\\``", decision: "ask", reasons: ["touch:"] },
    { command: 'echo "a `rm x` b"', decision: "deny", reasons: ["rm:"] },
    { command: "cat <<EOF\n$(touch pwned)\nEOF", decision: "ask", reasons: ["unclassifiable: a heredoc runs a command substitution", "touch:"] },
    { command: "cat <<-EOF\n\t`rm x`\n\tEOF", decision: "deny", reasons: ["rm:"] },
    { command: "cat <<'EOF'\n$(touch pwned)\nEOF", decision: "allow" },
    { command: "cat <<EOF | sh\nx\nEOF", decision: "deny", reasons: ["sh:"] },
    { command: "cat <<EOF && rm y\nx\nEOF", decision: "deny", reasons: ["rm:"] },
    { command: "ls # && rm x", decision: "allow" },
    { command: "ls $(", decision: "ask", reasons: ["unclassifiable: syntax"] },
    { command: "   ", decision: "ask", reasons: ["no command found"] },
    { command: "ls\\\n -la", decision: "allow" },
    { command: "r\\\nm x", decision: "ask", reasons: ["unclassifiable: line continuation inside a word"] },
  ];
  it.each(cases)("$command", (c) => check(c, policyP1()));
});

describe("denied commands in any spelling (P1)", () => {
  const denied = ["r\\m x", '"r"m x', "'rm' x", "$'\\x72m' x", '$"rm" x', "\\rm x", "r''m x", "/bin/rm x", "./rm x", "/usr/bin/curl x", "command rm x", "builtin rm x", "exec rm x", "env rm x", "env -i FOO=1 rm x", "nice -n 5 rm x", "nohup rm x", "time rm x", "time -p rm x", "timeout 5 curl x", "timeout -k 1 -s KILL 5 curl x", "stdbuf -oL rm x", "ionice -c 3 rm x", "sudo ls", "sudo -u x ls", "sudo -E -u root rm x", "busybox rm x", "cat list | xargs rm", "xargs -I{} rm {} < list", "find . -exec rm {} \\;", "find . -execdir curl x {} +", "bash -c 'rm -rf x'", "sh -c ls", "/bin/bash -lc 'git status'", "bash -c \"curl x | sh\"", "dash -c ls", "eval 'rm x'", "trap 'rm x' EXIT", "exec 3< <(curl x)", "setsid rm x", "coproc rm x"];
  it.each(denied)("%s", (command) => check({ command, decision: "deny" }, policyP1()));

  it("sudo and the command it runs are two parts", () =>
    check({ command: "sudo -u x ls", decision: "deny", parts: [["sudo -u x ls", "deny"], ["ls", "allow"]] }, policyP1()));

  it("bash -c: the shell and the inner command are both classified", () =>
    check({ command: "bash -c 'rm -rf x'", decision: "deny", reasons: ["bash:", "rm:"], parts: [["bash -c 'rm -rf x'", "deny"], ["rm -rf x", "deny"]] }, policyP1()));
});

describe("names that only look allowed ask (P1)", () => {
  const cases: Case[] = [
    { command: "$(echo rm) x", decision: "ask", reasons: ["unclassifiable: command name is not static"] },
    { command: "a=rm; $a x", decision: "ask", reasons: ["unclassifiable:"] },
    { command: "a=1; $a", decision: "ask", reasons: ["unclassifiable:"] },
    { command: "${IFS}ls", decision: "ask", reasons: ["unclassifiable:"] },
    { command: "l?", decision: "ask", reasons: ["unclassifiable: command name is not static"] },
    { command: "{ls,-la}", decision: "ask", reasons: ["unclassifiable:"] },
    { command: "\uff52\uff4d x", decision: "ask", reasons: ["\uff52\uff4d: not on the allow list"] },
    { command: "ls\u200b", decision: "ask", reasons: ["ls\\u{200b}: not on the allow list"] },
    { command: "rm\u00a0x", decision: "ask", reasons: ["rm\\u{a0}x: not on the allow list"] },
    { command: "\u0435cho x", decision: "ask" },
    { command: "git log\u2028rm x", decision: "ask" },
    { command: "alias ls='rm -rf x'; ls", decision: "ask", reasons: ["unclassifiable: alias definitions"] },
    { command: "shopt -s expand_aliases\nalias ls='touch pwned'\nls", decision: "ask", reasons: ["unclassifiable: alias definitions"] },
    { command: "eval ls", decision: "ask", reasons: ["unclassifiable: eval"] },
    { command: ". ./script.sh", decision: "ask", reasons: [".: not on the allow list"] },
    { command: "PATH=. ls", decision: "ask", reasons: ["sets PATH"] },
    { command: "LD_PRELOAD=./x.so ls", decision: "ask", reasons: ["sets LD_PRELOAD"] },
    { command: "GIT_PAGER=sh git log", decision: "ask", reasons: ["sets GIT_PAGER"] },
    { command: "LC_ALL=C ls", decision: "allow" },
    { command: "env LC_ALL=C TZ=UTC ls", decision: "allow" },
    { command: "env -i ls", decision: "allow" },
    { command: "env -S 'rm x'", decision: "ask", reasons: ["unclassifiable: env -S"] },
    { command: "PATH=.; ls", decision: "ask", reasons: ["changes PATH"] },
    { command: "IFS=x; ls", decision: "ask", reasons: ["changes IFS"] },
    { command: "x=1; ls", decision: "allow" },
    { command: "timeout 5 ls", decision: "allow" },
    { command: "git logout", decision: "ask" },
    { command: "git log -1", decision: "allow" },
    { command: "git status -s", decision: "ask", reasons: ["git status: not on the allow list"] },
    { command: "git -C sub --no-pager log -1", decision: "allow" },
    { command: "git -c core.pager='sh -c x' log", decision: "ask", reasons: ["git -c:"] },
    { command: "git --exec-path=. log", decision: "ask", reasons: ["git --exec-path:"] },
    { command: "echo {a,b}", decision: "ask", reasons: ["unclassifiable: brace expansion"] },
    { command: "echo $HOME ~ \"$PATH\"", decision: "allow" },
    { command: "echo $RANDOM", decision: "ask", reasons: ["unclassifiable: $RANDOM"] },
    { command: "echo $1", decision: "ask", reasons: ["unclassifiable:"] },
    // `*` is expanded as bash will: it names the symlinks ext and dangle, which lead outside.
    { command: "cat *", decision: "ask", reasons: ["read_outside_workspace: $ROOT/proj-out"] },
    { command: "sed -n p *", decision: "ask", reasons: ["read_outside_workspace: $ROOT/proj-out"] },
    { command: "cat s*", decision: "allow" },
    { command: "ls | xargs grep x", decision: "ask", reasons: ["xargs: not on the allow list"] },
  ];
  it.each(cases)("$command", (c) => check(c, policyP1()));
});

describe("file effects (P1)", () => {
  const cases: Case[] = [
    { command: "echo x >| ../x", decision: "deny", reasons: ["write_outside_workspace: $ROOT/x"] },
    { command: "echo x &> ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "echo x &>> ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "echo x >& ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "echo x 2> ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "echo x 2>&1 >&2", decision: "allow" },
    { command: "echo x >&-", decision: "allow" },
    { command: "echo x > /dev/stderr 2>/dev/stdout", decision: "allow" },
    { command: "cat notes.txt < /dev/null", decision: "allow" },
    { command: "cat /dev/zero", decision: "ask", reasons: ["endless_read: /dev/zero"] },
    { command: "grep x < /dev/urandom", decision: "ask", reasons: ["endless_read: /dev/urandom"] },
    { command: "head -c 10 /dev/random", decision: "ask", reasons: ["endless_read: /dev/random"] },
    { command: "exec 3> ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "> ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "{ echo x; } > ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "(echo x) >> ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "while false; do ls; done > ../x", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "git status | cat > /tmp/x", decision: "deny", reasons: ["write_outside_workspace: /tmp/x"] },
    { command: "echo x > ext/new.txt", decision: "deny", reasons: ["write_outside_workspace: $ROOT/proj-out/new.txt"] },
    { command: "echo x > ext/../x", decision: "deny", reasons: ["write_outside_workspace: $ROOT/x"] },
    { command: "echo x > dangle", decision: "deny", reasons: ["write_outside_workspace: $ROOT/proj-out/created.txt"] },
    { command: "echo x > sub/../notes2.txt", decision: "ask", reasons: ["write_in_workspace: notes2.txt"] },
    { command: "echo x > /dev/sda", decision: "deny", reasons: ["write_outside_workspace: /dev/sda"] },
    { command: "echo x > $ROOT/proj/inside.txt", decision: "ask", reasons: ["write_in_workspace: inside.txt"] },
    { command: "echo x > \"$HOME\"/.profile", decision: "deny", reasons: ["write_outside_workspace: $ROOT/homes/"] },
    { command: "echo x > ~root/.bashrc", decision: "ask", reasons: ["unclassifiable: redirect target"] },
    { command: "echo x > $PWD/x", decision: "ask", reasons: ["unclassifiable: redirect target"] },
    { command: "cat notes.txt | tee -a ok.txt ../proj-out/escape.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "cp notes.txt ../proj-out/", decision: "deny", reasons: ["write_outside_workspace: $ROOT/proj-out"] },
    { command: "cp -t ../proj-out notes.txt", decision: "deny", reasons: ["write_outside_workspace: $ROOT/proj-out"] },
    { command: "mv ../proj-out/secret.txt .", decision: "deny", reasons: ["write_outside_workspace: $ROOT/proj-out/secret.txt"] },
    { command: "ln -s /etc/passwd ../proj-out/l", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "dd if=notes.txt of=../proj-out/escape.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "touch ../pwned", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "touch pwned", decision: "ask", reasons: ["touch: not on the allow list", "write_in_workspace: pwned"] },
    { command: "sort -o ../x notes.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "sort --out=../x notes.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "git log --output=../proj-out/escape.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "git log --out x", decision: "ask", reasons: ["write_in_workspace: x"] },
    { command: "git -C sub log --output=../../x", decision: "deny", reasons: ["write_outside_workspace: $ROOT/x"] },
    { command: "sed -n 's/a/b/w ../proj-out/escape.txt' notes.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "sed -n 'p;W ../x' notes.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "sed -n -e p -e 'w ../x' notes.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "sed -n --expression='1w ../x' notes.txt", decision: "deny", reasons: ["write_outside_workspace:"] },
    { command: "sed -n 's/a/b/e' notes.txt", decision: "ask", reasons: ["sed e:"] },
    { command: "sed -n 's/x/y/;e touch pwned' notes.txt", decision: "ask", reasons: ["sed e:"] },
    { command: "sed -n 'w /dev/stdout' notes.txt", decision: "allow" },
    { command: "sed -n --sandbox 'w x' notes.txt", decision: "allow" },
    { command: "sed -n 1p notes.txt", decision: "allow" },
    { command: "sed -n '/a/,/b/{p;=}' notes.txt", decision: "allow" },
    { command: "sed -n 'r /etc/passwd' notes.txt", decision: "ask", reasons: ["read_outside_workspace: /etc/passwd"] },
    { command: "sed -n -f script.sed notes.txt", decision: "ask", reasons: ["sed -f:"] },
    { command: "sed -n -i p notes.txt", decision: "ask", reasons: ["write_in_workspace: notes.txt"] },
    { command: "sed -n 'k' notes.txt", decision: "ask", reasons: ["sed: script not understood"] },
    { command: "cat ../proj-out/secret.txt", decision: "ask", reasons: ["read_outside_workspace: $ROOT/proj-out/secret.txt"] },
    { command: "cat ext/secret.txt", decision: "ask", reasons: ["read_outside_workspace: $ROOT/proj-out/secret.txt"] },
    { command: "cat < ../proj-out/secret.txt", decision: "ask", reasons: ["read_outside_workspace:"] },
    { command: "cat /etc/passwd", decision: "ask", reasons: ["read_outside_workspace: /etc/passwd"] },
    { command: "cat /proc/1/environ", decision: "ask", reasons: ["cat: reads a process environment"] },
    { command: "grep -r TOP ..", decision: "ask", reasons: ["read_outside_workspace:"] },
    { command: "grep -e TOP -r ../proj-out", decision: "ask", reasons: ["read_outside_workspace:"] },
    { command: "grep -r '/etc/passwd' .", decision: "allow" },
    { command: "ls ..", decision: "ask", reasons: ["read_outside_workspace:"] },
    { command: "git -C .. log", decision: "ask", reasons: ["read_outside_workspace:"] },
    { command: "cat notes.txt sub/../notes.txt", decision: "allow" },
  ];
  it.each(cases)("$command", (c) => check(c, policyP1()));
});

describe("the working directory follows cd (C23-5)", () => {
  const cd = [rule("extra:cd", { command: "cd [args]" }, "allow")];
  const cases: Case[] = [
    { command: "cd .. && echo x > proj-out/escape.txt", decision: "deny", reasons: ["write_outside_workspace: $ROOT/proj-out/escape.txt"] },
    { command: "cd ..; echo x > proj-out/escape.txt", decision: "deny" },
    { command: "cd sub && echo x > ../../x", decision: "deny", reasons: ["write_outside_workspace: $ROOT/x"] },
    // If `cd missing` fails, the write happens in the workspace root: ../x is outside.
    { command: "cd missing; echo x > ../x", decision: "deny", reasons: ["write_outside_workspace: $ROOT/x"] },
    { command: "cd sub && echo x > ../x", decision: "ask", reasons: ["write_in_workspace: x"] },
    { command: "cd .. || echo x > ../x", decision: "deny" },
    { command: "cd ext && echo x > f", decision: "deny", reasons: ["write_outside_workspace: $ROOT/proj-out/f"] },
    { command: "cd .. && ls", decision: "ask", reasons: ["runs outside the workspace: $ROOT"] },
    { command: "cd / && cat etc/passwd", decision: "ask", reasons: ["runs outside the workspace: /"] },
    { command: "cd && echo x > .bashrc", decision: "deny", reasons: ["write_outside_workspace: $ROOT/homes/"] },
    { command: "(cd ..) && echo x > ../x", decision: "deny", reasons: ["write_outside_workspace: $ROOT/x"] },
    { command: "(cd .. && ls) ; ls", decision: "ask", parts: [["cd ..", "allow"], ["ls", "ask"], ["ls", "allow"]] },
    { command: "cd $(echo ..) && echo x > f", decision: "ask", reasons: ["unclassifiable:"] },
    { command: "if true; then cd ..; fi; echo x > f", decision: "ask", reasons: ["unclassifiable: f is relative"] },
    { command: "f() { cd ..; }; f; echo x > f", decision: "ask", reasons: ["unclassifiable: f is relative"] },
    { command: "pushd .. && echo x > proj-out/escape.txt", decision: "deny" },
    { command: "builtin cd .. && echo x > proj-out/escape.txt", decision: "deny" },
    { command: "CDPATH=/ cd tmp && echo x > f", decision: "ask" },
  ];
  it.each(cases)("$command", (c) => check(c, policyP1(cd)));
});

describe("default rules", () => {
  const rules = [...DEFAULT_RULES];
  const cases: Case[] = [
    { command: "ls -la", decision: "allow" },
    { command: "git status", decision: "allow" },
    { command: "git status -s && git diff --stat && git log -5 --oneline && git show HEAD", decision: "allow" },
    { command: "cat notes.txt | head -5 | wc -l", decision: "allow" },
    { command: "grep -rn TODO . | tail -20", decision: "allow" },
    { command: "rg --files | sort", decision: "ask", reasons: ["sort: not on the allow list"] },
    { command: "rg --pre cat x", decision: "ask", reasons: ["rg --pre:"] },
    { command: "find . -name '*.ts' -type f", decision: "allow" },
    // No file matches *.ts, so bash passes the word as written (nullglob is off).
    { command: "find . -name *.ts", decision: "allow" },
    { command: "find . -delete", decision: "ask", reasons: ["find -delete:"] },
    { command: "find / -delete", decision: "deny", reasons: ["write_outside_workspace: /"] },
    { command: "find . -exec cat {} +", decision: "ask", reasons: ["find -exec:"], parts: [["find . -exec cat {} +", "ask"], ["cat …", "allow"]] },
    { command: "find . -fprint ../proj-out/escape.txt", decision: "deny" },
    { command: "sed -n 1,5p notes.txt", decision: "allow" },
    { command: "sed 1,5p notes.txt", decision: "ask" },
    { command: "stat notes.txt && file notes.txt && du -sh . && tree -L 2", decision: "allow" },
    { command: "tree -o ../x", decision: "deny" },
    { command: "file -C -m magic", decision: "ask", reasons: ["file -C:"] },
    { command: "which node && pwd && true && echo ok", decision: "allow" },
    { command: "npm test", decision: "ask", reasons: ["npm test: not on the allow list"] },
    { command: "bash -c 'ls'", decision: "ask", parts: [["bash -c 'ls'", "ask"], ["ls", "allow"]] },
    { command: 'bash -c "$X"', decision: "ask", parts: [['bash -c "$X"', "ask"]] },
    { command: "cat .env", decision: "ask", reasons: [".env: needs approval by rule default:sensitive-env"] },
    { command: "grep -r KEY config/.env.local", decision: "ask", reasons: ["config/.env.local:"] },
    { command: "cat .git/config", decision: "ask", reasons: [".git/config:"] },
    { command: "cat certs/server.pem", decision: "ask" },
    { command: "printenv", decision: "ask", reasons: ["printenv: prints the environment"] },
    { command: "env", decision: "ask", reasons: ["env: prints the environment"] },
    { command: "export", decision: "ask", reasons: ["export: prints the environment"] },
    { command: "curl https://example.com", decision: "ask" },
    // Reads that escape through git or through symlinks met while recursing (found by a user trial).
    { command: "git diff --no-index /etc/shadow notes.txt", decision: "ask", reasons: ["git diff --no-index:"] },
    { command: "git diff --stat --no-index a b", decision: "ask", reasons: ["git diff --no-index:"] },
    { command: "git grep --no-index x", decision: "ask", reasons: ["git grep --no-index:"] },
    { command: "grep -R root .", decision: "ask", reasons: ["grep: follows symlinks"] },
    { command: "grep -rRaohP '(?<=TOKEN=).{15}' .", decision: "ask", reasons: ["grep: follows symlinks"] },
    { command: "grep --dereference-recursive -h root .", decision: "ask", reasons: ["grep: follows symlinks"] },
    { command: "rg -L root", decision: "ask", reasons: ["rg: follows symlinks"] },
    { command: "find -L . -name x", decision: "ask", reasons: ["find -L: follows symlinks"] },
    { command: "find . -follow -name x", decision: "ask", reasons: ["find -follow: follows symlinks"] },
    { command: "du -L -sh .", decision: "ask", reasons: ["du: follows symlinks"] },
    { command: "tree -l", decision: "ask", reasons: ["tree: follows symlinks"] },
    { command: "ls -RL", decision: "ask", reasons: ["ls: follows symlinks"] },
    { command: "cat /proc/1/./environ", decision: "ask", reasons: ["cat: reads a process environment (/proc/1/./environ)"] },
  ];
  it.each(cases)("$command", (c) => check(c, rules));
});

describe("rule semantics for commands", () => {
  it("an allow rule for printenv cannot lift the built-in environment check", () =>
    check({ command: "printenv", decision: "ask", reasons: ["printenv: prints the environment"] }, [rule("op:printenv", { command: "printenv *" }, "allow")]));

  it("a deny rule matches by basename, an allow rule needs the exact word", async () => {
    await check({ command: "/usr/bin/git status", decision: "ask" }, policyP1());
    await check({ command: "/usr/bin/curl x", decision: "deny" }, policyP1());
  });

  it("a deny rule that a glob may match asks; a glob that names a file is that file", async () => {
    const rules = [rule("op:git", { command: "git *" }, "allow"), rule("op:push", { command: "git push *" }, "deny")];
    await check({ command: "set -f; git p*sh origin", decision: "ask", reasons: ["git p*sh: may match deny rule op:push"] }, rules);
    await fs.writeFile(fx.at("push"), "");
    await check({ command: "git p*sh origin", decision: "deny", reasons: ["git push: denied by rule op:push"] }, rules);
  });

  it("a tool-wide deny rule denies every part", () =>
    check({ command: "ls", decision: "deny", reasons: ["ls: denied by rule op:no-shell"] }, [...policyP1(), rule("op:no-shell", {}, "deny")]));

  it("a tool-wide allow rule still leaves the built-in checks", async () => {
    const yolo = [rule("op:yolo", { tool: "*" }, "allow")];
    await check({ command: "npm test", decision: "ask", reasons: ["unboxed: npm test is allowed by a rule"] }, yolo);
    expect((await decideCommand(fx, "npm test", yolo, fx.ws, { boxed: true })).decision).toBe("allow");
    await check({ command: "echo x > ../x", decision: "deny" }, yolo);
    await check({ command: "echo x > x", decision: "ask" }, yolo);
  });

  it("disabled rules are skipped", () => check({ command: "rm x", decision: "ask" }, [{ ...rule("op:rm", { command: "rm *" }, "deny"), enabled: false }]));

  it("rules of other tools are ignored", () => check({ command: "ls", decision: "ask" }, [rule("op:ls", { tool: "read_file", command: "ls *" }, "allow")]));

  it("a path rule asks for commands touching the path but never allows", async () => {
    const rules = [...policyP1(), rule("op:secrets", { tool: "*", pathGlob: "secrets/**" }, "deny"), rule("op:all", { tool: "*", pathGlob: "**" }, "allow")];
    await check({ command: "cat secrets/a.txt", decision: "deny", reasons: ["secrets/a.txt: denied by rule op:secrets"] }, rules);
    await check({ command: "touch other", decision: "ask" }, rules);
  });

  it("records the deciding rule on the verdict and on each part", async () => {
    const v = await decideCommand(fx, "ls && rm x", policyP1());
    expect(v.rule?.id).toBe("p1:deny-rm");
    expect(v.parts?.map((p) => p.rule?.id)).toEqual(["p1:ls", "p1:deny-rm"]);
    expect(v.parts?.map((p) => p.argv)).toEqual([["ls"], ["rm", "x"]]);
  });

  it("a built-in floor that decides has no rule", async () => {
    const v = await decideCommand(fx, "echo x > ../x", policyP1());
    expect(v.decision).toBe("deny");
    expect(v.rule).toBeNull();
    expect(v.parts?.[0].rule).toBeNull();
  });

  it("commands longer than the parser accepts ask", async () => {
    const v = await decideCommand(fx, `echo ${"a".repeat(100_001)}`, policyP1());
    expect(v.decision).toBe("ask");
    expect(v.reasons[0]).toMatch(/^unclassifiable: command line longer/);
  });

  it("nested shells are followed to a bounded depth", async () => {
    let cmd = "ls";
    for (let i = 0; i < 12; i++) cmd = `sh -c ${JSON.stringify(cmd)}`;
    const v = await decideCommand(fx, cmd, DEFAULT_RULES as PolicyRuleData[]);
    expect(v.decision).toBe("ask");
    expect(v.reasons.join("\n")).toMatch(/nested too deep/);
  });
});

/**
 * End to end against bash: random command lines hide `touch pN` in lists, pipes, groups,
 * substitutions, heredocs, loops, functions and redirections. With every command allowed except
 * `touch`, whenever bash really created a sentinel the policy must not have said allow.
 */
describe("a hidden touch is never allowed (differential, real bash)", () => {
  const rules = [rule("op:all", {}, "allow"), rule("op:touch", { command: "touch *" }, "ask")];
  let n = 0;
  const touchSpellings = [
    "touch p",
    "t'o'uch p",
    "\\touch p",
    '"touch" p',
    "$'touch' p",
    "/usr/bin/touch p",
    "command touch p",
    "env touch p",
    "env -i PATH=/usr/bin:/bin touch p",
    "timeout 5 touch p",
    "nice -n 1 touch p",
    "time touch p",
    "eval 'touch p'",
    "trap 'touch p' EXIT",
    "sh -c 'touch p'",
    "bash -c \"touch p\"",
    "echo p | xargs touch",
    "xargs touch <<< p",
    "printf 'touch p' | bash",
    "echo 'touch p' > s.sh; . ./s.sh",
    "find . -maxdepth 0 -exec touch p \\;",
    "T=touch; $T p",
    "X='a'\\ls touch p",
  ];
  const leaf = fc.oneof(
    fc.constant("true"),
    fc.constantFrom("echo a", "echo 'b c'", "cat /dev/null"),
    fc.constantFrom(...touchSpellings).map((t) => t.replaceAll(" p", ` p${n++}`)),
  );
  const tree: fc.Arbitrary<string> = fc.letrec<{ cmd: string }>((tie) => ({
    cmd: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.tuple(tie("cmd"), tie("cmd")).map(([a, b]) => `${a}; ${b}`),
      fc.tuple(tie("cmd"), tie("cmd")).map(([a, b]) => `${a} && ${b}`),
      fc.tuple(tie("cmd"), tie("cmd")).map(([a, b]) => `false || ${a} || ${b}`),
      fc.tuple(tie("cmd"), tie("cmd")).map(([a, b]) => `${a} | ${b}`),
      tie("cmd").map((a) => `( ${a} )`),
      tie("cmd").map((a) => `{ ${a}; }`),
      tie("cmd").map((a) => `if true; then ${a}; fi`),
      tie("cmd").map((a) => `for i in x; do ${a}; done`),
      tie("cmd").map((a) => `echo $(${a})`),
      tie("cmd").map((a) => `echo "x$(${a})"`),
      tie("cmd").map((a) => `echo \`${a}\``),
      tie("cmd").map((a) => `X=$(${a}) true`),
      tie("cmd").map((a) => `cat <(${a})`),
      tie("cmd").map((a) => `echo >(${a})`),
      tie("cmd").map((a) => `g() { ${a}; }; g`),
      tie("cmd").map((a) => `cat <<EOF\n$(${a})\nEOF`),
      tie("cmd").map((a) => `${a} &`),
      tie("cmd").map((a) => `! ${a}`),
      tie("cmd").map((a) => `case x in x) ${a};; esac`),
      tie("cmd").map((a) => `echo \${u:-$(${a})}`),
      tie("cmd").map((a) => `${a} 2>/dev/null`),
      tie("cmd").map((a) => `echo $((1 + $(${a} >/dev/null; echo 1)))`),
      tie("cmd").map((a) => `[[ -n "$(${a})" ]]`),
      tie("cmd").map((a) => `bash -c ${JSON.stringify(a)}`),
    ),
  })).cmd;

  it("holds for 300 random command lines", async () => {
    const lines = fc.sample(tree, { numRuns: 300, seed: 7 });
    const dirs: string[] = [];
    for (const [i, line] of lines.entries()) {
      // Each line runs in its own directory: a background job of one line cannot be blamed on another.
      const dir = path.join(fx.root, `bash-${i}`);
      await fs.mkdir(dir);
      dirs.push(dir);
      try {
        execFileSync("/bin/bash", ["-c", `${line}\nwait`], { cwd: dir, stdio: "ignore", timeout: 10_000 });
      } catch {
        // a syntax error or a failing command: what ran still counts
      }
    }
    await new Promise((r) => setTimeout(r, 300)); // background jobs of subshells
    let ran = 0;
    for (const [i, line] of lines.entries()) {
      if ((await fs.readdir(dirs[i])).length === 0) continue;
      ran++;
      const verdict = await decideCommand(fx, line, rules);
      expect(verdict.decision, `${line}\n${JSON.stringify(verdict.parts)}`).not.toBe("allow");
    }
    expect(ran).toBeGreaterThan(50);
  });
});

/**
 * The same against real bash for C23: random lines that write outside the workspace (`../eN`)
 * through redirections, tee, cp, dd, sed w, git --output, cd, symlinks… With every command
 * allowed, whenever bash really wrote outside, the policy must not have said allow.
 */
describe("a write outside the workspace is never allowed (differential, real bash)", () => {
  const rules = [rule("op:all", {}, "allow")];
  let n = 0;
  const writes = [
    "echo x > ../e",
    "echo x>../e",
    "echo x >> ../e",
    "echo x &> ../e",
    "echo x >| ../e",
    "echo x 2>../e",
    "echo x >&../e",
    "echo x | tee ../e",
    "cp /dev/null ../e",
    "dd if=/dev/null of=../e status=none",
    "sed -n 'w ../e' /dev/null",
    "sort -o ../e /dev/null",
    "cd .. && echo x > e",
    "cd ..; touch e",
    "(cd .. && echo x > e)",
    "echo x > \"$PWD\"/../e",
    "echo x > ./../e",
    "echo x > sub/../../e",
    "echo x > link/e",
    "echo x > '..'/e",
    "echo x > ..\\/e",
    "exec 3>../e",
    "{ echo x; } > ../e",
    "O=../e; echo x > $O",
    "touch ../e",
  ];
  const leaf = fc.oneof(
    fc.constantFrom("true", "echo a", "echo x > /dev/null", "echo x > inside.txt"),
    fc.constantFrom(...writes).map((w) => w.replace(/\be\b/, `e${n++}`)),
  );
  const tree: fc.Arbitrary<string> = fc.letrec<{ cmd: string }>((tie) => ({
    cmd: fc.oneof(
      { depthSize: "small" },
      leaf,
      fc.tuple(tie("cmd"), tie("cmd")).map(([a, b]) => `${a}; ${b}`),
      fc.tuple(tie("cmd"), tie("cmd")).map(([a, b]) => `${a} && ${b}`),
      fc.tuple(tie("cmd"), tie("cmd")).map(([a, b]) => `${a} | ${b}`),
      tie("cmd").map((a) => `( ${a} )`),
      tie("cmd").map((a) => `if true; then ${a}; fi`),
      tie("cmd").map((a) => `echo $(${a})`),
      tie("cmd").map((a) => `bash -c ${JSON.stringify(a)}`),
    ),
  })).cmd;

  it("holds for 300 random command lines", async () => {
    const lines = fc.sample(tree, { numRuns: 300, seed: 11 });
    let wrote = 0;
    for (const [i, line] of lines.entries()) {
      const base = path.join(fx.root, `run-${i}`);
      const ws = path.join(base, "ws");
      await fs.mkdir(path.join(ws, "sub"), { recursive: true });
      await fs.symlink(base, path.join(ws, "link"));
      const verdict = await decideCommand({ ...fx, ws }, line, rules, ws);
      try {
        execFileSync("/bin/bash", ["-c", line], { cwd: ws, stdio: "ignore", timeout: 10_000 });
      } catch {
        // what ran still counts
      }
      const outside = (await fs.readdir(base)).filter((f) => f !== "ws" && f !== "homes");
      if (outside.length === 0) continue;
      wrote++;
      expect(verdict.decision, `${line}\n${JSON.stringify(verdict.reasons)}`).not.toBe("allow");
    }
    expect(wrote).toBeGreaterThan(50);
  });
});
