import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

/** One import of one project module by another. */
export interface ImportEdge {
  /** Importing file, relative to the project root with forward slashes (e.g. `lib/tools/registry.ts`). */
  from: string;
  /** Imported file, same form. */
  to: string;
  /** True when the import carries only types (`import type`, `export type`, or every specifier marked `type`): erased at run time. */
  typeOnly: boolean;
  /** True for a dynamic `import()`: loaded when reached, not when the importer loads. */
  lazy: boolean;
}

const SOURCE = /\.(ts|tsx|mts|mjs)$/;

function listSources(root: string, dir: string, out: string[]): void {
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (rel === "lib/generated" || entry.name === "node_modules") continue;
      listSources(root, rel, out);
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      out.push(rel);
    }
  }
}

function compilerOptions(root: string): ts.CompilerOptions {
  const file = path.join(root, "tsconfig.json");
  const read = ts.readConfigFile(file, (p) => ts.sys.readFile(p));
  return ts.parseJsonConfigFileContent(read.config, ts.sys, root).options;
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  if (!bindings || !ts.isNamedImports(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function isTypeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/**
 * The import graph of the project's own modules under `dirs` (default `lib` and `app`), read with
 * the TypeScript compiler API: static imports and re-exports, plus dynamic `import()` marked
 * `lazy`. Specifiers are resolved with the project's tsconfig (the `@/` path alias included);
 * imports that resolve outside those folders (packages, `lib/generated`) are left out.
 */
export function importGraph(root: string, dirs: string[] = ["lib", "app"]): ImportEdge[] {
  const files: string[] = [];
  for (const dir of dirs) listSources(root, dir, files);
  const inGraph = new Set(files);
  const options = compilerOptions(root);
  const host = ts.createCompilerHost(options);
  const edges: ImportEdge[] = [];

  for (const rel of files) {
    const abs = path.join(root, rel);
    const source = ts.createSourceFile(abs, fs.readFileSync(abs, "utf8"), ts.ScriptTarget.Latest, true);
    const add = (specifier: string, typeOnly: boolean, lazy: boolean) => {
      const resolved = ts.resolveModuleName(specifier, abs, options, host).resolvedModule;
      if (!resolved) return;
      const to = path.relative(root, resolved.resolvedFileName).split(path.sep).join("/");
      if (inGraph.has(to) && to !== rel) edges.push({ from: rel, to, typeOnly, lazy });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, isTypeOnlyImport(node), false);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, isTypeOnlyExport(node), false);
      } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
        add(node.moduleReference.expression.text, node.isTypeOnly, false);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
        add(node.arguments[0].text, false, true);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        add(node.argument.literal.text, true, false);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

/**
 * The import cycles of a graph: each strongly connected component of more than one module
 * (Tarjan's algorithm), as a list of its modules, sorted, plus one concrete loop through it
 * (`a → b → … → a`) so a failure names the imports to break.
 */
export function importCycles(edges: ImportEdge[]): { modules: string[]; loop: string[] }[] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const strongConnect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) strongConnect(v);

  return components.map((modules) => {
    // Shortest loop from the first module back to itself, inside the component (breadth first).
    const members = new Set(modules);
    const start = modules[0];
    const parent = new Map<string, string>();
    const queue = [start];
    let found = false;
    while (queue.length && !found) {
      const v = queue.shift()!;
      for (const w of next.get(v) ?? []) {
        if (!members.has(w)) continue;
        if (w === start) { parent.set(start + "#end", v); found = true; break; }
        if (!parent.has(w)) { parent.set(w, v); queue.push(w); }
      }
    }
    const loop = [start];
    for (let v = parent.get(start + "#end"); v && v !== start; v = parent.get(v)) loop.unshift(v);
    loop.unshift(start);
    return { modules, loop };
  });
}
