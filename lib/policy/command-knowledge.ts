import path from "node:path";
import { SHELL_NAMES, type Argv, type ArgvToken } from "@/lib/policy/command-pattern";
import { analyzeSedScript } from "@/lib/policy/sed-script";

/**
 * What the policy knows about individual programs, independent of any rule:
 * - wrappers that run another command (`env`, `timeout 5`, `nice`, `xargs`, `sudo`, `sh -c`…),
 *   so the command they run is classified too (field case C20/C21, "prefix words");
 * - file effects of common programs: which operands they read and write (`tee`, `cp`, `sed -i`,
 *   `sed w`, `dd of=`, `git --output`, `find -delete`…, C23), and options that run other
 *   programs (`find -exec`, `sed e`, `rg --pre`, `git -c`…), which make a command not read-only
 *   whatever rule allows it;
 * - commands that print the environment (`printenv`, `env`, `/proc/*\/environ`, C21-9).
 * Option syntax follows each program's GNU manual; GNU tools accept options after operands and
 * unambiguous prefixes of long options (`--out` for `--output`), and so does this reader.
 */

/** A decision the built-in knowledge forces, whatever the rules say. */
export interface Floor {
  decision: "ask" | "deny";
  reason: string;
}

/** The effects of one command layer. */
export interface Effects {
  /** Path operands the command reads (expanded values, relative to its working directory). */
  reads: string[];
  /** Path operands the command creates, changes or deletes. */
  writes: string[];
  floors: Floor[];
  /** Shell source the command runs (`bash -c STRING`, `eval ARGS`): parsed and classified too. null = not static. */
  scripts: Array<{ via: string; source: string | null }>;
}

/** One command in a chain of wrappers: `timeout 5 xargs grep x` is timeout → xargs → grep. */
export interface Layer {
  argv: Argv;
  /** Looked through: its decision comes from the command it runs (env, nice, timeout…). */
  transparent: boolean;
  effects: Effects;
}

function noEffects(): Effects {
  return { reads: [], writes: [], floors: [], scripts: [] };
}

const ask = (reason: string): Floor => ({ decision: "ask", reason });

// ---------------------------------------------------------------------------------------------
// Option parsing (getopt_long-like)
// ---------------------------------------------------------------------------------------------

interface OptionSpec {
  /** Short option letters that take a value (`-o FILE`, `-oFILE`). */
  shortValue?: string;
  /** Short option letters whose value is optional and only attached (`-i[SUFFIX]`). */
  shortOptional?: string;
  /** Long option names that take a value (`--output FILE`, `--output=FILE`). */
  longValue?: string[];
  /** POSIX style: options end at the first operand (wrappers); otherwise GNU permutation. */
  stopAtOperand?: boolean;
}

interface Option {
  /** `-o` or `--output` (long names as written, possibly abbreviated). */
  name: string;
  value: string | null;
}

interface Operand {
  value: string | null;
  glob: boolean;
  index: number;
}

interface ParsedArgs {
  options: Option[];
  operands: Operand[];
}

function parseArgs(tokens: ArgvToken[], spec: OptionSpec): ParsedArgs {
  const options: Option[] = [];
  const operands: Operand[] = [];
  let onlyOperands = false;
  for (let i = 0; i < tokens.length; i++) {
    const { value: v, glob } = tokens[i];
    if (onlyOperands || v === null || v === "-" || !v.startsWith("-")) {
      operands.push({ value: v, glob, index: i });
      if (spec.stopAtOperand) onlyOperands = true;
      continue;
    }
    if (v === "--") {
      onlyOperands = true;
      continue;
    }
    if (v.startsWith("--")) {
      const eq = v.indexOf("=");
      const name = eq === -1 ? v : v.slice(0, eq);
      let value = eq === -1 ? null : v.slice(eq + 1);
      if (value === null && (spec.longValue ?? []).some((l) => longMatches(name, l))) value = tokens[++i]?.value ?? null;
      options.push({ name, value });
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const letter = v[j];
      if (spec.shortValue?.includes(letter)) {
        const attached = v.slice(j + 1);
        options.push({ name: `-${letter}`, value: attached !== "" ? attached : (tokens[++i]?.value ?? null) });
        break;
      }
      if (spec.shortOptional?.includes(letter)) {
        options.push({ name: `-${letter}`, value: v.slice(j + 1) || null });
        break;
      }
      options.push({ name: `-${letter}`, value: null });
    }
  }
  return { options, operands };
}

/** True when the long option `written` (`--out`) names `full` (`output`), abbreviations included. */
function longMatches(written: string, full: string): boolean {
  const name = written.replace(/^--/, "");
  return name === full || (name.length >= 2 && full.startsWith(name));
}

/** True when `opts` holds `-short` or `--long` (any of the given spellings). */
function has(opts: Option[], short: string | null, ...long: string[]): boolean {
  return opts.some((o) => (short !== null && o.name === `-${short}`) || long.some((l) => o.name.startsWith("--") && longMatches(o.name, l)));
}

function values(opts: Option[], short: string | null, ...long: string[]): Array<string | null> {
  return opts
    .filter((o) => (short !== null && o.name === `-${short}`) || long.some((l) => o.name.startsWith("--") && longMatches(o.name, l)))
    .map((o) => o.value);
}

/** Static operand values (operands not known statically are skipped: the caller already asks for them). */
function known(items: Array<string | null>): string[] {
  return items.filter((v): v is string => v !== null);
}

const tok = (value: string): ArgvToken => ({ value, glob: false });

// ---------------------------------------------------------------------------------------------
// Wrappers
// ---------------------------------------------------------------------------------------------

/**
 * Environment variables that only change formatting, so `VAR=x cmd` stays read-only. Anything else
 * (`PATH`, `LD_PRELOAD`, `GIT_PAGER`, `BASH_ENV`…) can make an allowed program run other code.
 */
export const HARMLESS_ENV_NAMES = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|CLICOLOR|COLUMNS|LINES|TERM)$/;

/**
 * `NAME=value` words from `start` (as `env` and `sudo` accept them before the command): asks for
 * each one that is not harmless. Returns the index of the command that follows them.
 */
function leadingAssignments(tokens: ArgvToken[], start: number, via: string, effects: Effects): number {
  let i = start;
  for (; i < tokens.length && tokens[i].value !== null && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[i].value!); i++) {
    const name = tokens[i].value!.slice(0, tokens[i].value!.indexOf("="));
    if (!HARMLESS_ENV_NAMES.test(name)) effects.floors.push(ask(`${via}: sets ${name} for the command it runs`));
  }
  return i;
}

/** A wrapper's reading of its arguments: the command it runs (null: none), its own effects. */
type Unwrapper = (tokens: ArgvToken[]) => { inner: ArgvToken[] | null; effects: Effects; transparent: boolean; openEnded?: boolean };

const WRAPPERS: Record<string, Unwrapper> = {
  env(tokens) {
    const effects = noEffects();
    const spec: OptionSpec = { shortValue: "uCS", longValue: ["unset", "chdir", "split-string"], stopAtOperand: true };
    const { options, operands } = parseArgs(tokens, spec);
    if (has(options, "S", "split-string")) effects.floors.push(ask("unclassifiable: env -S splits a string into a command"));
    if (has(options, "C", "chdir")) effects.floors.push(ask("env --chdir: runs the command in another directory"));
    const i = leadingAssignments(tokens, operands.length ? operands[0].index : tokens.length, "env", effects);
    if (i >= tokens.length) {
      effects.floors.push(ask("env: prints the environment"));
      return { inner: null, effects, transparent: false };
    }
    return { inner: tokens.slice(i), effects, transparent: true };
  },
  command(tokens) {
    const { options, operands } = parseArgs(tokens, { stopAtOperand: true });
    if (has(options, "v") || has(options, "V")) return { inner: null, effects: noEffects(), transparent: false };
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects: noEffects(), transparent: true };
  },
  builtin: (tokens) => ({ inner: tokens.length ? tokens : null, effects: noEffects(), transparent: true }),
  exec(tokens) {
    const { operands } = parseArgs(tokens, { shortValue: "a", stopAtOperand: true });
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects: noEffects(), transparent: true };
  },
  nice: simpleWrapper({ shortValue: "n", longValue: ["adjustment"] }),
  nohup: simpleWrapper({}),
  // setsid leaves the process group, so a timeout could not stop what it runs: not looked through.
  setsid(tokens) {
    const { operands } = parseArgs(tokens, { stopAtOperand: true });
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects: noEffects(), transparent: false };
  },
  stdbuf: simpleWrapper({ shortValue: "ioe", longValue: ["input", "output", "error"] }),
  ionice(tokens) {
    const { options, operands } = parseArgs(tokens, { shortValue: "cnpPu", longValue: ["class", "classdata", "pid", "pgid", "uid"], stopAtOperand: true });
    if (has(options, "p", "pid") || has(options, "P", "pgid") || has(options, "u", "uid")) return { inner: null, effects: noEffects(), transparent: false };
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects: noEffects(), transparent: true };
  },
  time(tokens) {
    const { options, operands } = parseArgs(tokens, { shortValue: "fo", longValue: ["format", "output"], stopAtOperand: true });
    const effects = noEffects();
    effects.writes.push(...known(values(options, "o", "output")));
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: true };
  },
  timeout(tokens) {
    const { operands } = parseArgs(tokens, { shortValue: "sk", longValue: ["signal", "kill-after"], stopAtOperand: true });
    // The first operand is the duration; the command follows it.
    return { inner: operands.length > 1 ? tokens.slice(operands[1].index) : null, effects: noEffects(), transparent: true };
  },
  xargs(tokens) {
    const spec: OptionSpec = {
      shortValue: "adEILnPs",
      shortOptional: "eil",
      longValue: ["arg-file", "delimiter", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"],
      stopAtOperand: true,
    };
    const { options, operands } = parseArgs(tokens, spec);
    const effects = noEffects();
    effects.reads.push(...known(values(options, "a", "arg-file")));
    const replace = [...values(options, "I", "replace"), ...values(options, "i")].map((v) => v ?? "{}");
    const explicit = has(options, "I", "replace") || has(options, "i");
    let inner = operands.length ? tokens.slice(operands[0].index) : [tok("echo")];
    if (explicit) inner = inner.map((t) => (t.value !== null && replace.some((r) => t.value!.includes(r)) ? { value: null, glob: false } : t));
    return { inner, effects, transparent: false, openEnded: !explicit };
  },
  sudo(tokens) {
    const spec: OptionSpec = {
      shortValue: "CDghpRrtTUu",
      longValue: ["close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user"],
      stopAtOperand: true,
    };
    const { options, operands } = parseArgs(tokens, spec);
    if (has(options, "e", "edit") || has(options, "l", "list") || has(options, "v", "validate")) return { inner: null, effects: noEffects(), transparent: false };
    const effects = noEffects();
    const i = leadingAssignments(tokens, operands.length ? operands[0].index : tokens.length, "sudo", effects);
    return { inner: i < tokens.length ? tokens.slice(i) : null, effects, transparent: false };
  },
  doas(tokens) {
    const { operands } = parseArgs(tokens, { shortValue: "uC", stopAtOperand: true });
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects: noEffects(), transparent: false };
  },
  busybox: (tokens) => ({ inner: tokens.length ? tokens : null, effects: noEffects(), transparent: false }),
  coproc: (tokens) => ({ inner: tokens.length ? tokens : null, effects: noEffects(), transparent: false }),
};

function simpleWrapper(spec: OptionSpec): Unwrapper {
  return (tokens) => {
    const { operands } = parseArgs(tokens, { ...spec, stopAtOperand: true });
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects: noEffects(), transparent: true };
  };
}

/** `sh -c STRING`: options of POSIX shells; returns the command string token, if any. */
function shellEffects(tokens: ArgvToken[], name: string): Effects {
  const effects = noEffects();
  let hasC = false;
  let i = 0;
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null) {
      effects.floors.push(ask(`unclassifiable: ${name} option not static`));
      return effects;
    }
    if (v === "--" || v === "-") {
      i++;
      break;
    }
    if (!/^[-+]/.test(v)) break;
    if (["-o", "+o", "-O", "+O", "--rcfile", "--init-file"].includes(v)) {
      i++;
      continue;
    }
    if (/^-[A-Za-z]+$/.test(v) && v.includes("c")) hasC = true;
  }
  if (!hasC) {
    // `sh script.sh` runs a file; `sh` alone reads commands from stdin (`curl … | sh`).
    if (i < tokens.length && tokens[i].value !== null) effects.reads.push(tokens[i].value!);
    effects.floors.push(ask(`unclassifiable: ${name} runs commands from ${i < tokens.length ? "a script file" : "standard input"} the policy cannot read`));
    return effects;
  }
  effects.scripts.push({ via: `${name} -c`, source: tokens[i]?.value ?? null });
  return effects;
}

/**
 * Splits a command into layers: each wrapper, then the command it runs (recursively), then
 * commands that options of the innermost one run (`find -exec`). The first layer is `argv`
 * itself. Never throws.
 */
export function unwrapCommand(argv: Argv, depth = 0): Layer[] {
  const name = commandName(argv);
  const rest = argv.tokens.slice(1);
  const wrapper = name !== null && depth < 16 && Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
  if (wrapper) {
    const w = wrapper(rest);
    const layer: Layer = { argv, transparent: w.transparent && w.inner !== null, effects: w.effects };
    if (!w.inner) return [layer];
    const inner: Argv = { tokens: w.inner, openEnded: argv.openEnded || (w.openEnded ?? false) };
    return [layer, ...unwrapCommand(inner, depth + 1)];
  }
  const { normalized, effects, inner } = programEffects(name, argv);
  const layers: Layer[] = [{ argv: normalized, transparent: false, effects }];
  for (const cmd of inner) layers.push(...unwrapCommand({ tokens: cmd, openEnded: false }, depth + 1));
  return layers;
}

/** The basename of argv[0] when static (`/usr/bin/env` → `env`), else null. */
export function commandName(argv: Argv): string | null {
  const first = argv.tokens[0];
  if (!first || first.value === null || first.glob) return null;
  return path.posix.basename(first.value);
}

// ---------------------------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------------------------

interface ProgramResult {
  /** argv used for rule matching (git's global options removed). */
  normalized: Argv;
  effects: Effects;
  /** Commands run by options (`find -exec CMD ;`). */
  inner: ArgvToken[][];
}

/** A program the policy knows: how its options are written and what its operands do. */
interface Program {
  spec: OptionSpec;
  effects(parsed: ParsedArgs, tokens: ArgvToken[], effects: Effects): void;
}

/** A program whose operands are all read. */
function reader(spec: OptionSpec = {}): Program {
  return {
    spec,
    effects(parsed, _t, effects) {
      effects.reads.push(...known(parsed.operands.map((o) => o.value)));
      effects.reads.push(...known(values(parsed.options, null, "files0-from")), ...known(values(parsed.options, "X", "exclude-from")));
    },
  };
}

/** A program whose operands are all written (created, changed, deleted, or their metadata changed). */
function writer(spec: OptionSpec = {}, opts: { skipFirst?: boolean } = {}): Program {
  return {
    spec,
    effects(parsed, _t, effects) {
      const skip = opts.skipFirst && !has(parsed.options, null, "reference");
      effects.writes.push(...known((skip ? parsed.operands.slice(1) : parsed.operands).map((o) => o.value)));
      effects.reads.push(...known(values(parsed.options, "r", "reference")));
    },
  };
}

/** A program that always asks (or asks when `when` holds), whatever rule allows it. */
function asks(reason: string, when: (parsed: ParsedArgs, tokens: ArgvToken[]) => boolean = () => true): Program {
  return {
    spec: {},
    effects(parsed, tokens, effects) {
      if (when(parsed, tokens)) effects.floors.push(ask(reason));
    },
  };
}

const GREP_SPEC: OptionSpec = {
  shortValue: "efmABCdD",
  longValue: ["regexp", "file", "max-count", "after-context", "before-context", "context", "directories", "devices", "include", "exclude", "exclude-from", "exclude-dir", "label", "binary-files", "group-separator"],
};

const RG_SPEC: OptionSpec = {
  shortValue: "efgtTmABCEjMrd",
  longValue: ["regexp", "file", "glob", "iglob", "type", "type-not", "max-count", "after-context", "before-context", "context", "encoding", "threads", "max-columns", "replace", "max-depth", "pre", "pre-glob", "hostname-bin", "path-separator", "type-add", "type-clear", "ignore-file", "sort", "sortr", "colors", "color", "max-filesize", "dfa-size-limit", "regex-size-limit", "engine", "context-separator", "field-context-separator", "field-match-separator"],
};

const SED_SPEC: OptionSpec = { shortValue: "efl", shortOptional: "i", longValue: ["expression", "file", "line-length"] };

const COPY_SPEC: OptionSpec = { shortValue: "tSmog", longValue: ["target-directory", "suffix", "mode", "owner", "group", "strip-program"] };

/** grep and friends: the first operand is the pattern unless -e/-f give it. */
const grepLike: Program["effects"] = (parsed, _t, effects) => {
  const explicitPattern = has(parsed.options, "e", "regexp") || has(parsed.options, "f", "file");
  const files = explicitPattern ? parsed.operands : parsed.operands.slice(1);
  effects.reads.push(...known(files.map((o) => o.value)), ...known(values(parsed.options, "f", "file")), ...known(values(parsed.options, null, "exclude-from")));
};

const PROGRAMS: Record<string, Program> = {
  // Readers (GNU coreutils and friends).
  cat: reader(),
  head: reader({ shortValue: "nc", longValue: ["lines", "bytes"] }),
  tail: reader({ shortValue: "ncs", longValue: ["lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"] }),
  wc: reader({ longValue: ["files0-from"] }),
  stat: reader({ shortValue: "c", longValue: ["format", "printf"] }),
  ls: reader({ shortValue: "ITw", longValue: ["ignore", "hide", "format", "sort", "time", "time-style", "width", "tabsize", "color", "indicator-style", "block-size", "quoting-style"] }),
  du: reader({ shortValue: "BdtX", longValue: ["max-depth", "block-size", "threshold", "exclude", "exclude-from", "files0-from", "time-style", "time"] }),
  nl: reader({ shortValue: "bdfhilnsvw" }),
  od: reader({ shortValue: "AjNStw" }),
  md5sum: reader(),
  sha1sum: reader(),
  sha256sum: reader(),
  sha512sum: reader(),
  cksum: reader(),
  strings: reader({ shortValue: "nte" }),
  readlink: reader(),
  realpath: reader(),
  cmp: reader({ shortValue: "in", longValue: ["ignore-initial", "bytes"] }),
  comm: reader({ longValue: ["output-delimiter"] }),
  diff: reader({ shortValue: "CUFIxXS", longValue: ["context", "unified", "ignore-matching-lines", "exclude", "exclude-from", "starting-file", "label", "line-format", "from-file", "to-file", "horizon-lines", "width", "tabsize", "color", "palette"] }),
  less: reader(),
  more: reader(),
  grep: { spec: GREP_SPEC, effects: grepLike },
  egrep: { spec: GREP_SPEC, effects: grepLike },
  fgrep: { spec: GREP_SPEC, effects: grepLike },
  rg: {
    spec: RG_SPEC,
    effects(parsed, tokens, effects) {
      grepLike(parsed, tokens, effects);
      for (const o of ["pre", "hostname-bin"]) if (has(parsed.options, null, o)) effects.floors.push(ask(`rg --${o}: runs another program`));
      effects.reads.push(...known(values(parsed.options, null, "ignore-file")));
    },
  },
  sed: { spec: SED_SPEC, effects: sedEffects },
  file: {
    spec: { shortValue: "mfFeP", longValue: ["magic-file", "files-from", "separator", "exclude", "parameter"] },
    effects(parsed, _t, effects) {
      if (has(parsed.options, "C", "compile")) effects.floors.push(ask("file -C: writes a compiled magic file"));
      effects.reads.push(...known(parsed.operands.map((o) => o.value)), ...known(values(parsed.options, "m", "magic-file")), ...known(values(parsed.options, "f", "files-from")));
    },
  },
  tree: {
    spec: { shortValue: "LPIHTo", longValue: ["charset", "filelimit", "timefmt", "sort", "fromfile"] },
    effects(parsed, _t, effects) {
      effects.writes.push(...known(values(parsed.options, "o")));
      effects.reads.push(...known(parsed.operands.map((o) => o.value)));
    },
  },
  sort: {
    spec: { shortValue: "kotST", longValue: ["key", "field-separator", "output", "buffer-size", "temporary-directory", "compress-program", "files0-from", "parallel", "batch-size", "random-source", "sort"] },
    effects(parsed, _t, effects) {
      effects.writes.push(...known(values(parsed.options, "o", "output")));
      if (has(parsed.options, null, "compress-program")) effects.floors.push(ask("sort --compress-program: runs another program"));
      effects.reads.push(...known(parsed.operands.map((o) => o.value)), ...known(values(parsed.options, null, "files0-from")));
    },
  },
  uniq: {
    spec: { shortValue: "fsw", longValue: ["skip-fields", "skip-chars", "check-chars", "group", "all-repeated"] },
    effects(parsed, _t, effects) {
      const [input, output] = parsed.operands.map((o) => o.value);
      effects.reads.push(...known([input ?? null]));
      effects.writes.push(...known([output ?? null]));
    },
  },
  // Writers.
  rm: writer(),
  rmdir: writer(),
  unlink: writer(),
  shred: writer({ shortValue: "ns", longValue: ["iterations", "size", "random-source", "remove"] }),
  touch: writer({ shortValue: "dtr", longValue: ["date", "reference", "time"] }),
  mkdir: writer({ shortValue: "m", longValue: ["mode", "context"] }),
  truncate: writer({ shortValue: "sr", longValue: ["size", "reference"] }),
  tee: writer({ longValue: [] }),
  chmod: writer({ longValue: ["reference"] }, { skipFirst: true }),
  chown: writer({ longValue: ["reference", "from"] }, { skipFirst: true }),
  chgrp: writer({ longValue: ["reference"] }, { skipFirst: true }),
  mv: writer({ shortValue: "tS", longValue: ["target-directory", "suffix"] }),
  cp: { spec: COPY_SPEC, effects: copyLike },
  install: {
    spec: COPY_SPEC,
    effects(parsed, tokens, effects) {
      if (has(parsed.options, null, "strip-program")) effects.floors.push(ask("install --strip-program: runs another program"));
      if (has(parsed.options, "d", "directory")) effects.writes.push(...known(parsed.operands.map((o) => o.value)));
      else copyLike(parsed, tokens, effects);
    },
  },
  ln: {
    spec: { shortValue: "tS", longValue: ["target-directory", "suffix"] },
    effects(parsed, _t, effects) {
      const target = values(parsed.options, "t", "target-directory");
      const ops = parsed.operands.map((o) => o.value);
      if (target.length) effects.writes.push(...known(target));
      else if (ops.length === 1) effects.writes.push(...known([ops[0] === null ? null : path.posix.basename(ops[0])]));
      else effects.writes.push(...known([ops[ops.length - 1] ?? null]));
    },
  },
  dd: {
    spec: {},
    effects(parsed, _t, effects) {
      for (const o of parsed.operands) {
        if (o.value?.startsWith("of=")) effects.writes.push(o.value.slice(3));
        if (o.value?.startsWith("if=")) effects.reads.push(o.value.slice(3));
      }
    },
  },
  // The environment and the shell itself.
  printenv: asks("printenv: prints the environment"),
  export: asks("export: prints the environment", (parsed) => parsed.operands.length === 0),
  set: asks("set: prints every variable", (_p, tokens) => tokens.length === 0),
  eval: {
    spec: { stopAtOperand: true },
    effects(_p, tokens, effects) {
      effects.floors.push(ask("unclassifiable: eval runs its arguments as a new command line"));
      const staticArgs = tokens.every((t) => t.value !== null && !t.glob);
      effects.scripts.push({ via: "eval", source: staticArgs ? tokens.map((t) => t.value).join(" ") : null });
    },
  },
  source: asks("unclassifiable: source runs a script the policy cannot read"),
  ".": asks("unclassifiable: . runs a script the policy cannot read"),
  trap: {
    spec: { stopAtOperand: true },
    effects(parsed, _t, effects) {
      // `trap ACTION SIGNAL…`: ACTION is a command line run later by this shell.
      if (has(parsed.options, "p") || has(parsed.options, "l") || parsed.operands.length < 2) return;
      const action = parsed.operands[0].value;
      if (action !== "-" && action !== "") effects.scripts.push({ via: "trap", source: action });
    },
  },
  alias: {
    spec: {},
    effects(parsed, _t, effects) {
      if (parsed.operands.some((o) => o.value === null || o.value.includes("="))) {
        effects.floors.push(ask("unclassifiable: alias definitions change how later commands are read"));
      }
    },
  },
};

/**
 * Programs whose options can run other programs or write files: a glob that may expand to an
 * option (`*` matching a file named `-delete`), or arguments appended by xargs, make them ask.
 */
const OPTION_SENSITIVE = new Set(["find", "sed", "git", "sort", "rg", "tree", "file", "tee", "cp", "mv", "ln", "install", "dd", "tar", "rsync", "zip", "unzip", "diff", "uniq", "touch", "truncate", "chmod", "chown"]);

function copyLike(parsed: ParsedArgs, _t: ArgvToken[], effects: Effects): void {
  const target = values(parsed.options, "t", "target-directory");
  const ops = parsed.operands.map((o) => o.value);
  if (target.length) {
    effects.writes.push(...known(target));
    effects.reads.push(...known(ops));
  } else {
    effects.writes.push(...known([ops[ops.length - 1] ?? null]));
    effects.reads.push(...known(ops.slice(0, -1)));
  }
}

function sedEffects(parsed: ParsedArgs, _t: ArgvToken[], effects: Effects): void {
  const expressions = values(parsed.options, "e", "expression");
  const scriptFiles = values(parsed.options, "f", "file");
  let operands = parsed.operands;
  let script: string | null;
  if (expressions.length || scriptFiles.length) {
    script = expressions.some((e) => e === null) ? null : expressions.join("\n");
  } else {
    script = operands[0]?.value ?? null;
    operands = operands.slice(1);
  }
  const files = known(operands.map((o) => o.value));
  if (scriptFiles.length) effects.floors.push(ask("sed -f: the script is in a file the policy does not read"));
  if (has(parsed.options, "i", "in-place")) effects.writes.push(...files);
  else effects.reads.push(...files);
  if (has(parsed.options, null, "sandbox")) return; // sed refuses e/r/w in sandbox mode
  if (script === null) return; // not static: the caller already asks
  const analysis = analyzeSedScript(script);
  if (!analysis.understood) effects.floors.push(ask("sed: script not understood, may write files or run commands"));
  if (analysis.executes) effects.floors.push(ask("sed e: runs shell commands"));
  effects.writes.push(...analysis.writes);
  effects.reads.push(...analysis.reads);
}

/** git global options that take a value, and whether they are safe. */
const GIT_GLOBAL_VALUE = ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix", "--config-env", "--list-cmds", "--attr-source"];

/**
 * git: strips global options so `git -C dir --no-pager log -1` matches `git log *`; `-c`,
 * `--config-env` and `--exec-path` can make git run any program (core.pager, core.fsmonitor,
 * aliases); `--output` of diff/log/show writes a file; `-C`, `--git-dir`, `--work-tree` are read.
 */
function gitEffects(tokens: ArgvToken[]): { normalized: ArgvToken[]; effects: Effects } {
  const effects = noEffects();
  let dir: string | null = null;
  let i = 0;
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null) {
      effects.floors.push(ask("unclassifiable: git option not static"));
      break;
    }
    if (!v.startsWith("-")) break;
    const eq = v.indexOf("=");
    const name = v.startsWith("--") && eq !== -1 ? v.slice(0, eq) : v;
    const takesValue = GIT_GLOBAL_VALUE.includes(name);
    const value = !takesValue ? null : v.startsWith("--") && eq !== -1 ? v.slice(eq + 1) : (tokens[++i]?.value ?? null);
    if (name === "-c" || name === "--config-env" || name === "--exec-path") effects.floors.push(ask(`git ${name}: configuration can make git run other programs`));
    if (name === "-C" && value !== null) dir = dir && !value.startsWith("/") ? `${dir}/${value}` : value;
    if ((name === "--git-dir" || name === "--work-tree") && value !== null) effects.reads.push(value);
  }
  const sub = tokens.slice(i);
  const parsed = parseArgs(sub.slice(1), { longValue: ["output"] });
  const inDir = (p: string): string => (dir && !p.startsWith("/") ? `${dir}/${p}` : p);
  if (dir) effects.reads.push(dir);
  effects.writes.push(...known(values(parsed.options, null, "output")).map(inDir));
  if (has(parsed.options, "O", "open-files-in-pager")) effects.floors.push(ask("git grep -O: runs a pager program"));
  // Without a repository git diff and git grep read any path they are given, outside the
  // workspace too (`git diff --no-index /etc/shadow x`).
  if ((sub[0]?.value === "diff" || sub[0]?.value === "grep") && sub.some((t) => t.value === "--no-index")) {
    effects.floors.push(ask(`git ${sub[0].value} --no-index: reads arbitrary files, not the repository`));
  }
  return { normalized: sub, effects };
}

/**
 * find: starting points are read (written with -delete); -exec/-execdir/-ok/-okdir run the
 * command that follows (classified as its own part); -fprint* write files (GNU find manual).
 */
function findEffects(tokens: ArgvToken[]): { effects: Effects; inner: ArgvToken[][] } {
  const effects = noEffects();
  const inner: ArgvToken[][] = [];
  let i = 0;
  while (i < tokens.length && tokens[i].value !== null && /^-[HLP]$|^-D$|^-O\d*$/.test(tokens[i].value!)) {
    if (tokens[i].value === "-L") effects.floors.push(ask(FOLLOWS_LINKS("find -L")));
    i += tokens[i].value === "-D" ? 2 : 1;
  }
  const starts: string[] = [];
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null || v.startsWith("-") || v === "(" || v === "!" || v === ",") break;
    starts.push(v);
  }
  if (starts.length === 0) starts.push(".");
  let deletes = false;
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null) continue;
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(v)) {
      const cmd: ArgvToken[] = [];
      for (i++; i < tokens.length && tokens[i].value !== ";" && tokens[i].value !== "+"; i++) {
        const t = tokens[i];
        cmd.push(t.value !== null && t.value.includes("{}") ? { value: null, glob: false } : t);
      }
      effects.floors.push(ask(`find ${v}: runs ${cmd[0]?.value ?? "a command"}`));
      if (cmd.length) inner.push(cmd);
    } else if (v === "-follow") {
      effects.floors.push(ask(FOLLOWS_LINKS("find -follow")));
    } else if (v === "-delete") {
      deletes = true;
    } else if (["-fprint", "-fprint0", "-fls", "-fprintf"].includes(v)) {
      const target = tokens[i + 1]?.value;
      if (target != null) effects.writes.push(target);
      effects.floors.push(ask(`find ${v}: writes a file`));
    }
  }
  if (deletes) {
    effects.floors.push(ask("find -delete: deletes files"));
    effects.writes.push(...starts);
  } else {
    effects.reads.push(...starts);
  }
  return { effects, inner };
}

/** Any spelling of a process environment file (`/proc/self/environ`, `/proc/1/task/1/environ`), after lexical normalisation (`/proc/1/./environ`). */
const PROC_ENVIRON = /^\/proc\/[^/]*\/(task\/[^/]*\/)?environ$/;

function isProcEnviron(value: string): boolean {
  return value.startsWith("/") && PROC_ENVIRON.test(path.posix.normalize(value));
}

/** Why following symlinks during a recursive walk asks: a link inside the workspace can lead anywhere. */
const FOLLOWS_LINKS = (what: string) => `${what}: follows symlinks while recursing, which can lead out of the workspace`;

/**
 * Options that make a recursive reader follow every symlink it meets (GNU grep -R, ripgrep -L,
 * du -L, tree -l, ls -RL). The paths a command names are checked physically, but links found
 * during the walk are not, so these ask.
 */
const LINK_FOLLOWING: Record<string, (o: Option[]) => boolean> = {
  grep: (o) => has(o, "R", "dereference-recursive"),
  egrep: (o) => has(o, "R", "dereference-recursive"),
  fgrep: (o) => has(o, "R", "dereference-recursive"),
  rg: (o) => has(o, "L", "follow"),
  du: (o) => has(o, "L", "dereference"),
  tree: (o) => has(o, "l", "follow"),
  ls: (o) => has(o, "R", "recursive") && has(o, "L", "dereference"),
};

/** The effects of a program that is not a wrapper, and its argv for rule matching. */
function programEffects(name: string | null, argv: Argv): ProgramResult {
  const rest = argv.tokens.slice(1);
  let effects = noEffects();
  let normalized = argv;
  const inner: ArgvToken[][] = [];
  if (name === null) return { normalized, effects, inner };
  if (SHELL_NAMES.has(name)) {
    // `sh -c STRING`: the string is parsed and classified like the outer line.
    effects = shellEffects(rest, name);
  } else if (name === "git") {
    const g = gitEffects(rest);
    effects = g.effects;
    normalized = { tokens: [argv.tokens[0], ...g.normalized], openEnded: argv.openEnded };
  } else if (name === "find") {
    const f = findEffects(rest);
    effects = f.effects;
    inner.push(...f.inner);
  } else if (Object.hasOwn(PROGRAMS, name)) {
    const program = PROGRAMS[name];
    const parsed = parseArgs(rest, program.spec);
    program.effects(parsed, rest, effects);
    if (Object.hasOwn(LINK_FOLLOWING, name) && LINK_FOLLOWING[name](parsed.options)) effects.floors.push(ask(FOLLOWS_LINKS(`${name}`)));
  }
  for (const t of rest) {
    if (t.value !== null && isProcEnviron(t.value)) effects.floors.push(ask(`${name}: reads a process environment (${t.value})`));
  }
  if (OPTION_SENSITIVE.has(name)) {
    if (rest.some((t) => t.glob && t.value !== null && /^[*?[]/.test(t.value))) effects.floors.push(ask(`${name}: a glob may expand to an option`));
    if (argv.openEnded) effects.floors.push(ask(`${name}: xargs may add options`));
  }
  return { normalized, effects, inner };
}
