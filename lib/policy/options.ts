import type { ArgvToken } from "@/lib/policy/command-pattern";
import type { Result } from "@/lib/result";

/**
 * Command-line option parsing as the programs themselves do it (glibc `getopt_long`, and the
 * stricter parsers of a few non-GNU programs), so the policy reads `sed --e='w /tmp/x'` the way
 * sed does: as `--expression`.
 *
 * getopt_long accepts any unambiguous prefix of a long option (`--expr`, `--e` when nothing else
 * starts with `e`), `--opt=value` and, for options that require a value, `--opt value`. A prefix
 * that fits several different options is an error in the program; a name that fits none is one
 * too. Either way the policy cannot know what the program will do with it, so both ask.
 *
 * Long option lists are written as one string, options separated by spaces:
 * - `name` takes no value; `name=` requires one; `name=?` takes an optional value that must be
 *   attached with `=` (`--color[=WHEN]`);
 * - `a|b` are two spellings of one option (`quiet|silent`): a prefix of both is not ambiguous,
 *   and the option is known by its first spelling.
 * The lists in command-knowledge.ts are those each program prints with `--help` (GNU coreutils
 * 9.1, grep 3.8, sed 4.9, findutils 4.9, diffutils 3.8, curl 7.88, wget 1.21, util-linux 2.38).
 */

/** How a program's options are written. */
export interface OptionSpec {
  /** Short option letters that take a value (`-o FILE`, `-oFILE`). */
  shortValue?: string;
  /** Short option letters whose value is optional and only attached (`-i[SUFFIX]`). */
  shortOptional?: string;
  /**
   * Every long option the program accepts (syntax above). Absent: the program has no long
   * options, and any `--name` asks.
   */
  long?: string;
  /** Long options must be written in full (clap, tree, git's global options): no prefixes. */
  exactLong?: boolean;
  /** POSIX style: options end at the first operand (wrappers); otherwise GNU permutation. */
  stopAtOperand?: boolean;
}

/** One option as the program will understand it. */
export interface Option {
  /** `-o`, or the long option's full canonical name (`--output`, whatever prefix was written). */
  name: string;
  /** The long option as written (`--out`), for reasons; equal to `name` for short options. */
  written: string;
  value: string | null;
}

/** An operand (not an option). */
export interface Operand {
  value: string | null;
  glob: boolean;
  /** Index in the token list given to `parseArgs`. */
  index: number;
  /** Came after `--`. */
  afterDashDash: boolean;
}

/** The options and operands of one command, and what could not be read. */
export interface ParsedArgs {
  options: Option[];
  operands: Operand[];
  /** Long options that are unknown or ambiguous (each becomes an ask). */
  problems: string[];
}

type ValueKind = "none" | "required" | "optional";

interface LongTable {
  /** Every spelling → [canonical name, value kind]. */
  byName: Map<string, { canonical: string; kind: ValueKind }>;
}

const tables = new WeakMap<OptionSpec, LongTable>();

function longTable(spec: OptionSpec): LongTable {
  let t = tables.get(spec);
  if (t) return t;
  t = { byName: new Map() };
  for (const group of (spec.long ?? "").split(/\s+/).filter(Boolean)) {
    const spellings = group.split("|");
    const canonical = spellings[0].replace(/=\??$/, "");
    for (const s of spellings) {
      const kind: ValueKind = s.endsWith("=?") ? "optional" : s.endsWith("=") ? "required" : "none";
      t.byName.set(s.replace(/=\??$/, ""), { canonical, kind });
    }
  }
  tables.set(spec, t);
  return t;
}

/** What a written long option name (without `--` and `=value`) resolves to. */
export type LongResolution = Result<{ canonical: string; kind: "none" | "required" | "optional" }, { why: "unknown" | "ambiguous"; candidates: string[] }>;

/**
 * Resolves a long option name the way getopt_long does: an exact spelling wins; otherwise the
 * spellings it is a prefix of must all belong to one option.
 */
export function resolveLong(spec: OptionSpec, name: string): LongResolution {
  const table = longTable(spec);
  const exact = table.byName.get(name);
  if (exact) return { ok: true, ...exact };
  if (spec.exactLong || name === "") return { ok: false, why: "unknown", candidates: [] };
  const hits = new Map<string, ValueKind>();
  for (const [spelling, entry] of table.byName) if (spelling.startsWith(name)) hits.set(entry.canonical, entry.kind);
  if (hits.size === 1) {
    const [[canonical, kind]] = [...hits];
    return { ok: true, canonical, kind };
  }
  return { ok: false, why: hits.size ? "ambiguous" : "unknown", candidates: [...hits.keys()].sort() };
}

/**
 * Splits `tokens` (the arguments after the program name) into options and operands.
 * `--` ends the options (what follows are operands, marked `afterDashDash`). A run-time token
 * (`value: null`) is an operand here; the caller already asks for it.
 */
export function parseArgs(tokens: ArgvToken[], spec: OptionSpec): ParsedArgs {
  const options: Option[] = [];
  const operands: Operand[] = [];
  const problems: string[] = [];
  let onlyOperands = false;
  let afterDashDash = false;
  for (let i = 0; i < tokens.length; i++) {
    const { value: v, glob } = tokens[i];
    if (onlyOperands || v === null || v === "-" || !v.startsWith("-")) {
      operands.push({ value: v, glob, index: i, afterDashDash });
      if (spec.stopAtOperand) onlyOperands = true;
      continue;
    }
    if (v === "--") {
      onlyOperands = true;
      afterDashDash = true;
      continue;
    }
    if (v.startsWith("--")) {
      const eq = v.indexOf("=");
      const written = eq === -1 ? v.slice(2) : v.slice(2, eq);
      const r = resolveLong(spec, written);
      if (!r.ok) {
        problems.push(
          r.why === "ambiguous"
            ? `--${written} is ambiguous (could be ${r.candidates.map((c) => `--${c}`).join(", ")})`
            : `--${written} is not an option the policy knows for this program`,
        );
        // Unknown: whether it takes a value is unknown too; the next word is read as an operand.
        options.push({ name: `--${written}`, written: `--${written}`, value: eq === -1 ? null : v.slice(eq + 1) });
        continue;
      }
      let value = eq === -1 ? null : v.slice(eq + 1);
      if (value === null && r.kind === "required") value = tokens[++i]?.value ?? null;
      options.push({ name: `--${r.canonical}`, written: `--${written}`, value });
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const letter = v[j];
      if (spec.shortValue?.includes(letter)) {
        const attached = v.slice(j + 1);
        options.push({ name: `-${letter}`, written: `-${letter}`, value: attached !== "" ? attached : (tokens[++i]?.value ?? null) });
        break;
      }
      if (spec.shortOptional?.includes(letter)) {
        options.push({ name: `-${letter}`, written: `-${letter}`, value: v.slice(j + 1) || null });
        break;
      }
      options.push({ name: `-${letter}`, written: `-${letter}`, value: null });
    }
  }
  return { options, operands, problems };
}

/** True when `opts` holds `-short` or `--long` (canonical long names). */
export function has(opts: Option[], short: string | null, ...long: string[]): boolean {
  return opts.some((o) => (short !== null && o.name === `-${short}`) || long.some((l) => o.name === `--${l}`));
}

/** The values of `-short` / `--long` options, in order (null: missing or not static). */
export function values(opts: Option[], short: string | null, ...long: string[]): Array<string | null> {
  return opts.filter((o) => (short !== null && o.name === `-${short}`) || long.some((l) => o.name === `--${l}`)).map((o) => o.value);
}
