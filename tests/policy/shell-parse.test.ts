import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeAnsiC, parseShell, type ShellNode, type ShellWord, type SimpleCommand } from "@/lib/policy/shell-parse";
import { expandWord, type ExpansionEnv } from "@/lib/policy/shell-words";

/** Every simple command in the tree, in walk order, rendered as `name arg…` with substitutions as $(…). */
function commands(node: ShellNode): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  const visit = (n: ShellNode): void => {
    if (n.kind === "command") {
      n.nested.forEach(visit);
      out.push(n);
    } else if (n.kind === "sequence" || n.kind === "compound") {
      n.items.forEach(visit);
    } else if ("left" in n) {
      visit(n.left);
      visit(n.right);
    } else {
      visit(n.body);
    }
  };
  visit(node);
  return out;
}

// A UTF-8 locale like the child environment's (bash decodes `$'\u00e9'` only in one).
const ENV: ExpansionEnv = { env: { HOME: "/home/agent", SET: "value", SPACED: "a b", LANG: "C.UTF-8" }, dynamicNames: new Set(), allDynamic: false };

function render(word: ShellWord): string {
  const e = expandWord(word, ENV);
  return e.static ? e.fields.join(" ") : "?";
}

async function names(source: string): Promise<string[]> {
  const parsed = await parseShell(source);
  return commands(parsed.root).map((c) => c.words.map(render).join(" "));
}

describe("parseShell finds every simple command", () => {
  const cases: Array<[string, string[]]> = [
    ["a; b && c || d & e", ["a", "b", "c", "d", "e"]],
    ["a | b |& c", ["a", "b", "c"]],
    ["a\nb\n\nc", ["a", "b", "c"]],
    ["(a; (b)) && { c; }", ["a", "b", "c"]],
    ["a $(b $(c)) `d`", ["c", "b ?", "d", "a ? ?"]],
    ["a <(b) >(c)", ["b", "c", "a ? ?"]],
    ["X=$(a) Y=`b` c", ["a", "b", "c"]],
    ['echo "x $(a) y"', ["a", "echo ?"]],
    ["echo $((1 + $(a)))", ["a", "echo ?"]],
    ["echo ${x:-$(a)}", ["a", "echo ?"]],
    ["cat <<EOF\n$(a)\nEOF", ["a", "cat"]],
    ["cat <<'EOF'\n$(a)\nEOF", ["cat"]],
    ["f() { a; }; f", ["a", "f"]],
    ["function g { a; }", ["a"]],
    ["if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]],
    ["for i in $(a); do b; done", ["a", "b"]],
    ["while a; do b; done; until c; do d; done", ["a", "b", "c", "d"]],
    ["case $(a) in x) b;; $(c)) d;; esac", ["a", "b", "c", "d"]],
    ["! a", ["a"]],
    ["declare -x A=$(a)", ["a", "declare -x ?"]],
    ["echo `a \\`b\\``", ["b", "a ?", "echo ?"]],
    ["[[ -f $(a) ]]", ["a", "[[ -f ? ]]"]],
    ["a > $(b)", ["b", "a"]],
  ];
  it.each(cases)("%s", async (source, expected) => {
    expect(await names(source)).toEqual(expected);
  });

  it("keeps redirections with their command, including after a list (bash binds them to the last command)", async () => {
    const parsed = await parseShell("a && b 2>>f");
    const [a, b] = commands(parsed.root);
    expect(a.redirects).toEqual([]);
    expect(b.redirects.map((r) => [r.fd, r.operator, r.target && render(r.target)])).toEqual([[2, ">>", "f"]]);
  });

  it.each([
    ["echo ok>file", ">", "file"],
    ["echo >&2", ">&", "2"],
    ["echo &>f", "&>", "f"],
    ["echo &>>f", "&>>", "f"],
    ["echo >|f", ">|", "f"],
    ["cat <f", "<", "f"],
  ])("redirect %s", async (source, operator, target) => {
    const [cmd] = commands((await parseShell(source)).root);
    expect(cmd.redirects.map((r) => [r.operator, r.target && render(r.target)])).toEqual([[operator, target]]);
  });
});

describe("parseShell reports what it cannot read", () => {
  const cases: Array<[string, RegExp]> = [
    ["ls $(", /syntax/],
    ["echo $[ x='a[$(touch p)]', x ]", /syntax/],
    ["git status\r", /control characters/],
    ["echo a\u0007", /control characters/],
    ["r\\\nm x", /line continuation/],
    ["cat <<EOF\n$(a)\nEOF", /heredoc runs a command substitution/],
    ["cat <> f", /syntax/],
  ];
  it.each(cases)("%s", async (source, problem) => {
    const parsed = await parseShell(source);
    expect(parsed.problems.join("\n")).toMatch(problem);
  });

  it.each(["ls -la", "echo 'a b' \"c $HOME\"", "a && b | c > f 2>&1", "ls \\\n  -la"])("no problem for %s", async (source) => {
    expect((await parseShell(source)).problems).toEqual([]);
  });

  it("never throws, whatever the input", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 80 }), async (s) => {
        const parsed = await parseShell(s);
        expect(Array.isArray(parsed.problems)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["deep arithmetic", "echo $((" + "(".repeat(30000) + "1" + ")".repeat(30000) + "))"],
    ["deep substitutions", "echo " + "$(".repeat(20000) + "ls" + ")".repeat(20000)],
    ["deep subshells", "(".repeat(30000) + "ls" + ")".repeat(30000)],
    ["too long", "echo " + "a".repeat(100_000)],
  ])("gives up cleanly on %s (a problem, no exception)", async (_name, source) => {
    const parsed = await parseShell(source);
    expect(parsed.problems.join("\n")).toMatch(/nesting too deep|too complex|longer than/);
  });

  // Whether a very long flat chain parses within the time budget depends on the machine's load, so
  // both outcomes are correct: every command found, or a problem reported (which asks). Never an
  // exception, never a partial list without a problem.
  it.each([
    ["long && chain", Array(16000).fill("ls").join(" && "), 16000],
    ["long pipeline", Array(20000).fill("ls").join(" | "), 20000],
  ])("classifies all of a %s or reports it", async (_name, source, count) => {
    const parsed = await parseShell(source);
    if (parsed.problems.length === 0) expect(commands(parsed.root)).toHaveLength(count);
    else expect(parsed.problems.join("\n")).toMatch(/nesting too deep|too complex/);
  });

  it("collects the names the line assigns", async () => {
    const parsed = await parseShell("a=1; for i in x; do :; done; export B=2; declare C; unset D; read E");
    expect([...parsed.assignedNames].sort()).toEqual(["B", "C", "D", "a", "i"]);
  });
});

describe("decodeAnsiC", () => {
  it.each([
    ["\\x72m", "rm"],
    ["a\\nb\\t", "a\nb\t"],
    ["\\101\\u00e9\\U0001F600", "Aé😀"],
    ["\\'\\\"\\\\", "'\"\\"],
    ["\\cA", "\u0001"],
    ["\\q", "\\q"],
  ])("%s", (body, expected) => {
    expect(decodeAnsiC(body)).toBe(expected);
  });
});

/** Random words made of bash's quoting forms, escapes, variables and tildes. */
const plain = fc.stringMatching(/^[a-zA-Z0-9._\/:=@%+,-]{1,6}$/);
const special = fc.constantFrom(" ", "'", '"', "\\", "$", "`", "*", "?", "[", "{", "}", ";", "&", "|", "<", ">", "(", ")", "#", "!", "~", "é", "=", ":");
const inner = fc.array(fc.oneof(plain, special), { maxLength: 5 }).map((a) => a.join(""));
const piece = fc.oneof(
  plain,
  special.map((c) => `\\${c}`),
  inner.map((s) => `'${s.replace(/'/g, "")}'`),
  inner.map((s) => `"${s.replace(/["\\$`!]/g, (c) => `\\${c}`)}"`),
  fc.constantFrom('"$HOME"', "$SET", "${SET}", '"$UNSET"', "$UNSET", '"$SPACED"', "$'\\x41\\n\\t\\101\\u00e9'", "$'it\\'s'", '$"tr"', "'$(no)'", '"\\$(no)"', '"a\\b"', "~", "=", ":", "$SET_x", '"${SET}x"'),
);
const word = fc
  .tuple(fc.option(fc.constantFrom("~", "~/x", "a=", "~:"), { nil: undefined }), fc.array(piece, { minLength: 1, maxLength: 6 }))
  .map(([prefix, parts]) => (prefix ?? "") + parts.join(""));

/**
 * Differential check: for random words made of bash's quoting forms, the policy's static value
 * must equal what bash itself passes to the program (C21: "whatever the checker sees is what runs").
 */
describe("static word values equal bash's", () => {
  it.each([1, 2, 3])("matches for 400 random words (seed %i)", async (seed) => {
    const words = fc.sample(word, { numRuns: 400, seed });
    const script = words.map((w) => `set -- ${w}; printf '%s\\x1f' "$#" "$@"; printf '\\x1e'`).join("\n");
    const out = execFileSync("/bin/bash", ["-c", script], { env: ENV.env as NodeJS.ProcessEnv, encoding: "utf8" });
    const records = out.split("\x1e").slice(0, -1);
    expect(records).toHaveLength(words.length);
    let compared = 0;
    for (let i = 0; i < words.length; i++) {
      const parsed = await parseShell(`set -- ${words[i]}`);
      const [cmd] = commands(parsed.root);
      const fields = cmd.words.slice(2).map((w) => expandWord(w, ENV));
      if (parsed.problems.length || fields.some((f) => !f.static || f.glob)) continue; // the policy asks for these
      const [count, ...values] = records[i].split("\x1f").slice(0, -1);
      expect({ word: words[i], fields: fields.flatMap((f) => (f.static ? f.fields : [])) }).toEqual({ word: words[i], fields: values });
      expect(Number(count)).toBe(values.length);
      compared++;
    }
    expect(compared).toBeGreaterThan(200);
  });
});

/**
 * The same check for whole commands: prefix assignments, words and redirections mixed
 * (`X='a'\\b rec w1 2>/dev/null w2`), where the grammar has split words and filed arguments
 * under redirections. A recorder program prints the argv bash really gives it.
 */
describe("static argv equals the argv bash passes", () => {
  const redirect = fc.constantFrom(">/dev/null", "2>/dev/null", "&>/dev/null", "2>&1", ">>/dev/null", "</dev/null");
  const assignment = word.map((w) => `X=${w}`);
  const command = fc
    .tuple(fc.option(assignment, { nil: undefined }), fc.array(fc.oneof({ weight: 4, arbitrary: word }, { weight: 1, arbitrary: redirect }), { maxLength: 5 }))
    .map(([a, rest]) => [a, "rec", ...rest].filter((x) => x !== undefined).join(" "));

  it.each([1, 2])("matches for 300 random commands (seed %i)", async (seed) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ar-argv-"));
    try {
      fs.writeFileSync(path.join(dir, "rec"), "#!/bin/sh\nprintf '%s\\037' \"$#\" \"$@\" >&3\nprintf '\\036' >&3\n", { mode: 0o755 });
      const lines = fc.sample(command, { numRuns: 300, seed });
      const out = path.join(dir, "out");
      const script = [`exec 3>${out}`, ...lines.map((c) => `${c} || printf 'failed\\036' >&3`)].join("\n");
      execFileSync("/bin/bash", ["-c", script], { env: { ...ENV.env, PATH: `${dir}:/usr/bin:/bin` } as unknown as NodeJS.ProcessEnv });
      const records = fs.readFileSync(out, "utf8").split("\x1e").slice(0, -1);
      expect(records).toHaveLength(lines.length);
      let compared = 0;
      for (let i = 0; i < lines.length; i++) {
        const parsed = await parseShell(lines[i]);
        const found = commands(parsed.root);
        if (parsed.problems.length) continue;
        expect(found, lines[i]).toHaveLength(1);
        const fields = found[0].words.map((w) => expandWord(w, ENV));
        if (fields.some((f) => !f.static || f.glob)) continue;
        const [, ...argv] = records[i].split("\x1f").slice(0, -1);
        expect({ command: lines[i], argv: fields.flatMap((f) => (f.static ? f.fields : [])).slice(1) }).toEqual({ command: lines[i], argv });
        compared++;
      }
      expect(compared).toBeGreaterThan(100);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
