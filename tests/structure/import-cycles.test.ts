import path from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles, importGraph, type ImportEdge } from "@/scripts/import-graph";

/**
 * The modules of lib/ and app/ import each other without cycles. A cycle makes the load order
 * decide what a module sees (an import that is still undefined while its module loads), and it
 * ties layers together so neither can change alone. Imports that carry only types are checked
 * as well, separately: they vanish at run time but still tie the layers.
 *
 * A dynamic `import()` inside a function is not an edge here: it runs after both modules have
 * loaded, so it cannot see a half-loaded module (lib/approvals/executor.ts loads the queue that
 * way, because the queue starts the executor).
 */
const root = path.resolve(import.meta.dirname, "../..");
const edges = importGraph(root);

function describeCycles(selected: ImportEdge[]): string {
  return importCycles(selected)
    .map((c) => `${c.loop.join(" → ")}  (modules in this knot: ${c.modules.join(", ")})`)
    .join("\n");
}

describe("import cycles", () => {
  it("reads the real graph (the check is not vacuous)", () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges).toContainEqual({ from: "lib/tools/registry.ts", to: "lib/tools/get-call.ts", typeOnly: false, lazy: false });
    expect(edges.some((e) => e.typeOnly)).toBe(true);
    expect(edges.some((e) => e.lazy)).toBe(true);
  });

  it("finds a cycle when there is one", () => {
    const knot: ImportEdge[] = [
      { from: "a.ts", to: "b.ts", typeOnly: false, lazy: false },
      { from: "b.ts", to: "c.ts", typeOnly: false, lazy: false },
      { from: "c.ts", to: "a.ts", typeOnly: false, lazy: false },
      { from: "c.ts", to: "d.ts", typeOnly: false, lazy: false },
    ];
    expect(importCycles(knot)).toEqual([{ modules: ["a.ts", "b.ts", "c.ts"], loop: ["a.ts", "b.ts", "c.ts", "a.ts"] }]);
    expect(importCycles(knot.slice(0, 2))).toEqual([]);
  });

  it("has no cycle among run-time imports", () => {
    expect(describeCycles(edges.filter((e) => !e.typeOnly && !e.lazy))).toBe("");
  });

  it("has no cycle once type-only imports are counted too", () => {
    expect(describeCycles(edges.filter((e) => !e.lazy))).toBe("");
  });
});
