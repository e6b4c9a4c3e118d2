import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Language, Parser, type Node as TsNode } from "web-tree-sitter";

/**
 * Parses a bash command line into a small tree of the things the policy needs: every simple
 * command (wherever it hides: lists, pipelines, subshells, `{ }` groups, `$(…)`, backticks,
 * `<( )`/`>( )`, `VAR=$(…)` prefixes, double-quoted strings, heredocs, function bodies,
 * if/for/while/case), its words as literal/variable/dynamic pieces, and its redirections.
 *
 * The grammar is tree-sitter-bash (WASM, through web-tree-sitter). Where the grammar and bash
 * may disagree, the result carries a `problem` and the policy asks instead of allowing
 * (field cases C20, C21: "anything the parser cannot classify fails closed").
 */

/** One piece of a shell word, before expansion. */
export type WordPart =
  /** Text that reaches the command as is (after quote removal). Unquoted text may still glob or brace-expand. */
  | { kind: "literal"; text: string; quoted: boolean }
  /** `$name` / `${name}`: resolved by the policy from the child environment. */
  | { kind: "variable"; name: string; quoted: boolean }
  /** A leading unquoted `~` (the child's HOME). */
  | { kind: "tilde" }
  /** Known only when the command runs: `$(…)`, `$((…))`, `${x:-y}`, `$1`, `<(…)`, `{a,b}`… */
  | { kind: "dynamic"; what: string };

/** A word as written (`text`) and as pieces (`parts`). */
export interface ShellWord {
  text: string;
  parts: WordPart[];
}

/** One redirection: `2>>file`, `>&2`, `<<EOF`, `<<<word`. */
export interface ShellRedirect {
  text: string;
  /** The operator: `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `>&`, `<&`, `>&-`, `<&-`, `<<`, `<<-`, `<<<`. */
  operator: string;
  /** The explicit file descriptor (`2>`), or null. */
  fd: number | null;
  /** The target word; null for heredocs and `>&-`. */
  target: ShellWord | null;
  /**
   * What a here-string or a heredoc with an unquoted delimiter feeds the command after
   * expansion: the here-string's word, or for a heredoc the names of the variables its body
   * expands (`$X`, `${X…}`, positional and special parameters).
   */
  content?: { word: ShellWord } | { variables: string[] };
}

/** A `NAME=value` assignment (prefix of a command, or alone). */
export interface ShellAssignment {
  text: string;
  name: string;
  /** null for arrays `a=(…)`, whose elements are not tracked. */
  value: ShellWord | null;
}

/** A simple command: assignments, words (argv before expansion) and redirections. */
export interface SimpleCommand {
  kind: "command";
  /** The command's text as written (with its redirections). */
  text: string;
  assignments: ShellAssignment[];
  words: ShellWord[];
  redirects: ShellRedirect[];
  /** Scripts that run while this command's words are expanded (`$(…)`, `<(…)`, backticks). */
  nested: ShellNode[];
}

/**
 * The execution structure, reduced to what decides the working directory of later commands:
 * `sequence` runs items in order in the same shell; `and`/`or` run `right` depending on `left`;
 * `not` swaps success and failure; `isolated` runs in a child shell (subshell, pipeline element,
 * background job, substitution), so `cd` inside it does not leak; `compound` is an if/case/loop
 * whose items may run zero or more times; `function` is a body that runs when called.
 */
export type ShellNode =
  | SimpleCommand
  | { kind: "sequence"; items: ShellNode[] }
  | { kind: "and" | "or"; left: ShellNode; right: ShellNode }
  | { kind: "not"; body: ShellNode }
  | { kind: "isolated"; body: ShellNode }
  | { kind: "compound"; items: ShellNode[] }
  | { kind: "function"; name: string; body: ShellNode };

/** The parse of one command line. */
export interface ParsedScript {
  root: ShellNode;
  /**
   * Why (parts of) the line cannot be classified statically (syntax errors, constructs the
   * grammar may read differently from bash). Non-empty means the policy must not allow.
   */
  problems: string[];
  /** Variable names assigned anywhere in the line (`x=…`, `for x in`, `declare x`, `export x=…`). */
  assignedNames: Set<string>;
}

/** Longest command line the parser accepts (characters); longer lines are unclassifiable. */
export const MAX_PARSE_CHARS = 100_000;
/** Deepest nesting the walk follows; deeper structures are unclassifiable. */
const MAX_DEPTH = 400;
/**
 * CPU time one `parseShell` call may spend in the grammar (ms, all nested parses together).
 * Parsing runs on the event loop and some shapes are slow (a 25 kB pipeline takes ~0.7 s), so a
 * line that needs more is unclassifiable instead of stalling the server.
 */
const PARSE_BUDGET_MS = 300;

// ---------------------------------------------------------------------------------------------
// Loading the grammar (once per process)
// ---------------------------------------------------------------------------------------------

/**
 * The loaded parser, on `globalThis`: Next.js loads this module once per route bundle, and the
 * grammar (a WebAssembly module, about 0.3 s to initialise) is the same for all of them. A parser
 * keeps nothing of one parse for the next.
 */
const globalForParser = globalThis as unknown as { agentReachShellParser?: Promise<Parser> };

/**
 * Resolves a file inside an installed package. Tries the module's own location first, then the
 * process's working directory: under Next.js the module may be bundled (its `import.meta.url`
 * then points into `.next/`), while `node_modules` stays beside the project (`serverExternalPackages`).
 */
function resolvePackageFile(specifier: string): string {
  const bases = [import.meta.url, path.join(process.cwd(), "package.json")];
  for (const base of bases) {
    try {
      const resolved = createRequire(base).resolve(specifier);
      if (fs.existsSync(resolved)) return resolved;
    } catch {
      // try the next base
    }
  }
  throw new Error(`Cannot locate ${specifier}; is the package installed?`);
}

/** The shared bash parser (web-tree-sitter initialised once, grammar loaded once). */
async function getParser(): Promise<Parser> {
  globalForParser.agentReachShellParser ??= (async () => {
    const runtimeWasm = resolvePackageFile("web-tree-sitter/web-tree-sitter.wasm");
    await Parser.init({ locateFile: () => runtimeWasm });
    // Resolved at run time from node_modules; the comment keeps Turbopack's output tracing from
    // treating the read as "any file of the project".
    const grammarWasm = resolvePackageFile("tree-sitter-bash/tree-sitter-bash.wasm");
    const language = await Language.load(fs.readFileSync(/*turbopackIgnore: true*/ grammarWasm));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })().catch((err: unknown) => {
    globalForParser.agentReachShellParser = undefined; // allow a retry after a transient failure
    throw err;
  });
  return globalForParser.agentReachShellParser;
}

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------

/**
 * Parses `source` (one `bash -c` command line). Never throws for any input string: syntax the
 * parser cannot read is reported in `problems` while every command it could find is still
 * returned (so a denied command inside broken syntax is still denied).
 * Errors: only if the grammar itself cannot be loaded (a broken installation).
 */
export async function parseShell(source: string): Promise<ParsedScript> {
  const parser = await getParser();
  const walker = new Walker(parser);
  if (source.length > MAX_PARSE_CHARS) {
    return { root: { kind: "sequence", items: [] }, problems: [`command line longer than ${MAX_PARSE_CHARS} characters`], assignedNames: new Set() };
  }
  checkRawText(source, walker.problems);
  let root: ShellNode;
  try {
    root = walker.script(source, 0);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    // Deep structure beyond what the depth checks saw (call stack exhausted): ask.
    return { root: { kind: "sequence", items: [] }, problems: ["nesting too deep"], assignedNames: walker.assignedNames };
  }
  return { root, problems: [...new Set(walker.problems)], assignedNames: walker.assignedNames };
}

/** Text-level checks for places where tree-sitter and bash split words differently. */
function checkRawText(source: string, problems: string[]): void {
  // Bash treats CR and other control characters as word characters; the grammar treats some as
  // blanks, so "git status\r" would look like "git status".
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x08\x0b-\x1f\x7f]/.test(source)) problems.push("control characters in the command line");
  // A backslash-newline inside a word joins two words in bash ("r\<newline>m" is rm); the grammar
  // splits them.
  if (/[^\s]\\\r?\n[^\s]/.test(source)) problems.push("line continuation inside a word");
}

const STATEMENT_TYPES = new Set([
  "command", "declaration_command", "unset_command", "test_command", "variable_assignment",
  "variable_assignments", "redirected_statement", "list", "pipeline", "subshell", "compound_statement",
  "if_statement", "while_statement", "for_statement", "c_style_for_statement", "case_statement",
  "function_definition", "negated_command",
]);

/** Converts tree-sitter nodes into the `ShellNode` structure, collecting problems on the way. */
class Walker {
  readonly problems: string[] = [];
  readonly assignedNames = new Set<string>();
  /** The script being walked (node indexes are UTF-16 offsets into it). */
  private source = "";
  private readonly deadline = Date.now() + PARSE_BUDGET_MS;

  constructor(private readonly parser: Parser) {}

  /** Parses and converts a whole script (the top level, a backtick body, a `bash -c` string). */
  script(source: string, depth: number): ShellNode {
    if (depth > MAX_DEPTH) {
      this.problems.push("nesting too deep");
      return { kind: "sequence", items: [] };
    }
    const tree = this.parser.parse(source, null, { progressCallback: () => Date.now() > this.deadline });
    if (!tree) {
      this.parser.reset(); // a cancelled parse would otherwise resume on the next call
      this.problems.push(`command line too complex to classify within ${PARSE_BUDGET_MS} ms`);
      return { kind: "sequence", items: [] };
    }
    const outer = this.source;
    this.source = source;
    try {
      if (tree.rootNode.hasError) this.problems.push("syntax the shell reader cannot follow, so not every command in the line could be checked");
      return this.statements(tree.rootNode.children, depth);
    } finally {
      this.source = outer;
      tree.delete();
    }
  }

  /** Joins two pieces of one word; a `$` before a quote would be `$'…'`/`$"…"`, which the pieces lost. */
  private append(target: ShellWord, piece: ShellWord): void {
    if (endsWithUnescapedDollar(target.text) && /^['"]/.test(piece.text)) this.problems.push(`quoting the shell reader splits differently from bash: ${target.text}${piece.text}`);
    appendWord(target, piece);
  }

  /** Between two word pieces only blanks may be left out (the grammar drops a leading `\ `). */
  private checkGap(from: number, to: number): void {
    const text = this.source.slice(from, to);
    if (!/^(?:[ \t\n]|\\\r?\n)*$/.test(text)) this.problems.push(`the shell reader could not tell which command ${JSON.stringify(text.trim())} belongs to, so what it does was not checked`);
  }

  /** A run of statements separated by `;`, `&`, newlines (program, `{ }`, do-group, branches). */
  private statements(children: readonly (TsNode | null)[], depth: number): ShellNode {
    const items: ShellNode[] = [];
    const nodes = children.filter((c): c is TsNode => c !== null);
    for (let i = 0; i < nodes.length; i++) {
      const child = nodes[i];
      if (!child.isNamed || child.type === "comment") continue;
      const item = this.statementOrOther(child, depth);
      if (!item) continue;
      // `cmd &` runs in the background, in a child shell.
      items.push(nodes[i + 1]?.type === "&" ? { kind: "isolated", body: item } : item);
    }
    return items.length === 1 ? items[0] : { kind: "sequence", items };
  }

  /** A statement, or the commands hidden in a non-statement node (ERROR nodes, stray words). */
  private statementOrOther(node: TsNode, depth: number): ShellNode | null {
    if (STATEMENT_TYPES.has(node.type)) return this.statement(node, depth + 1);
    if (node.type !== "ERROR") this.problems.push(`shell syntax the reader does not handle (${node.type})`);
    // Recover every command the parser still recognised inside the node.
    const nested: ShellNode[] = [];
    this.collectNested(node, nested, depth + 1);
    return nested.length ? { kind: "sequence", items: nested } : null;
  }

  private noteSyntax(node: TsNode): void {
    if (node.isError || node.isMissing) this.problems.push("syntax the shell reader cannot follow, so not every command in the line could be checked");
  }

  private statement(node: TsNode, depth: number): ShellNode {
    if (depth > MAX_DEPTH) {
      this.problems.push("nesting too deep");
      return { kind: "sequence", items: [] };
    }
    this.noteSyntax(node);
    switch (node.type) {
      case "command":
        return this.command(node, depth);
      case "declaration_command":
      case "unset_command":
        return this.declaration(node, depth);
      case "test_command":
        return this.testCommand(node, depth);
      case "variable_assignment":
      case "variable_assignments":
        return this.bareAssignments(node, depth);
      case "redirected_statement":
        return this.redirected(node, depth);
      case "list":
        return this.list(node, depth);
      case "pipeline":
        return this.pipeline(this.namedStatements(node), depth);
      case "subshell":
        return { kind: "isolated", body: this.statements(node.children, depth) };
      case "compound_statement":
        return this.compoundStatement(node, depth);
      case "negated_command":
        return { kind: "not", body: this.statements(node.children, depth) };
      case "function_definition":
        return this.functionDefinition(node, depth);
      case "if_statement":
      case "while_statement":
      case "for_statement":
      case "c_style_for_statement":
      case "case_statement":
        return this.control(node, depth);
      default:
        this.problems.push(`shell syntax the reader does not handle (${node.type})`);
        return { kind: "sequence", items: [] };
    }
  }

  private namedStatements(node: TsNode): TsNode[] {
    return node.namedChildren.filter((c): c is TsNode => c !== null && c.type !== "comment");
  }

  /** Every element of a pipeline runs in its own child shell. */
  private pipeline(elements: TsNode[], depth: number): ShellNode {
    return {
      kind: "sequence",
      items: elements.map((e) => ({ kind: "isolated" as const, body: this.statementOrOther(e, depth) ?? { kind: "sequence" as const, items: [] } })),
    };
  }

  private list(node: TsNode, depth: number): ShellNode {
    const [left, right] = this.namedStatements(node);
    const op = node.children.find((c) => c && !c.isNamed && (c.type === "&&" || c.type === "||"))?.type;
    const l = left ? this.statementOrOther(left, depth) : null;
    const r = right ? this.statementOrOther(right, depth) : null;
    if (!l || !r || !op) {
      this.problems.push("the line ends in the middle of a list of commands (after && or ||)");
      return { kind: "sequence", items: [l, r].filter((x): x is ShellNode => x !== null) };
    }
    return { kind: op === "&&" ? "and" : "or", left: l, right: r };
  }

  /** `{ …; }` groups, and `(( … ))` arithmetic commands (which the grammar also calls compound). */
  private compoundStatement(node: TsNode, depth: number): ShellNode {
    if (node.child(0)?.type === "((") {
      const nested: ShellNode[] = [];
      for (const c of node.children) if (c) this.collectNested(c, nested, depth);
      return {
        kind: "command",
        text: node.text,
        assignments: [],
        words: [literalWord("(("), { text: node.text, parts: [{ kind: "dynamic", what: "arithmetic command" }] }],
        redirects: [],
        nested,
      };
    }
    return this.statements(node.children, depth);
  }

  private functionDefinition(node: TsNode, depth: number): ShellNode {
    const body = node.childForFieldName("body");
    const name = node.childForFieldName("name")?.text ?? "";
    const redirects = this.redirectsOf(node.children.filter((c, i) => c && node.fieldNameForChild(i) === "redirect"), depth);
    let bodyNode: ShellNode = body ? this.statement(body, depth) : { kind: "sequence", items: [] };
    if (redirects.redirects.length) bodyNode = { kind: "sequence", items: [redirectOnly(node.text, redirects), bodyNode] };
    return { kind: "function", name, body: bodyNode };
  }

  /** if/while/until/for/select/case: words they expand run first; bodies may run 0..n times. */
  private control(node: TsNode, depth: number): ShellNode {
    const items: ShellNode[] = [];
    if (node.type === "for_statement") {
      const variable = node.childForFieldName("variable");
      if (variable) this.assignedNames.add(variable.text);
    }
    if (node.type === "c_style_for_statement") {
      items.push(this.arithmeticPseudoCommand(node, depth));
    }
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (!child || !child.isNamed || child.type === "comment") continue;
      const field = node.fieldNameForChild(i);
      if (node.type === "c_style_for_statement" && field !== "body") continue;
      if (STATEMENT_TYPES.has(child.type)) items.push(this.statement(child, depth + 1));
      else if (["do_group", "else_clause", "elif_clause", "case_item"].includes(child.type)) {
        items.push(this.clause(child, depth + 1));
      } else if (child.type === "variable_name") {
        continue;
      } else {
        // for-loop values, case subject: expanded like arguments.
        this.noteSyntax(child);
        this.collectNested(child, items, depth + 1);
      }
    }
    return { kind: "compound", items };
  }

  private clause(node: TsNode, depth: number): ShellNode {
    const items: ShellNode[] = [];
    const statementChildren: TsNode[] = [];
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (!child || !child.isNamed || child.type === "comment") continue;
      if (node.type === "case_item" && node.fieldNameForChild(i) === "value") {
        this.collectNested(child, items, depth); // patterns may hold substitutions
        continue;
      }
      statementChildren.push(child);
    }
    items.push(this.statements(statementChildren, depth));
    return { kind: "compound", items };
  }

  /** `for ((…))` heads: arithmetic, unclassifiable as a value but substitutions inside still run. */
  private arithmeticPseudoCommand(node: TsNode, depth: number): SimpleCommand {
    const nested: ShellNode[] = [];
    for (const field of ["initializer", "condition", "update"]) {
      for (const child of node.childrenForFieldName(field)) if (child) this.collectNested(child, nested, depth);
    }
    const head = node.text.slice(0, (node.childForFieldName("body")?.startIndex ?? node.endIndex) - node.startIndex).trim();
    return { kind: "command", text: head, assignments: [], words: [literalWord("(("), { text: head, parts: [{ kind: "dynamic", what: "arithmetic" }] }], redirects: [], nested };
  }

  /**
   * A simple command. The grammar splits one bash word into separate nodes when a quoted piece is
   * followed by a backslash escape (`'r'\m`, `X='a'\ls rm x`), and files every word after a
   * redirection under the redirection (`echo 2>/dev/null $(touch p)`). Both are undone here: word
   * pieces with no blank between them are one word, and only the first word after a redirection
   * operator is its target (bash(1) "REDIRECTION").
   */
  private command(node: TsNode, depth: number): SimpleCommand {
    const assignments: ShellAssignment[] = [];
    const words: ShellWord[] = [];
    const nested: ShellNode[] = [];
    const redirects: ShellRedirect[] = [];
    let tail: Tail | null = null;
    let end = node.startIndex;
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      const field = node.fieldNameForChild(i);
      // Anonymous argument tokens exist too: `"a"\$` ends with a "$" token.
      if (!child || (!child.isNamed && field !== "argument") || child.type === "comment") continue;
      this.checkGap(end, child.startIndex);
      end = child.endIndex;
      if (child.type === "variable_assignment") {
        const a = this.assignment(child, nested, depth);
        assignments.push(a);
        tail = { end: child.endIndex, word: a.value };
      } else if (field === "redirect" || child.type.endsWith("_redirect")) {
        const r = this.redirect(child, redirects, nested, depth);
        words.push(...r.extraWords);
        tail = r.tail;
      } else if (child.type === "command_name" || field === "argument") {
        const target = child.type === "command_name" ? (child.namedChild(0) ?? child) : child;
        const w = this.rawWord(target, nested, depth);
        if (tail && target.startIndex === tail.end) {
          if (tail.word) this.append(tail.word, w);
          tail.end = target.endIndex;
        } else {
          words.push(w);
          tail = { end: target.endIndex, word: w };
        }
      } else {
        this.problems.push(`shell syntax the reader does not handle inside a command (${child.type})`);
        this.collectNested(child, nested, depth);
      }
    }
    return {
      kind: "command",
      text: node.text,
      assignments: assignments.map((a) => ({ ...a, value: a.value && this.finishWord(a.value) })),
      words: this.withoutReservedWords(words.map(this.finishWord)),
      redirects: redirects.map(this.finishRedirect),
      nested,
    };
  }

  /**
   * A reserved word in command position (`{`, `then`, `do`, `fi`…) means the grammar misread the
   * structure (it does for `! { …; }`): the line is unclassifiable, and the words after the
   * reserved words are still classified as the command they most likely are (`then touch x`).
   */
  private withoutReservedWords(words: ShellWord[]): ShellWord[] {
    let i = 0;
    while (i < words.length && words[i].parts.length === 1 && isReservedWord(words[i].parts[0])) i++;
    if (i > 0) this.problems.push(`reserved word "${words[0].text}" where a command should be`);
    return words.slice(i);
  }

  /** `declare`/`export`/`local`/`readonly`/`typeset`/`unset`: a command whose words may be assignments. */
  private declaration(node: TsNode, depth: number): SimpleCommand {
    const words: ShellWord[] = [];
    const nested: ShellNode[] = [];
    let tail: Tail | null = null;
    for (const child of node.children) {
      if (!child || child.type === "comment") continue;
      if (!child.isNamed) {
        words.push(literalWord(child.type)); // the keyword
        continue;
      }
      if (tail?.word && child.startIndex === tail.end && child.type !== "variable_assignment") {
        this.append(tail.word, this.rawWord(child, nested, depth)); // `declare A='x'\y`: one word
        tail.end = child.endIndex;
        continue;
      }
      if (child.type === "variable_assignment") {
        const a = this.assignment(child, nested, depth);
        const w: ShellWord = { text: a.text, parts: a.value ? [{ kind: "literal", text: `${a.name}=`, quoted: true }, ...a.value.parts] : [{ kind: "dynamic", what: "array" }] };
        words.push(w);
        tail = { end: child.endIndex, word: w };
      } else {
        // `declare x`, `unset x`, `unset -v x`: the variable's value is no longer the environment's.
        if (child.type === "variable_name" || (node.type === "unset_command" && child.type === "word" && !child.text.startsWith("-"))) {
          this.assignedNames.add(child.text);
        }
        const w = this.rawWord(child, nested, depth);
        words.push(w);
        tail = { end: child.endIndex, word: w };
      }
    }
    return { kind: "command", text: node.text, assignments: [], words: words.map(this.finishWord), redirects: [], nested };
  }

  /** `[ … ]` and `[[ … ]]`: a command named `[`/`[[` whose arguments are the leaves of the test. */
  private testCommand(node: TsNode, depth: number): SimpleCommand {
    const words: ShellWord[] = [];
    const nested: ShellNode[] = [];
    const open = node.child(0)?.type ?? "[";
    words.push(literalWord(open));
    const leaves = (n: TsNode): void => {
      if (["binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression", "postfix_expression"].includes(n.type)) {
        for (const c of n.children) {
          if (!c) continue;
          if (c.isNamed) leaves(c);
          else if (!["(", ")"].includes(c.type)) words.push(literalWord(c.type));
        }
        return;
      }
      if (n.type === "test_operator") words.push(literalWord(n.text));
      else words.push(this.word(n, nested, depth));
    };
    for (const c of node.namedChildren) if (c && c.type !== "comment") leaves(c);
    words.push(literalWord(open === "[[" ? "]]" : "]"));
    return { kind: "command", text: node.text, assignments: [], words, redirects: [], nested };
  }

  private bareAssignments(node: TsNode, depth: number): SimpleCommand {
    const nested: ShellNode[] = [];
    const list = node.type === "variable_assignment" ? [node] : node.namedChildren.filter((c): c is TsNode => c?.type === "variable_assignment");
    const assignments = list.map((a) => this.assignment(a, nested, depth)).map((a) => ({ ...a, value: a.value && this.finishWord(a.value) }));
    return { kind: "command", text: node.text, assignments, words: [], redirects: [], nested };
  }

  private assignment(node: TsNode, nested: ShellNode[], depth: number): ShellAssignment {
    const nameNode = node.childForFieldName("name");
    const valueNode = node.childForFieldName("value");
    const name = nameNode?.type === "variable_name" ? nameNode.text : (nameNode?.text ?? "");
    if (nameNode?.type === "subscript") this.collectNested(nameNode, nested, depth);
    this.assignedNames.add(name.replace(/\[.*$/s, ""));
    if (!valueNode) return { text: node.text, name, value: { text: "", parts: [] } };
    if (valueNode.type === "array") {
      this.collectNested(valueNode, nested, depth);
      return { text: node.text, name, value: null };
    }
    return { text: node.text, name, value: this.rawWord(valueNode, nested, depth) };
  }

  private redirected(node: TsNode, depth: number): ShellNode {
    const body = node.childForFieldName("body");
    const redirectNodes = node.children.filter((c, i) => c && (node.fieldNameForChild(i) === "redirect" || c.type.endsWith("_redirect"))) as TsNode[];
    let end = body?.endIndex ?? node.startIndex;
    for (const r of redirectNodes) {
      this.checkGap(end, r.startIndex);
      end = r.endIndex;
    }
    const redirects = this.redirectsOf(redirectNodes, depth);
    const continuation = this.heredocContinuation(redirectNodes, depth);
    let result: ShellNode;
    if (!body) {
      result = redirectOnly(node.text, redirects);
    } else if (body.type === "command") {
      const cmd = this.command(body, depth);
      cmd.text = node.text.slice(0, continuation.cutAt ? continuation.cutAt - node.startIndex : undefined).trimEnd() || node.text;
      cmd.words.push(...redirects.extraWords);
      cmd.redirects.push(...redirects.redirects);
      cmd.nested.push(...redirects.nested);
      result = cmd;
    } else if (["list", "pipeline", "negated_command"].includes(body.type)) {
      // The grammar attaches `> f` in `a && b > f` / `a | b > f` to the whole list; bash binds it
      // to the last simple command (`b`), which matters after a `cd` (C23-5).
      result = attachToLast(this.statement(body, depth + 1), redirects);
    } else {
      // Redirections of a group/subshell/loop are opened by the current shell, before the body runs.
      if (redirects.extraWords.length) this.problems.push("words after the redirection of a compound command");
      result = { kind: "sequence", items: [redirectOnly(redirectText(redirects.redirects), redirects), this.statement(body, depth + 1)] };
    }
    return continuation.apply(result);
  }

  /**
   * The grammar attaches what follows a heredoc start on the same line (`cat <<EOF | sh`,
   * `cat <<EOF && rm x`) to the heredoc redirect; this puts it back into the structure.
   */
  private heredocContinuation(redirectNodes: TsNode[], depth: number): { cutAt: number | null; apply(n: ShellNode): ShellNode } {
    for (const r of redirectNodes) {
      if (r.type !== "heredoc_redirect") continue;
      for (let i = 0; i < r.childCount; i++) {
        const c = r.child(i);
        if (!c) continue;
        if (c.type === "pipeline") {
          const rest = this.namedStatements(c);
          return { cutAt: c.startIndex, apply: (n) => this.pipelineOf(n, rest, depth) };
        }
        if (r.fieldNameForChild(i) === "operator") {
          const right = r.childForFieldName("right");
          const op = c.type;
          return {
            cutAt: c.startIndex,
            apply: (n) => {
              const rn = right ? this.statementOrOther(right, depth) : null;
              if (!rn) return n;
              if (op === "&&" || op === "||") return { kind: op === "&&" ? "and" : "or", left: n, right: rn };
              this.problems.push(`${op} after a heredoc, which the shell reader does not follow`);
              return { kind: "sequence", items: [n, rn] };
            },
          };
        }
      }
    }
    return { cutAt: null, apply: (n) => n };
  }

  private pipelineOf(first: ShellNode, rest: TsNode[], depth: number): ShellNode {
    const tail = this.pipeline(rest, depth) as { kind: "sequence"; items: ShellNode[] };
    return { kind: "sequence", items: [{ kind: "isolated", body: first }, ...tail.items] };
  }

  /** Redirections outside a command node (`redirected_statement`), finished; `extraWords` are arguments. */
  private redirectsOf(nodes: (TsNode | null)[], depth: number): Redirects {
    const redirects: ShellRedirect[] = [];
    const nested: ShellNode[] = [];
    const extraWords: ShellWord[] = [];
    for (const r of nodes) if (r) extraWords.push(...this.redirect(r, redirects, nested, depth).extraWords);
    return { redirects: redirects.map(this.finishRedirect), nested, extraWords: extraWords.map(this.finishWord) };
  }

  /**
   * Converts one redirection (raw words; the caller finishes them). Returns the words the grammar
   * filed under it that are really arguments, and where the last word piece ended.
   */
  private redirect(node: TsNode, out: ShellRedirect[], nested: ShellNode[], depth: number): { extraWords: ShellWord[]; tail: Tail | null } {
    this.noteSyntax(node);
    const fdNode = node.childForFieldName("descriptor");
    const fd = fdNode ? Number(fdNode.text) : null;
    if (node.type === "file_redirect") {
      const operator = node.children.find((c) => c && !c.isNamed)?.type ?? "";
      const dests = node.childrenForFieldName("destination").filter((c): c is TsNode => c !== null);
      const groups: ShellWord[] = [];
      let tail: Tail | null = null;
      let end = node.children.find((c) => c && !c.isNamed)?.endIndex ?? node.startIndex;
      for (const d of dests) {
        this.checkGap(end, d.startIndex);
        end = d.endIndex;
        const w = this.rawWord(d, nested, depth);
        if (tail?.word && d.startIndex === tail.end) {
          this.append(tail.word, w);
          tail.end = d.endIndex;
        } else {
          groups.push(w);
          tail = { end: d.endIndex, word: w };
        }
      }
      const [target, ...extraWords] = groups;
      out.push({ text: target ? node.text.slice(0, (dests[0].startIndex - node.startIndex) + target.text.length) : node.text, operator, fd, target: target ?? null });
      return { extraWords, tail };
    }
    if (node.type === "herestring_redirect") {
      const value = node.namedChildren.find((c) => c && c.type !== "file_descriptor");
      const word = value ? this.finishWord(this.rawWord(value, nested, depth)) : null;
      out.push({ text: node.text, operator: "<<<", fd, target: null, ...(word && { content: { word } }) });
      // A piece touching the here-string belongs to it (`<<<'a'\b`), not to the arguments.
      return { extraWords: [], tail: { end: node.endIndex, word: null } };
    }
    if (node.type === "heredoc_redirect") {
      const operator = node.children.find((c) => c && !c.isNamed && (c.type === "<<" || c.type === "<<-"))?.type ?? "<<";
      const start = node.children.find((c) => c?.type === "heredoc_start");
      const body = node.children.find((c) => c?.type === "heredoc_body");
      const quotedDelimiter = !start || /['"\\]/.test(start.text);
      if (body && !quotedDelimiter) this.heredocBody(body.text, nested, depth);
      const variables = body && !quotedDelimiter ? heredocVariables(body.text) : [];
      out.push({ text: `${operator}${start?.text ?? ""}`, operator, fd, target: null, ...(variables.length > 0 && { content: { variables } }) });
      // Redirects written after the heredoc start (`cat <<EOF > f`) belong to the same command.
      const extraWords: ShellWord[] = [];
      for (const c of node.namedChildren) if (c && c.type.endsWith("_redirect")) extraWords.push(...this.redirect(c, out, nested, depth).extraWords);
      return { extraWords, tail: null };
    }
    this.problems.push(`shell syntax the reader does not handle (${node.type})`);
    this.collectNested(node, nested, depth);
    return { extraWords: [], tail: null };
  }

  /**
   * The body of a heredoc with an unquoted delimiter is expanded like a double-quoted string.
   * The grammar misses substitutions there in some layouts (tab-indented `<<-` bodies), so the
   * body is re-parsed as a double-quoted word; any substitution found makes the line ask.
   */
  private heredocBody(text: string, nested: ShellNode[], depth: number): void {
    if (!hasUnescapedExpansion(text, /\$[([]|`/)) return;
    this.problems.push("a heredoc runs a command substitution");
    const escaped = text.replace(/"/g, '\\"');
    const carrier = this.script(`: "${escaped}"`, depth + 1);
    // Only the substitutions count; the `:` that carried the string is not part of the line.
    nested.push(...(carrier.kind === "command" ? carrier.nested : [carrier]));
  }

  // -------------------------------------------------------------------------------------------
  // Words
  // -------------------------------------------------------------------------------------------

  /** Converts a word-like node into parts, pushing substitutions it contains onto `nested`. */
  private word(node: TsNode, nested: ShellNode[], depth: number): ShellWord {
    return this.finishWord(this.rawWord(node, nested, depth));
  }

  /**
   * Completes a word: joins literal runs, reads `$name` that the grammar split across pieces
   * (`'x'$` + `SET`: an unquoted `$` before a name is always an expansion), applies tilde expansion.
   */
  private readonly finishWord = (w: ShellWord): ShellWord => {
    const parts: WordPart[] = [];
    for (const p of mergeLiterals(w.parts)) {
      if (p.kind === "literal" && !p.quoted && /\$[A-Za-z_{0-9@*#?$!-]/.test(p.text)) this.scanText(p.text, "unquoted", parts);
      else parts.push(p);
    }
    return { text: w.text, parts: applyTilde(mergeLiterals(parts)) };
  };

  private readonly finishRedirect = (r: ShellRedirect): ShellRedirect => (r.target ? { ...r, target: this.finishWord(r.target) } : r);

  /** A word before tilde expansion (pieces of one word may still be appended). */
  private rawWord(node: TsNode, nested: ShellNode[], depth: number): ShellWord {
    this.noteSyntax(node);
    const parts: WordPart[] = [];
    this.wordParts(node, parts, nested, depth, false);
    return { text: node.text, parts };
  }

  private wordParts(node: TsNode, parts: WordPart[], nested: ShellNode[], depth: number, quoted: boolean): void {
    switch (node.type) {
      case "word":
      case "extglob_pattern":
      case "regex":
        this.scanText(node.text, quoted ? "double" : "unquoted", parts);
        return;
      case "number":
        if (node.namedChildCount === 0) this.scanText(node.text, quoted ? "double" : "unquoted", parts);
        else this.dynamicWith(node, "number with expansion", parts, nested, depth);
        return;
      case "raw_string":
        parts.push({ kind: "literal", text: node.text.slice(1, -1), quoted: true });
        return;
      case "ansi_c_string":
        parts.push({ kind: "literal", text: decodeAnsiC(node.text.slice(2, -1)), quoted: true });
        return;
      case "translated_string":
        for (const c of node.namedChildren) if (c) this.wordParts(c, parts, nested, depth, true);
        return;
      case "string":
        this.doubleQuoted(node, parts, nested, depth);
        return;
      case "concatenation": {
        const kids = node.children.filter((c): c is TsNode => c !== null);
        kids.forEach((c, i) => {
          // `$"…"` (locale translation) can reach here as a piece ending in "$" and a string: that
          // "$" is not text.
          const next = kids[i + 1];
          const translated = next?.type === "string" && next.startIndex === c.endIndex && endsWithUnescapedDollar(c.text);
          if (!translated) this.wordParts(c, parts, nested, depth, quoted);
          else if (c.text.length > 1) this.scanText(c.text.slice(0, -1), quoted ? "double" : "unquoted", parts);
        });
        return;
      }
      case "simple_expansion": {
        const name = node.namedChild(0);
        if (name?.type === "variable_name" && !/^\d/.test(name.text)) parts.push({ kind: "variable", name: name.text, quoted });
        else parts.push({ kind: "dynamic", what: node.text });
        return;
      }
      case "expansion": {
        const kids = node.children.filter((c): c is TsNode => c !== null);
        if (kids.length === 3 && kids[1].type === "variable_name" && !/^\d/.test(kids[1].text)) {
          parts.push({ kind: "variable", name: kids[1].text, quoted });
        } else {
          this.dynamicWith(node, node.text, parts, nested, depth);
        }
        return;
      }
      case "command_substitution":
        parts.push({ kind: "dynamic", what: node.text });
        nested.push(this.substitution(node, depth));
        return;
      case "process_substitution":
        parts.push({ kind: "dynamic", what: node.text });
        nested.push({ kind: "isolated", body: this.statements(node.children, depth + 1) });
        return;
      case "arithmetic_expansion":
      case "brace_expression":
      case "array":
        this.dynamicWith(node, node.text, parts, nested, depth);
        return;
      default:
        if (!node.isNamed) {
          // Anonymous tokens inside words ("$" at the end of a string, "{" of a concatenation).
          this.scanText(node.text, quoted ? "double" : "unquoted", parts);
          return;
        }
        this.problems.push(`shell syntax the reader does not handle inside a word (${node.type})`);
        this.dynamicWith(node, node.text, parts, nested, depth);
    }
  }

  private dynamicWith(node: TsNode, what: string, parts: WordPart[], nested: ShellNode[], depth: number): void {
    parts.push({ kind: "dynamic", what });
    this.collectNested(node, nested, depth);
  }

  /**
   * Text of a word piece, scanned the way bash reads it: in unquoted text a backslash quotes the
   * next character and `\<newline>` disappears; in double quotes only `\$ \` \" \\ \<newline>` are
   * escapes. `$name` and `${name}` the grammar left inside the text become variables; any other
   * `$…` or backtick it left there is a problem (the grammar missed an expansion).
   */
  private scanText(text: string, mode: "unquoted" | "double", parts: WordPart[]): void {
    const quoted = mode === "double";
    let lit = "";
    const flush = (): void => {
      if (lit) parts.push({ kind: "literal", text: lit, quoted });
      lit = "";
    };
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (ch === "\\" && i + 1 < text.length) {
        const next = text[i + 1];
        if (next === "\n") {
          i++;
        } else if (!quoted) {
          flush();
          parts.push({ kind: "literal", text: next, quoted: true });
          i++;
        } else if ("$`\"\\".includes(next)) {
          lit += next;
          i++;
        } else {
          lit += ch;
        }
        continue;
      }
      if (ch === "$") {
        const rest = text.slice(i + 1);
        const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest) ?? /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(rest);
        if (name) {
          flush();
          parts.push({ kind: "variable", name: name[1] ?? name[0], quoted });
          i += name[0].length;
          continue;
        }
        if (/^[0-9@*#?$!-]/.test(rest)) {
          flush();
          parts.push({ kind: "dynamic", what: `$${rest[0]}` });
          i++;
          continue;
        }
        if (/^[({['"]/.test(rest)) {
          this.problems.push(`an expansion the shell reader cannot take apart: ${text}`);
          flush();
          parts.push({ kind: "dynamic", what: text.slice(i) });
          return;
        }
      }
      if (ch === "`") {
        this.problems.push(`an expansion the shell reader cannot take apart: ${text}`);
        flush();
        parts.push({ kind: "dynamic", what: text.slice(i) });
        return;
      }
      lit += ch;
    }
    flush();
  }

  /** `"…"`: text with `\$ \` \" \\ \<newline>` escapes, expansions and substitutions. */
  private doubleQuoted(node: TsNode, parts: WordPart[], nested: ShellNode[], depth: number): void {
    parts.push({ kind: "literal", text: "", quoted: true }); // `""` is an (empty) quoted word
    let cursor = node.startIndex + 1;
    const end = node.endIndex - 1;
    const gap = (upTo: number): void => {
      if (upTo > cursor) this.scanText(node.text.slice(cursor - node.startIndex, upTo - node.startIndex), "double", parts);
    };
    for (const c of node.children) {
      if (!c || c.startIndex < node.startIndex + 1 || c.endIndex > end) continue; // the quotes
      gap(c.startIndex);
      if (c.type === "string_content") this.scanText(c.text, "double", parts);
      else if (!c.isNamed) parts.push({ kind: "literal", text: c.text, quoted: true });
      else this.wordParts(c, parts, nested, depth, true);
      cursor = c.endIndex;
    }
    gap(end);
  }

  /**
   * `$(…)` bodies come from the grammar. Backtick bodies are re-parsed after bash's own
   * unescaping (`\$`, `` \` ``, `\\` lose the backslash), so nested backticks are seen as bash sees them.
   */
  private substitution(node: TsNode, depth: number): ShellNode {
    if (node.child(0)?.type === "`") {
      const inner = node.text.slice(node.text.indexOf("`") + 1, node.text.lastIndexOf("`")).replace(/\\([$`\\])/g, "$1");
      return { kind: "isolated", body: this.script(inner, depth + 1) };
    }
    return { kind: "isolated", body: this.statements(node.children, depth + 1) };
  }

  /** Finds substitutions in `node` or anywhere below it (arithmetic, `${x:-$(…)}`, arrays, ERROR nodes). */
  private collectNested(node: TsNode, nested: ShellNode[], depth: number): void {
    if (depth > MAX_DEPTH) {
      this.problems.push("nesting too deep");
      return;
    }
    this.noteSyntax(node);
    if (node.type === "command_substitution") nested.push(this.substitution(node, depth + 1));
    else if (node.type === "process_substitution") nested.push({ kind: "isolated", body: this.statements(node.children, depth + 1) });
    else if (node.type === "string" || node.type === "word") this.word(node, nested, depth);
    else if (STATEMENT_TYPES.has(node.type)) nested.push(this.statement(node, depth + 1));
    else for (const c of node.children) if (c) this.collectNested(c, nested, depth + 1);
  }
}

/** Where the last word piece of a command ended, and the word a touching piece extends (null: swallowed). */
interface Tail {
  end: number;
  word: ShellWord | null;
}

interface Redirects {
  redirects: ShellRedirect[];
  nested: ShellNode[];
  /** Words the grammar filed under a redirection that are arguments of the command. */
  extraWords: ShellWord[];
}

/** bash(1) "RESERVED WORDS" (`[[`, `]]`, `time`, `coproc` are handled as commands). */
const RESERVED_WORDS = new Set(["!", "case", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then", "until", "while", "{", "}"]);

function isReservedWord(p: WordPart): boolean {
  return p.kind === "literal" && !p.quoted && RESERVED_WORDS.has(p.text);
}

function endsWithUnescapedDollar(text: string): boolean {
  if (!text.endsWith("$")) return false;
  let backslashes = 0;
  for (let i = text.length - 2; i >= 0 && text[i] === "\\"; i--) backslashes++;
  return backslashes % 2 === 0;
}

function appendWord(target: ShellWord, piece: ShellWord): void {
  target.text += piece.text;
  target.parts.push(...piece.parts);
}

function literalWord(text: string): ShellWord {
  return { text, parts: [{ kind: "literal", text, quoted: true }] };
}

/** A command of redirections only (`> f`), or the redirections of a compound command. */
function redirectOnly(text: string, r: { redirects: ShellRedirect[]; nested: ShellNode[]; extraWords?: ShellWord[] }): SimpleCommand {
  return { kind: "command", text, assignments: [], words: r.extraWords ?? [], redirects: r.redirects, nested: r.nested };
}

/** Adds redirections to the rightmost simple command of `node` (see `redirected`). */
function attachToLast(node: ShellNode, r: Redirects): ShellNode {
  switch (node.kind) {
    case "command":
      return {
        ...node,
        text: `${node.text} ${redirectText(r.redirects)}`,
        words: [...node.words, ...r.extraWords],
        redirects: [...node.redirects, ...r.redirects],
        nested: [...node.nested, ...r.nested],
      };
    case "and":
    case "or":
      return { ...node, right: attachToLast(node.right, r) };
    case "sequence":
      if (node.items.length === 0) break;
      return { ...node, items: [...node.items.slice(0, -1), attachToLast(node.items[node.items.length - 1], r)] };
    case "isolated":
    case "not":
      return { ...node, body: attachToLast(node.body, r) };
    default:
      break;
  }
  return { kind: "sequence", items: [redirectOnly(redirectText(r.redirects), r), node] };
}

function redirectText(redirects: ShellRedirect[]): string {
  return redirects.map((r) => r.text).join(" ");
}

/** True when `text` holds `pattern` not preceded by an odd number of backslashes. */
/** The parameters an unquoted-delimiter heredoc body expands (`$X`, `${X:-y}`, `$1`, `$@`), each once, in order. */
function heredocVariables(text: string): string[] {
  const out = new Set<string>();
  const re = /\$(?:\{[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])|([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let backslashes = 0;
    for (let i = m.index - 1; i >= 0 && text[i] === "\\"; i--) backslashes++;
    if (backslashes % 2 === 0) out.add(m[1] ?? m[2]);
  }
  return [...out];
}

function hasUnescapedExpansion(text: string, pattern: RegExp): boolean {
  const re = new RegExp(pattern.source, "g");
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let backslashes = 0;
    for (let i = m.index - 1; i >= 0 && text[i] === "\\"; i--) backslashes++;
    if (backslashes % 2 === 0) return true;
  }
  return false;
}

function mergeLiterals(parts: WordPart[]): WordPart[] {
  const out: WordPart[] = [];
  for (const p of parts) {
    const last = out[out.length - 1];
    if (p.kind === "literal" && last?.kind === "literal" && last.quoted === p.quoted) last.text += p.text;
    else out.push(p.kind === "literal" ? { ...p } : p);
  }
  return out;
}

/**
 * Tilde expansion (bash(1) "Tilde Expansion"), modelled for the two forms that matter: a word
 * that is `~` or starts with `~/` (the child's HOME). Every other form is left to run time:
 * `~user`, `~+`, `~-`, `~""` (quoted prefix: literal), `~:x` (bash 5 expands it and then copies
 * the rest of the word unexpanded), and tildes after `=`/`:` in a word that looks like an
 * assignment (`a=~/x`, `a=b:~/y`), which bash expands too.
 */
function applyTilde(parts: WordPart[]): WordPart[] {
  const first = parts[0];
  if (first?.kind !== "literal" || first.quoted) return parts;
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first.text) && parts.some((p) => p.kind === "literal" && !p.quoted && p.text.includes("~"))) {
    return [{ kind: "dynamic", what: "tilde in an assignment-like word" }];
  }
  if (!first.text.startsWith("~")) return parts;
  if (first.text === "~" && parts.length === 1) return [{ kind: "tilde" }];
  if (first.text.startsWith("~/")) return [{ kind: "tilde" }, { kind: "literal", text: first.text.slice(1), quoted: false }, ...parts.slice(1)];
  return [{ kind: "dynamic", what: `tilde form ${first.text.split("/")[0]}` }, ...parts.slice(1)];
}

/** Decodes the body of `$'…'` (bash "ANSI-C Quoting"). */
export function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = { a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch !== "\\" || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const n = body[++i];
    if (n in simple) {
      out += simple[n];
      continue;
    }
    const take = (re: RegExp, max: number): string => {
      let s = "";
      while (s.length < max && i + 1 < body.length && re.test(body[i + 1])) s += body[++i];
      return s;
    };
    if (/[0-7]/.test(n)) {
      const digits = n + take(/[0-7]/, 2);
      out += String.fromCharCode(parseInt(digits, 8) & 0xff);
    } else if (n === "x") {
      const hex = take(/[0-9a-fA-F]/, 2);
      out += hex ? String.fromCharCode(parseInt(hex, 16)) : "\\x";
    } else if (n === "u" || n === "U") {
      const hex = take(/[0-9a-fA-F]/, n === "u" ? 4 : 8);
      const cp = hex ? parseInt(hex, 16) : NaN;
      out += Number.isFinite(cp) && cp <= 0x10ffff ? String.fromCodePoint(cp) : `\\${n}${hex}`;
    } else if (n === "c" && i + 1 < body.length) {
      out += String.fromCharCode(body[++i].toUpperCase().charCodeAt(0) ^ 0x40);
    } else {
      out += `\\${n}`;
    }
  }
  return out;
}
