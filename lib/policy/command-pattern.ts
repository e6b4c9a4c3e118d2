import path from "node:path";

/**
 * Command patterns of policy rules (`PolicyRuleData.command`), e.g. `git log *`.
 *
 * Syntax: whitespace-separated words, each matching one whole argv token exactly (so `git log *`
 * never matches `git logout`, field case C20-8); a `*` as the last word matches any further
 * arguments, including none; `[args]`, `[paths]` or any `[…]` word is another spelling of that
 * trailing `*`; a `*` elsewhere matches exactly one argument. Without a trailing `*` the command
 * must have exactly the listed words (`git status` does not match `git status -s`).
 */

/** A parsed pattern. */
export interface CommandPattern {
  words: string[];
  /** True when further arguments are allowed. */
  rest: boolean;
}

/** One argv token as the policy knows it before the command runs. */
export interface ArgvToken {
  /** The token, or null when only known at run time (e.g. filled in by xargs). */
  value: string | null;
  /** Unquoted glob characters remain: the shell may turn the token into other or several words. */
  glob: boolean;
}

/** argv of a command being classified. */
export interface Argv {
  tokens: ArgvToken[];
  /** More arguments may be appended at run time (`xargs cmd`). */
  openEnded: boolean;
}

/**
 * POSIX shells are interchangeable for `-c STRING` and `| sh`: a deny or ask rule naming one
 * names them all (P1's "deny sh, bash in any spelling" also holds for `dash -c`).
 */
export const SHELL_NAMES: ReadonlySet<string> = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash"]);

/** How a pattern relates to a command: matches, cannot match, or might match at run time. */
export type PatternMatch = "match" | "no" | "maybe";

/** Parses a rule's command pattern; an empty pattern has no words and never matches. */
export function parseCommandPattern(pattern: string): CommandPattern {
  const words = pattern.trim().split(/\s+/).filter(Boolean);
  const last = words[words.length - 1];
  const rest = last === "*" || (last !== undefined && /^\[[^\]]*\]$/.test(last));
  return { words: rest ? words.slice(0, -1) : words, rest };
}

/**
 * Matches `argv` against `pattern`.
 * @param byBasename when true the command name also matches by basename (`/bin/rm` matches `rm`,
 *   `dash` matches `sh`): used for deny and ask rules, so "deny rm" holds in any spelling; allow
 *   rules need the exact word.
 * @returns "maybe" when a glob or run-time token sits where the pattern needs a fixed word.
 */
export function matchCommandPattern(pattern: CommandPattern, argv: Argv, byBasename: boolean): PatternMatch {
  if (pattern.words.length === 0) return "no";
  const { tokens } = argv;
  let uncertain = false;
  for (let i = 0; i < pattern.words.length; i++) {
    const want = pattern.words[i];
    const token = tokens[i];
    if (!token) return argv.openEnded && i > 0 ? "maybe" : "no";
    if (token.value === null || token.glob) {
      // A run-time or glob token may become any word, or several (then positions shift).
      uncertain = true;
      continue;
    }
    if (want === "*") continue;
    const equal = token.value === want || (i === 0 && byBasename && sameProgram(path.posix.basename(token.value), want));
    // After a token that may expand to several words, positions are no longer certain.
    if (!equal) return uncertain ? "maybe" : "no";
  }
  const extra = tokens.length > pattern.words.length || argv.openEnded;
  if (!pattern.rest && extra) {
    return tokens.length > pattern.words.length ? "no" : "maybe";
  }
  return uncertain ? "maybe" : "match";
}

function sameProgram(name: string, want: string): boolean {
  return name === want || (SHELL_NAMES.has(name) && SHELL_NAMES.has(want));
}
