import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ERROR_REASONS, ERROR_TABLE, errorBody, FREE_TEXT_REASON, ToolError, type ErrorName } from "@/lib/errors";

/**
 * Every `detail.reason` the code writes is declared for its error name in `ERROR_REASONS`. The
 * type of `ToolError` / `errorBody` already refuses an undeclared literal; this reads the source
 * too, so a reason that reaches those calls through a plain string (a conditional, a local
 * constant) is caught as well.
 */

const ROOT = path.resolve(__dirname, "../..");

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (rel !== "lib/generated" && entry.name !== "node_modules") sources(rel, out);
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(rel);
  }
  return out;
}

interface Use {
  where: string;
  name: string;
  reason: string;
}

/**
 * The `const` initializer `name` refers to at `at`, found the way scopes work: the nearest
 * enclosing block (or file) that declares it before `at`; a parameter of that name hides outer ones.
 */
function constOf(name: string, at: ts.Node): ts.Expression | undefined {
  for (let scope: ts.Node | undefined = at.parent; scope; scope = scope.parent) {
    if (ts.isFunctionLike(scope) && scope.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === name)) return undefined;
    const statements = ts.isBlock(scope) || ts.isSourceFile(scope) ? scope.statements : null;
    for (const statement of statements ?? []) {
      if (statement.pos > at.pos || !ts.isVariableStatement(statement) || !(statement.declarationList.flags & ts.NodeFlags.Const)) continue;
      for (const decl of statement.declarationList.declarations) {
        if (ts.isIdentifier(decl.name) && decl.name.text === name) return decl.initializer;
      }
    }
  }
  return undefined;
}

/** The string literals an expression can evaluate to, looking through `as const`, parentheses, conditionals and local constants; null when unknown. */
function literals(expr: ts.Expression, depth = 0): string[] | null {
  if (depth > 8) return null;
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) return [expr.text];
  if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr)) return literals(expr.expression, depth + 1);
  if (ts.isConditionalExpression(expr)) {
    const a = literals(expr.whenTrue, depth + 1);
    const b = literals(expr.whenFalse, depth + 1);
    return a && b ? [...a, ...b] : null;
  }
  if (ts.isIdentifier(expr)) {
    const init = constOf(expr.text, expr);
    return init ? literals(init, depth + 1) : null;
  }
  return null;
}

/** `reason` members written at `new ToolError("name", …, {reason})` and `errorBody("name", …, {reason})` sites with a literal name. */
function reasonUses(): Use[] {
  const uses: Use[] = [];
  for (const file of [...sources("lib"), ...sources("app")]) {
    const sf = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      const isSite =
        (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "ToolError") ||
        (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "errorBody");
      if (isSite) {
        const [nameArg, , detailArg] = (node as ts.CallExpression | ts.NewExpression).arguments ?? [];
        const names = nameArg ? literals(nameArg) : null;
        const detail = detailArg && ts.isIdentifier(detailArg) ? constOf(detailArg.text, detailArg) : detailArg;
        if (names && detail && ts.isObjectLiteralExpression(detail)) {
          for (const prop of detail.properties) {
            if (!prop.name || !ts.isIdentifier(prop.name) || prop.name.text !== "reason") continue;
            const value = ts.isPropertyAssignment(prop) ? prop.initializer : ts.isShorthandPropertyAssignment(prop) ? prop.name : null;
            const reasons = value ? literals(value) : null;
            const where = `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
            for (const name of names) for (const reason of reasons ?? []) uses.push({ where, name, reason });
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return uses;
}

describe("detail.reason", () => {
  const uses = reasonUses();

  it("finds the reasons written in the code (the scan works)", () => {
    expect(uses.length).toBeGreaterThan(60);
    expect(uses).toContainEqual(expect.objectContaining({ name: "not_found", reason: "changed_during_call" }));
    expect(uses).toContainEqual(expect.objectContaining({ name: "command_failed_to_start", reason: "limits_failed" }));
  });

  it("every reason written is declared for its error name", () => {
    const undeclared = uses.filter(({ name, reason }) => {
      const declared: readonly string[] | undefined = (ERROR_REASONS as Partial<Record<string, readonly string[]>>)[name];
      return !declared || !(declared.includes(reason) || declared.includes(FREE_TEXT_REASON));
    });
    expect(undeclared).toEqual([]);
  });

  it("declares reasons only for names in the error table, each once", () => {
    for (const [name, reasons] of Object.entries(ERROR_REASONS)) {
      expect(Object.hasOwn(ERROR_TABLE, name), name).toBe(true);
      expect(new Set(reasons).size, name).toBe(reasons.length);
      for (const reason of reasons) expect(reason === FREE_TEXT_REASON || /^[a-z0-9_]+$/.test(reason), `${name}: ${reason}`).toBe(true);
    }
  });

  it("the types refuse a reason not declared for the name", () => {
    // Compile-time checks: each line below fails to type-check without its directive.
    // @ts-expect-error "enospc" is a write_failed reason, not a not_found one
    void new ToolError("not_found", "x", { reason: "enospc" });
    // @ts-expect-error unknown_tool declares no reason
    void errorBody("unknown_tool", "x", { reason: "anything" });
    void new ToolError("approval_rejected", "x", { reason: "the reviewer's own words" });
    const name: ErrorName = "write_failed";
    expect(errorBody(name, "x", { reason: "enospc" }).retryable).toBe(false);
  });
});
