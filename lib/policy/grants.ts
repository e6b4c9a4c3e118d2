import path from "node:path";
import picomatch from "picomatch";
import { matchCommandPattern, parseCommandPattern, SHELL_NAMES } from "@/lib/policy/command-pattern";
import { globMatches, isToolRule, ruleGlobMatches } from "@/lib/policy/rule-match";
import type { CommandPart, PolicyInput, PolicyRuleData, PolicyVerdict } from "@/lib/policy/types";

/**
 * Grants: "don't ask again" rules a reviewer makes while approving a call. A grant is an allow
 * rule (source "grant") with a path glob (write_file, edit_file) or a command pattern
 * (run_command), scoped to one session or one workspace, that expires. It only turns an "ask"
 * into "allow" where the ask is the generic one (the tool asks for every call, or no rule matched
 * the command): it never beats a deny, and never lifts an ask a rule makes for a particular path
 * or command (the sensitive-path rules, an operator's ask), nor the built-in checks (reads or
 * writes outside the workspace, the network, an unavailable sandbox, held change sets), which
 * decide before any rule.
 */

/** Priority of grants: after every default and operator rule. */
export const GRANT_PRIORITY = 1000;

/**
 * Tools a grant can be made for, and what it names for each, in the policy's own words (rules name
 * tools by their wire names). The tool definitions declare the same (ToolDefinition.grant), and a
 * structure test keeps the two equal: the policy sits below the tool registry and cannot read it.
 */
export const GRANT_TOOLS: Readonly<Record<string, "path" | "command">> = { write_file: "path", edit_file: "path", run_command: "command" };

/** Shortest and longest expiry of a grant (seconds). */
export const GRANT_MIN_S = 60;
export const GRANT_MAX_S = 30 * 86_400;

/** Expiry choices the dashboard offers (seconds). */
export const GRANT_EXPIRY_CHOICES: ReadonlyArray<{ seconds: number; label: string }> = [
  { seconds: 3600, label: "1 hour" },
  { seconds: 8 * 3600, label: "8 hours" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 7 * 86_400, label: "7 days" },
];

/** True for a rule made as a grant. */
export function isGrant(rule: PolicyRuleData): boolean {
  return rule.source === "grant";
}

/**
 * For a path tool: the verdict after grants. When the rules (grants aside) ask only generically
 * (a tool-wide ask rule, or no rule matched) and an in-scope grant of the tool covers every path
 * of the call, the call is allowed by that grant; otherwise the verdict is returned unchanged.
 * @param active the rules that apply to the call (activeRules: enabled, the tool's, in scope), in order
 */
export function liftByPathGrant(verdict: PolicyVerdict, input: PolicyInput, active: readonly PolicyRuleData[]): PolicyVerdict {
  if (verdict.decision !== "ask" || GRANT_TOOLS[input.tool] !== "path" || input.paths.length === 0) return verdict;
  const grants = active.filter((r) => isGrant(r) && r.decision === "allow" && r.pathGlob && !r.command);
  if (grants.length === 0) return verdict;
  for (const rule of active) {
    if (isGrant(rule) || rule.command || rule.decision === "allow") continue;
    // A deny anywhere, or an ask a rule makes for one of these paths, stands.
    if (rule.decision === "deny" && isToolRule(rule)) return verdict;
    if (rule.pathGlob && input.paths.some((p) => ruleGlobMatches(rule, p))) return verdict;
  }
  let first: PolicyRuleData | null = null;
  for (const p of input.paths) {
    const grant = grants.find((g) => globMatches(g.pathGlob!, p));
    if (!grant) return verdict;
    first ??= grant;
  }
  return {
    ...verdict,
    decision: "allow",
    rule: { id: first!.id, note: first!.note },
    reasons: input.paths.map((p) => `${p || "."}: allow by grant ${grants.find((g) => globMatches(g.pathGlob!, p))!.id}`),
  };
}

/** Programs that run another program named in their arguments: a grant for them would allow anything. */
const WRAPPERS = new Set([
  ...SHELL_NAMES,
  "env",
  "sudo",
  "doas",
  "su",
  "xargs",
  "eval",
  "exec",
  "command",
  "builtin",
  "nohup",
  "timeout",
  "nice",
  "ionice",
  "time",
  "busybox",
  "watch",
  "setsid",
  "stdbuf",
  "chroot",
  "unshare",
  "nsenter",
  "flock",
  "parallel",
  "ssh",
]);

/** Interpreter options whose next argument is code to run (`python3 -c CODE`, `node -e CODE`). */
const CODE_OPTIONS = new Set(["-c", "-e", "--eval", "-E", "-p", "--print", "-r"]);

/**
 * Why a command pattern cannot be a grant, or null when it can: it must name a program (a fixed
 * first word, not `*`, not a `[…]` placeholder), that program must not be a shell or a program
 * that runs another one (`sh`, `env`, `xargs`, `sudo`, …), and an interpreter's inline code
 * (`python3 -c *`) cannot be granted; nor can a pattern that also covers a command some rule
 * denies or asks for (`git *` when `git push *` is denied).
 */
export function commandGrantProblem(pattern: string, rules: readonly PolicyRuleData[] = []): string | null {
  const parsed = parseCommandPattern(pattern);
  const first = parsed.words[0];
  if (pattern.length > 500) return "the pattern is longer than 500 characters";
  if (!first || first === "*") return "the pattern must start with the program's name (a pattern of only * would allow every command)";
  if (/[\n;&|<>`$(){}]/.test(pattern)) return "a pattern names one simple command: no ; & | < > ` $ ( ) { } (each command of a line gets its own pattern)";
  const name = path.posix.basename(first);
  if (WRAPPERS.has(name)) return `${name} runs other programs: a grant for it would allow any command`;
  if (parsed.words.slice(1).some((w) => CODE_OPTIONS.has(w))) return `a grant cannot allow inline code (${parsed.words.find((w, i) => i > 0 && CODE_OPTIONS.has(w))})`;
  // A deny or ask rule for commands this pattern also covers (`git *` over a deny of `git push *`).
  for (const rule of rules) {
    if (!rule.enabled || isGrant(rule) || !rule.command || rule.decision === "allow" || (rule.tool !== "run_command" && rule.tool !== "*")) continue;
    const words = parseCommandPattern(rule.command).words.map((w) => (w === "*" ? "x" : w));
    if (words.length === 0) continue;
    const covered = matchCommandPattern(parsed, { tokens: words.map((value) => ({ value, glob: false })), openEnded: false }, false) === "match";
    if (covered) return `the pattern also covers ${rule.command} (${rule.decision === "deny" ? "denied" : "asked"} by rule ${rule.id}${rule.note ? `: ${rule.note}` : ""}): a grant never lifts that; name a narrower pattern`;
  }
  return null;
}

/** True when `pattern` matches the simple command `part` (its statically known argv). */
export function patternMatchesPart(pattern: string, part: Pick<CommandPart, "argv">): boolean {
  if (!part.argv) return false;
  return matchCommandPattern(parseCommandPattern(pattern), { tokens: part.argv.map((value) => ({ value, glob: false })), openEnded: false }, false) === "match";
}

/** A script file an interpreter runs (its name is part of the suggested pattern). */
const SCRIPT = /^[\w./-]+\.(py|js|mjs|cjs|ts|rb|pl|sh|php|lua)$/;

/**
 * A command pattern for one simple command, as a reviewer would write it: the program and its
 * subcommand words (up to three words; `-m MODULE` counts as a subcommand), then `*`.
 * `python3 -m pytest tests/x.py` → `python3 -m pytest *`; `git add src/a.ts` → `git add *`;
 * `npm run test -- --watch` → `npm run test *`; `ls -la` → `ls *`; `python3 gen.py x` →
 * `python3 gen.py *`.
 * @returns null when the command has no statically known argv
 */
export function suggestCommandPattern(argv: readonly string[] | null): string | null {
  if (!argv || argv.length === 0) return null;
  const words = [argv[0]];
  // An interpreter running a script names the script: `python3 gen.py x` → `python3 gen.py *`.
  if (argv.length > 1 && SCRIPT.test(argv[1]) && !argv[1].startsWith("-")) return [argv[0], argv[1], "*"].join(" ");
  for (let i = 1; i < argv.length && words.length < 3; i++) {
    const t = argv[i];
    if (t === "-m" && i + 1 < argv.length && /^[A-Za-z_][\w.]*$/.test(argv[i + 1])) {
      words.push(t, argv[++i]);
      continue;
    }
    if (!/^[A-Za-z][\w:-]*$/.test(t)) break;
    words.push(t);
  }
  return [...words, "*"].join(" ");
}

/**
 * Path globs for a granted write, broadest first: the directory tree and extension
 * (`src/lib/a.ts` → `src/**\/*.ts`), the directory's files with that extension
 * (`src/lib/*.ts`), and the exact path. A file at the root gives `*.ts` and the path itself; a
 * file without an extension gives its directory's files and the path.
 */
export function suggestPathGlobs(relative: string): string[] {
  const dir = path.posix.dirname(relative);
  const base = path.posix.basename(relative);
  const ext = path.posix.extname(base);
  const escaped = escapeGlob(relative);
  const out: string[] = [];
  const top = dir === "." ? null : dir.split("/")[0];
  if (ext && ext !== base) {
    if (top) out.push(`${escapeGlob(top)}/**/*${escapeGlob(ext)}`);
    if (dir !== top) out.push(`${dir === "." ? "" : `${escapeGlob(dir)}/`}*${escapeGlob(ext)}`);
    else if (!top) out.push(`*${escapeGlob(ext)}`);
  }
  out.push(escaped);
  return [...new Set(out)];
}

function escapeGlob(s: string): string {
  return s.replace(/[*?[\]{}()!+@\\]/g, (c) => `\\${c}`);
}

/** Sample paths that stand for each sensitive class, besides the ones made from the rules' own globs. */
const SENSITIVE_SAMPLES = [
  ".env",
  "a/.env.local",
  ".git/config",
  ".git/hooks/pre-commit",
  "a/.git/config",
  "key.pem",
  "a/server.key",
  "id_rsa",
  "a/.ssh/id_ed25519",
  ".npmrc",
  ".netrc",
  ".aws/credentials",
  "a/.kube/config",
  "store.p12",
];

/**
 * Paths a glob stands for, for checking whether a grant's glob reaches them: the glob with
 * `**` as nothing and as one directory, `*` and `?` as a letter, and each `{a,b}` alternative.
 */
export function samplePaths(glob: string): string[] {
  let forms = [glob];
  const brace = /\{([^{}]*)\}/;
  for (let guard = 0; guard < 4 && forms.some((f) => brace.test(f)); guard++) {
    forms = forms.flatMap((f) => {
      const m = brace.exec(f);
      return m ? m[1].split(",").map((alt) => f.slice(0, m.index) + alt + f.slice(m.index + m[0].length)) : [f];
    });
  }
  const out = new Set<string>();
  for (const f of forms.slice(0, 50)) {
    for (const star2 of ["", "a/"]) {
      const p = f
        .replace(/\*\*\//g, star2)
        .replace(/\/\*\*$/, "/x")
        .replace(/\*\*/g, "x")
        .replace(/\*/g, "x")
        .replace(/\?/g, "x")
        .replace(/\\(.)/g, "$1");
      out.add(p);
    }
  }
  return [...out];
}

/**
 * Why a path glob cannot be a grant of `tool`, or null when it can: it must be a valid glob that
 * stays inside the workspace (no absolute path, no `..`), and it must not reach a path that a rule
 * asks or denies for (sensitive files such as `.env`, `.git/**`, keys; an operator's ask rule),
 * judged on sample paths of each guarded class. A glob that reaches such a path only through a
 * nested dot directory (`src/**\/*.ts` and `src/.git/x.ts`) is accepted: the decision-time rule
 * (liftByPathGrant) keeps every guarded path asking whatever the grant says.
 * @param rules every rule (only enabled, non-allow path rules of `tool` or "*" are checked)
 */
export function pathGrantProblem(glob: string, tool: string, rules: readonly PolicyRuleData[]): string | null {
  if (glob.trim() === "" || glob.length > 500) return "the path glob must be 1 to 500 characters";
  if (glob.startsWith("/") || glob.split("/").some((s) => s === ".." || s === ".") || glob.includes("\\/..")) return "the path glob must be workspace-relative, without . or .. segments";
  if (glob.startsWith("!")) return "a negated glob would match almost everything";
  const guarding = rules.filter((r) => r.enabled && !isGrant(r) && (r.tool === "*" || r.tool === tool) && r.pathGlob && !r.command && r.decision !== "allow");
  // Sample paths of what is guarded, also placed under the grant's own directory and given its
  // extension, so `config/**` meets `config/.env` and `db/**/*.sql` meets `db/migrations/x.sql`.
  let base = "";
  try {
    base = picomatch.scan(glob).base;
  } catch {
    return "not a valid glob";
  }
  const ext = /\*(\.[\w-]+)$/.exec(glob)?.[1] ?? null;
  const seeds = [...SENSITIVE_SAMPLES, ...guarding.flatMap((r) => samplePaths(r.pathGlob!))];
  const samples = new Set<string>();
  for (const c of seeds) {
    const forms = [c, ...(base ? [`${base}/${c}`, ...(c.startsWith("a/") ? [`${base}/${c.slice(2)}`] : [])] : [])];
    for (const f of forms) {
      samples.add(f);
      // Not inside dot directories: `src/**/*.ts` also reaches a nested `src/.git/x.ts`, which
      // keeps asking at decision time; the check here refuses globs that name guarded files.
      if (ext && path.posix.basename(f) === "x" && !f.split("/").some((seg) => seg.startsWith("."))) samples.add(`${f}${ext}`);
    }
  }
  for (const p of samples) {
    if (!globMatches(glob, p)) continue;
    const rule = guarding.find((r) => ruleGlobMatches(r, p)) ?? null;
    if (rule || SENSITIVE_SAMPLES.includes(p)) {
      return `the glob also covers ${p}${rule ? ` (rule ${rule.id}: ${rule.note ?? rule.decision})` : " (a sensitive file)"}: a grant never lifts that check; name narrower paths`;
    }
  }
  return null;
}
