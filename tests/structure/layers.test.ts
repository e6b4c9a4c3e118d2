import path from "node:path";
import { describe, expect, it } from "vitest";
import { importGraph } from "@/scripts/import-graph";

/**
 * What may import what (docs/ARCHITECTURE.md, "Layers"): a module imports from its own layer or
 * the layers below it, never above. Type-only imports count too: a type belongs to the layer that
 * owns the thing it describes. Dynamic `import()` inside a function is left out (it loads when
 * called, after both modules exist).
 *
 * KNOWN lists the upward imports that exist today, each with why; the test fails on a new one,
 * and on a listed one that has gone (remove it from the list, so the list only shrinks).
 */
const LAYERS: { name: string; modules: string[] }[] = [
  {
    name: "base",
    modules: ["lib/errors.ts", "lib/result.ts", "lib/ids.ts", "lib/canonical-json.ts", "lib/json-depth.ts", "lib/mutex.ts", "lib/db-errors.ts", "lib/unicode.ts", "lib/config.ts", "lib/db.ts", "lib/db/", "lib/events/"],
  },
  {
    name: "domain",
    modules: ["lib/workspace/", "lib/diff/", "lib/net/", "lib/transform/", "lib/backups/", "lib/exec/", "lib/policy/", "lib/redact.ts", "lib/redact/", "lib/audit/", "lib/effects/", "lib/notify/"],
  },
  { name: "tools", modules: ["lib/tools/"] },
  { name: "core", modules: ["lib/gateway/", "lib/approvals/", "lib/auth/", "lib/hooks/", "lib/health.ts"] },
  { name: "doors", modules: ["lib/gateway/index.ts", "lib/http/", "lib/mcp/", "lib/dashboard/", "lib/runtime/", "lib/cli/", "app/"] },
];

const KNOWN: Record<string, string> = {
  "lib/config.ts -> lib/exec/limits.ts": "the configuration parses run_command's limit settings with the limits' own parser",
  "lib/config.ts -> lib/policy/presets.ts": "the configuration checks the default preset setting against the preset names",
  "lib/config.ts -> lib/workspace/encoding.ts": "the configuration checks the legacy-encoding setting against the encodings the workspace layer can write",
  "lib/audit/writer.ts -> lib/approvals/outcomes.ts": "the writer hands a finished call's exact envelope to local waiters once its row is committed",
  "lib/backups/restore.ts -> lib/gateway/call-tool.ts": "a reviewer's restore from the dashboard runs restore_backup through the pipeline, audited like an agent's",
  "lib/effects/rewind.ts -> lib/gateway/sessions.ts": "rewinding a session reads the session's calls through the gateway",
  "lib/redact/reveal.ts -> lib/gateway/contexts.ts": "revealing a masked value re-runs the tool's read in the call's context",
  "lib/redact/reveal.ts -> lib/tools/registry.ts": "same: it finds the tool by name",
  "lib/effects/call-hooks.ts -> lib/tools/define-tool.ts": "types now owned by lib/workspace/types.ts and lib/backups/types.ts (define-tool re-exports them); switch the import",
  "lib/effects/command-effects.ts -> lib/tools/define-tool.ts": "ToolContext: the capture runs inside run_command's call",
  "lib/effects/recover.ts -> lib/tools/define-tool.ts": "Workspace, now owned by lib/workspace/types.ts; switch the import",
  "lib/effects/revert.ts -> lib/tools/define-tool.ts": "BackupStore and Workspace, now owned by lib/backups/types.ts and lib/workspace/types.ts; switch the import",
  "lib/effects/stage.ts -> lib/tools/define-tool.ts": "BackupStore, now owned by lib/backups/types.ts; switch the import",
  "lib/tools/get-call.ts -> lib/approvals/wait.ts": "get_call waits for a call's outcome the way every door does",
};

function layerOf(file: string): number {
  // The most specific entry wins (lib/gateway/index.ts is a door, the rest of lib/gateway is core).
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((layer, i) => {
    for (const m of layer.modules) {
      const hit = m.endsWith("/") ? file.startsWith(m) : file === m;
      if (hit && m.length > bestLength) [best, bestLength] = [i, m.length];
    }
  });
  return best;
}

const root = path.resolve(import.meta.dirname, "../..");
const edges = importGraph(root).filter((e) => !e.lazy);

describe("layers", () => {
  it("places every module of lib/ and app/ in a layer", () => {
    const files = new Set(edges.flatMap((e) => [e.from, e.to]));
    expect([...files].filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  it("imports only from the same layer or below, apart from the listed exceptions", () => {
    const upward = edges
      .filter((e) => layerOf(e.to) > layerOf(e.from))
      .map((e) => `${e.from} -> ${e.to}`)
      .filter((key, i, all) => all.indexOf(key) === i);
    expect(upward.filter((key) => !(key in KNOWN)).map((key) => `${key} (${LAYERS[layerOf(key.split(" -> ")[0])].name} imports ${LAYERS[layerOf(key.split(" -> ")[1])].name})`)).toEqual([]);
    expect(Object.keys(KNOWN).filter((key) => !upward.includes(key))).toEqual([]);
  });
});
