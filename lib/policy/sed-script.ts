/**
 * Reads a GNU sed script far enough to know its file effects (field case C23-6; the bug class of
 * anthropics/claude-code GHSA-7mv8-j34q-vp7q): `w file` / `W file` / `s///w file` write a file,
 * `r file` / `R file` read one, `e command` and the `s///e` flag run a command. Syntax follows the
 * GNU sed manual ("sed scripts", "Commands"); anything this reader does not recognise makes the
 * script "not understood", which the policy treats as not read-only.
 */

/** What a sed script does besides printing. */
export interface SedEffects {
  writes: string[];
  reads: string[];
  /** `e` command or `s///e`: runs shell commands. */
  executes: boolean;
  /** False when the script has syntax this reader does not follow. */
  understood: boolean;
}

/**
 * Analyses `script` (all `-e` expressions joined with newlines, or the first operand).
 * Never throws.
 */
export function analyzeSedScript(script: string): SedEffects {
  const out: SedEffects = { writes: [], reads: [], executes: false, understood: true };
  const r = new Reader(script);
  try {
    while (!r.done()) {
      r.skip(/[\s;]/);
      if (r.done()) break;
      if (r.peek() === "#") {
        r.untilEol();
        continue;
      }
      readAddresses(r);
      r.skip(/\s/);
      while (r.peek() === "!") {
        r.next();
        r.skip(/\s/);
      }
      command(r, out);
    }
  } catch {
    out.understood = false;
  }
  return out;
}

class Reader {
  pos = 0;
  constructor(readonly s: string) {}
  done(): boolean {
    return this.pos >= this.s.length;
  }
  peek(): string {
    return this.s[this.pos] ?? "";
  }
  next(): string {
    if (this.done()) throw new Error("unexpected end of script");
    return this.s[this.pos++];
  }
  skip(re: RegExp): void {
    while (!this.done() && re.test(this.peek())) this.pos++;
  }
  /** Text up to (not including) the end of the line; consumes the newline. */
  untilEol(): string {
    const end = this.s.indexOf("\n", this.pos);
    const text = this.s.slice(this.pos, end === -1 ? undefined : end);
    this.pos = end === -1 ? this.s.length : end + 1;
    return text;
  }
  /** Text up to `;`, a newline or `}`. */
  untilSeparator(): string {
    const start = this.pos;
    while (!this.done() && !/[;\n}]/.test(this.peek())) this.pos++;
    return this.s.slice(start, this.pos).trim();
  }
  /** Text up to the unescaped delimiter `d` (consumed). */
  delimited(d: string): string {
    let text = "";
    for (;;) {
      const ch = this.next();
      if (ch === d) return text;
      if (ch === "\\") text += ch + this.next();
      else text += ch;
    }
  }
}

function readAddresses(r: Reader): void {
  if (!readAddress(r)) return;
  r.skip(/[ \t]/);
  if (r.peek() !== ",") return;
  r.next();
  r.skip(/[ \t]/);
  if (r.peek() === "+" || r.peek() === "~") {
    r.next();
    r.skip(/\d/);
    return;
  }
  if (!readAddress(r)) throw new Error("missing second address");
}

function readAddress(r: Reader): boolean {
  const ch = r.peek();
  if (/\d/.test(ch)) {
    r.skip(/\d/);
    if (r.peek() === "~") {
      r.next();
      r.skip(/\d/);
    }
    return true;
  }
  if (ch === "$") {
    r.next();
    return true;
  }
  if (ch === "/" || ch === "\\") {
    r.next();
    const delim = ch === "/" ? "/" : r.next();
    r.delimited(delim);
    r.skip(/[IM]/);
    return true;
  }
  return false;
}

/** Reads one command (after its address) and records its effects. */
function command(r: Reader, out: SedEffects): void {
  const c = r.next();
  switch (c) {
    case "{":
    case "}":
      return;
    case "=": case "d": case "D": case "g": case "G": case "h": case "H": case "n": case "N":
    case "p": case "P": case "x": case "z": case "F":
      return endOfCommand(r);
    case "l": case "L": case "q": case "Q":
      r.skip(/[ \t]/);
      r.skip(/\d/);
      return endOfCommand(r);
    case ":":
      if (!r.untilSeparator()) throw new Error("label missing");
      return;
    case "b": case "t": case "T": case "v":
      r.skip(/[ \t]/);
      r.untilSeparator();
      return;
    case "a": case "i": case "c":
      textArgument(r);
      return;
    case "r": case "R":
      out.reads.push(fileArgument(r));
      return;
    case "w": case "W":
      out.writes.push(fileArgument(r));
      return;
    case "e":
      out.executes = true;
      r.untilEol();
      return;
    case "s":
      substitute(r, out);
      return;
    case "y": {
      const d = r.next();
      r.delimited(d);
      r.delimited(d);
      return endOfCommand(r);
    }
    default:
      throw new Error(`unknown command ${c}`);
  }
}

function substitute(r: Reader, out: SedEffects): void {
  const d = r.next();
  if (d === "\n" || d === "\\") throw new Error("bad delimiter");
  r.delimited(d);
  r.delimited(d);
  for (;;) {
    const f = r.peek();
    if (/[gpiImM0-9]/.test(f) && f !== "") {
      r.next();
    } else if (f === "e") {
      r.next();
      out.executes = true;
    } else if (f === "w") {
      r.next();
      out.writes.push(fileArgument(r));
      return;
    } else {
      return endOfCommand(r);
    }
  }
}

/** `a text`, `a\` + newline + text lines continued with a trailing backslash. */
function textArgument(r: Reader): void {
  for (;;) {
    const line = r.untilEol();
    if (!/(^|[^\\])(\\\\)*\\$/.test(line)) return;
  }
}

/** A file name: the rest of the line (GNU sed: `;` is part of the name). */
function fileArgument(r: Reader): string {
  r.skip(/[ \t]/);
  const name = r.untilEol();
  if (!name) throw new Error("file name missing");
  return name;
}

function endOfCommand(r: Reader): void {
  r.skip(/[ \t]/);
  const ch = r.peek();
  if (ch === "" || ch === ";" || ch === "\n" || ch === "}" || ch === "#") return;
  throw new Error(`unexpected ${ch}`);
}
