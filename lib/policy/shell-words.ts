import type { ShellWord } from "@/lib/policy/shell-parse";

/**
 * Static expansion of shell words (bash "Shell Expansions"), done the way the executor's
 * `bash -c` will do it, with the child environment the executor really uses
 * (lib/exec/child-env.ts): `$HOME` and `~` are the child's HOME, an unset variable is empty
 * (C23-3: `> "$OUTDIR/f"` targets `/f`). Whatever cannot be known before the command runs
 * (substitutions, arithmetic, positional parameters, variables the line assigns, variables bash
 * manages itself such as `$IFS` or `$RANDOM`) makes the word non-static.
 */

/** What a word expands to, or why it cannot be known. */
export type Expansion =
  /**
   * `fields`: the words it becomes (an unquoted empty expansion disappears: zero fields).
   * `glob`: unquoted `*`, `?` or `[` remain, so pathname expansion may change the word.
   * `pattern` (when `glob`): the word as a pathname pattern, every quoted character
   * backslash-escaped, for lib/policy/shell-glob.ts.
   */
  | { static: true; fields: string[]; glob: boolean; pattern?: string }
  | { static: false; why: string };

/** Where variables come from. */
export interface ExpansionEnv {
  /** The child environment (exactly what the executor passes to `bash -c`). */
  env: Record<string, string>;
  /** Variables whose value the line itself may change (assigned, declared, unset, read…). */
  dynamicNames: ReadonlySet<string>;
  /** True when the line may set arbitrary variables (`read`, `eval`, `source`, `set`…): every variable is dynamic. */
  allDynamic: boolean;
}

/**
 * Variables bash sets or changes by itself, whatever the environment says (bash(1) "Shell
 * Variables"). `IFS` is reset to space-tab-newline at startup, so `${IFS}` is a word separator
 * (C21-8), never a value taken from the environment.
 */
const BASH_MANAGED = new Set([
  "BASH", "BASHOPTS", "BASHPID", "BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0", "BASH_CMDS",
  "BASH_COMMAND", "BASH_EXECUTION_STRING", "BASH_LINENO", "BASH_REMATCH", "BASH_SOURCE", "BASH_SUBSHELL",
  "BASH_VERSINFO", "BASH_VERSION", "COLUMNS", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "EUID", "FUNCNAME",
  "GROUPS", "HISTCMD", "HOSTNAME", "HOSTTYPE", "IFS", "LINENO", "LINES", "MACHTYPE", "OLDPWD", "OPTARG", "OPTIND",
  "OSTYPE", "PIPESTATUS", "PPID", "PS1", "PS2", "PS3", "PS4", "PWD", "RANDOM", "REPLY", "SECONDS", "SHELLOPTS",
  "SHLVL", "SRANDOM", "UID", "_",
]);

/** True when `name`'s value is not the child environment's. */
export function isDynamicVariable(name: string, ctx: ExpansionEnv): boolean {
  return ctx.allDynamic || ctx.dynamicNames.has(name) || BASH_MANAGED.has(name) || /^(BASH|COMP|READLINE)_/.test(name);
}

const GLOB_CHARS = /[*?[]/;
/** Brace expansion `{a,b}` / `{1..3}` in unquoted text (bash expands it before anything else). */
const BRACE = /\{[^{}]*(,|\.\.)[^{}]*\}/;
/** Field separators of the default IFS. */
const IFS_WHITESPACE = /[ \t\n]/;

/**
 * Expands `word` statically.
 * @returns fields + glob flag, or `{static: false, why}` naming the piece that is only known at
 *   run time (`$(…)`, `$1`, `${x:-y}`, `$x` assigned by the line, word splitting of a value).
 */
export function expandWord(word: ShellWord, ctx: ExpansionEnv): Expansion {
  let value = "";
  let pattern = "";
  let glob = false;
  let anyQuoted = false;
  let unquotedSkeleton = "";
  for (const part of word.parts) {
    switch (part.kind) {
      case "literal":
        value += part.text;
        pattern += part.quoted ? escapeGlob(part.text) : part.text.replace(/\\/g, "\\\\");
        if (part.quoted) {
          anyQuoted = true;
          unquotedSkeleton += "_";
        } else {
          glob ||= GLOB_CHARS.test(part.text);
          unquotedSkeleton += part.text;
        }
        break;
      case "tilde": {
        if (ctx.env.HOME === undefined) return { static: false, why: "~ without HOME" };
        value += ctx.env.HOME;
        pattern += escapeGlob(ctx.env.HOME);
        anyQuoted = true; // the result of tilde expansion is not split or globbed
        unquotedSkeleton += "_";
        break;
      }
      case "variable": {
        if (isDynamicVariable(part.name, ctx)) return { static: false, why: `$${part.name}` };
        const v = ctx.env[part.name] ?? "";
        if (part.quoted) {
          anyQuoted = true;
        } else if (IFS_WHITESPACE.test(v)) {
          return { static: false, why: `$${part.name} (word splitting)` };
        } else {
          glob ||= GLOB_CHARS.test(v);
        }
        value += v;
        pattern += part.quoted ? escapeGlob(v) : v.replace(/\\/g, "\\\\");
        unquotedSkeleton += "_";
        break;
      }
      case "dynamic":
        return { static: false, why: part.what };
    }
  }
  if (BRACE.test(unquotedSkeleton)) return { static: false, why: `brace expansion in ${word.text}` };
  if (value === "" && !anyQuoted) return { static: true, fields: [], glob: false };
  return glob ? { static: true, fields: [value], glob, pattern } : { static: true, fields: [value], glob };
}

/** `text` with the pattern characters backslash-escaped (a quoted piece matches literally). */
function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]]/g, "\\$&");
}

/**
 * The static value of `word` when it is exactly one field without globbing, else null
 * (used for command names, redirect targets and `cd` arguments).
 */
export function staticValue(word: ShellWord, ctx: ExpansionEnv): string | null {
  const e = expandWord(word, ctx);
  return e.static && e.fields.length === 1 && !e.glob ? e.fields[0] : null;
}
