import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decide } from "@/lib/policy/decide";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import type { PolicyRuleData, PolicyVerdict } from "@/lib/policy/types";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";
import { fixtureEnv, policyP1 } from "@/tests/policy/fixtures";

/**
 * Commands run with an environment the policy does not know (the Claude Code hook door: the
 * person's own shell): no variable, `~` included, has a value the policy may assume, so any
 * expansion that reaches a command's words, a redirect target or the command name asks, and so
 * do programs that print the environment. With the gateway's own child environment (the other
 * doors) the same commands keep their decisions. Nothing is executed.
 */

let fx: Fixture;

beforeAll(async () => {
  fx = await makeFixture();
  await fx.put("notes.txt", "one\n");
});

afterAll(async () => {
  await fx?.cleanup?.();
});

function ask(command: string, rules: PolicyRuleData[], extra: { envUnknown?: boolean; cwdUnknown?: string; cwd?: string } = {}): Promise<PolicyVerdict> {
  const { cwd = fx.ws, ...flags } = extra;
  return decide(
    {
      tool: "run_command",
      risk: "exec",
      paths: [],
      boxed: false,
      command: { command: command.replaceAll("$ROOT", fx.root), cwd, workspaceRoot: fx.ws, env: fixtureEnv(fx), ...flags },
    },
    rules,
  );
}

/** Every spelling here expands a variable (or prints variables) the person's environment defines. */
const LEAKS = [
  "echo $ANTHROPIC_API_KEY",
  "echo ${AWS_SECRET_ACCESS_KEY}",
  'echo "$GITHUB_TOKEN"',
  "echo \"${GITHUB_TOKEN}\"",
  "echo '$X'\"$GITHUB_TOKEN\"",
  "echo ${GITHUB_TOKEN:-none}",
  "echo ${GITHUB_TOKEN:+set}",
  "echo ${#GITHUB_TOKEN}",
  "echo ${GITHUB_TOKEN:0:4}",
  "echo ${GITHUB_TOKEN/x/y}",
  "echo ${!GITHUB*}",
  "echo ${!name}",
  "echo $1",
  "echo $@",
  "echo ${arr[0]}",
  "echo ${arr[@]}",
  "echo x$HOMEx",
  "echo $HOME",
  "echo ~",
  "ls ~/.ssh",
  "ls ~root",
  "cat $GOOGLE_APPLICATION_CREDENTIALS",
  "cat \"$GOOGLE_APPLICATION_CREDENTIALS\"",
  "cat $MAIL",
  "ls $XDG_RUNTIME_DIR",
  "ls -la $TMPDIR",
  "grep -r x $HOME",
  "echo hi > $OUTDIR/f",
  "echo hi > \"$OUTDIR\"",
  "cat < $KEYFILE",
  "cat notes.txt >> ${LOG:-/tmp/log}",
  "cat <<EOF\n$GITHUB_TOKEN\nEOF",
  "cat <<EOF\n${AWS_SECRET_ACCESS_KEY}\nEOF",
  "cat <<<\"$GITHUB_TOKEN\"",
  "cat <<< $GITHUB_TOKEN",
  "cat <<-EOF\n\t$GITHUB_TOKEN\n\tEOF",
  "cat <<EOF\ntoken: $1 $@\nEOF",
  "cat <<EOF > out.txt\n$GITHUB_TOKEN\nEOF",
  "base64 <<EOF\n${GITHUB_TOKEN:-x}\nEOF",
  "$PAGER notes.txt",
  "$EDITOR notes.txt",
  "\"$SHELL\" -c 'echo hi'",
  "$BROWSER https://example.com",
  "${VISUAL:-vi} notes.txt",
  "echo hi | $PAGER",
  "cat notes.txt | ${PAGER}",
  "printenv",
  "printenv GITHUB_TOKEN",
  "/usr/bin/printenv HOME",
  "env",
  "env -0",
  "/usr/bin/env",
  "set",
  "export",
  "export -p",
  "declare -p",
  "declare -p GITHUB_TOKEN",
  "declare -x",
  "declare",
  "typeset -p",
  "compgen -v",
  "compgen -e",
  "local",
  "readonly -p",
  "cat /proc/self/environ",
  "X=$GITHUB_TOKEN; echo $X",
  "X=$GITHUB_TOKEN echo hi",
  "for v in $GITHUB_TOKEN; do echo $v; done",
  "echo `echo $GITHUB_TOKEN`",
  "echo $(printenv GITHUB_TOKEN)",
  "test -n \"$GITHUB_TOKEN\" && echo set",
  "[ -f $HOME/.netrc ] && echo yes",
  "cd; cat .netrc",
  "cd ~ && cat .npmrc",
  "cd $HOME && ls",
  "cd \"$OLDPWD\" && ls",
  "ls ${PWD}/..",
  "cat $(echo notes.txt)",
  "X=1; echo hi",
  "LESSOPEN='|cat %s'; echo hi",
];

describe("with an environment the policy does not know", () => {
  it.each(LEAKS)("does not allow %j", async (command) => {
    const v = await ask(command, [...policyP1(), ...DEFAULT_RULES], { envUnknown: true });
    expect(v.decision, `${command}: ${v.reasons.join("; ")}`).not.toBe("allow");
  });

  it.each([
    ["echo $GITHUB_TOKEN", "$GITHUB_TOKEN (a variable of the person's own environment, which the policy does not know)"],
    ["cat ~/.netrc", "~ (the home directory of an environment the policy does not know)"],
    ["echo hi > $OUT/f", "redirect target $OUT/f"],
  ])("names the unknown variable in the reviewer's reason: %s", async (command, reason) => {
    const v = await ask(command, policyP1(), { envUnknown: true });
    expect(v.decision).toBe("ask");
    expect(v.reasons.join("\n")).toContain(reason);
  });

  it.each(["echo hi", "cat notes.txt", "ls -la", "git status", "grep -n one notes.txt", "ls src 2>/dev/null", "echo 'a $b' \"literal\"", "cat <<'EOF'\n$GITHUB_TOKEN\nEOF", "cat <<EOF\nno \\$X here\nEOF", "cat <<<'$X'"])(
    "still allows %j, which expands no variable",
    async (command) => {
      const v = await ask(command, policyP1(), { envUnknown: true });
      expect(v.decision, `${command}: ${v.reasons.join("; ")}`).toBe("allow");
    },
  );
});

describe("with the gateway's own child environment (boxed doors)", () => {
  it.each(["echo $HOME", "echo hi > \"$OUTDIR/x\"", "cat notes.txt"])("keeps today's decision for %j", async (command) => {
    const known = await ask(command, policyP1());
    // The child environment is known: HOME is the child's own, OUTDIR is unset (the write targets /x).
    expect(known.reasons.join("\n")).not.toContain("does not know");
  });

  it("expands a variable from the child environment", async () => {
    const v = await ask("echo $HOME", policyP1());
    expect(v.parts?.[0].argv).toEqual(["echo", fixtureEnv(fx).HOME]);
    expect(v.decision).toBe("allow");
  });
});

describe("with a working directory the policy does not know", () => {
  it.each(["cat passwd", "cat notes.txt", "ls", "git status", "echo hi", "cat /etc/hostname", "cd / && cat etc/passwd"])(
    "asks for %j with the reason",
    async (command) => {
      const v = await ask(command, policyP1(), { envUnknown: true, cwdUnknown: "the hook call names no working directory (cwd)" });
      expect(v.decision).not.toBe("allow");
      expect(v.reasons.join("\n")).toContain("unknown_cwd: the hook call names no working directory (cwd)");
    },
  );
});
