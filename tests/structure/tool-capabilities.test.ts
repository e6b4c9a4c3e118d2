import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toMcpTool } from "@/lib/mcp/tool-mapping";
import { DEFAULT_RULES } from "@/lib/policy/default-rules";
import { GRANT_TOOLS } from "@/lib/policy/grants";
import { FILE_WRITE_TOOLS } from "@/lib/policy/presets";
import { annotationsOf, RISK_ANNOTATIONS, type ToolDefinition } from "@/lib/tools/define-tool";
import { grantToolNames, TOOLS, toolNamesChanging } from "@/lib/tools/registry";

/**
 * What a tool can do is declared on its definition (lib/tools/define-tool.ts), and everything else
 * reads it from the registry: which argument a reviewer may edit, what a call changes, which
 * grants it takes, whether its output can be revealed, whether its diff can show more context, and
 * its MCP annotations. These tests pin the declarations, and check that no module outside the
 * tool's own file decides by comparing a tool's name.
 */

type Capabilities = Pick<ToolDefinition, "risk" | "changes" | "grant" | "reproducible"> & { editable?: string; proposedText: boolean };

const EXPECTED: Record<string, Capabilities> = {
  read_file: { risk: "read", reproducible: true, proposedText: false },
  write_file: { risk: "write", changes: "file", grant: "path", editable: "content", proposedText: true },
  edit_file: { risk: "write", changes: "file", grant: "path", editable: "new_string", proposedText: true },
  list_directory: { risk: "read", reproducible: true, proposedText: false },
  search_files: { risk: "read", reproducible: true, proposedText: false },
  run_command: { risk: "exec", changes: "change_set", grant: "command", proposedText: false },
  fetch_url: { risk: "network", proposedText: false },
  transform: { risk: "read", reproducible: true, proposedText: false },
  list_backups: { risk: "read", proposedText: false },
  restore_backup: { risk: "write", changes: "file", proposedText: false },
  revert_call: { risk: "write", changes: "change_set", proposedText: false },
  get_call: { risk: "read", proposedText: false },
};

function declared(tool: ToolDefinition): Capabilities {
  return {
    risk: tool.risk,
    ...(tool.changes !== undefined && { changes: tool.changes }),
    ...(tool.grant !== undefined && { grant: tool.grant }),
    ...(tool.reproducible !== undefined && { reproducible: tool.reproducible }),
    ...(tool.editable !== undefined && { editable: tool.editable.field }),
    proposedText: typeof tool.proposedText === "function",
  };
}

describe("tool capabilities", () => {
  it("are declared on every definition of the registry", () => {
    expect(Object.fromEntries(TOOLS.map((t) => [t.name, declared(t)]))).toEqual(EXPECTED);
  });

  it("name an editable argument that the tool's input schema has", () => {
    for (const tool of TOOLS.filter((t) => t.editable)) {
      const shape = (tool.input as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      expect(Object.keys(shape), tool.name).toContain(tool.editable!.field);
    }
  });

  it("agree with the policy's own tool lists (the policy sits below the registry)", () => {
    expect([...FILE_WRITE_TOOLS].sort()).toEqual(toolNamesChanging("file").sort());
    expect(GRANT_TOOLS).toEqual(Object.fromEntries(TOOLS.filter((t) => t.grant).map((t) => [t.name, t.grant])));
    expect(grantToolNames()).toEqual(["write_file", "edit_file", "run_command"]);
    expect(toolNamesChanging("change_set")).toEqual(["run_command", "revert_call"]);
  });

  it("derive the MCP annotations from the risk level, with the definition's overrides on top", () => {
    for (const tool of TOOLS) {
      const mcp = toMcpTool(tool).annotations;
      expect(mcp, tool.name).toEqual({ title: tool.title, ...RISK_ANNOTATIONS[tool.risk], ...tool.annotations });
      expect(annotationsOf(tool).readOnlyHint, tool.name).toBe(tool.risk === "read" || tool.risk === "network");
      expect(annotationsOf(tool).destructiveHint, tool.name).toBe(tool.risk === "write" || tool.risk === "exec");
      expect(annotationsOf(tool).openWorldHint, tool.name).toBe(tool.risk === "exec" || tool.risk === "network");
    }
  });

  it("give the default decision its risk implies: reads allowed, writes and fetches asked", () => {
    for (const tool of TOOLS) {
      const own = DEFAULT_RULES.find((r) => r.tool === tool.name && !r.pathGlob && !r.command);
      // run_command and revert_call have no tool-wide default rule: no rule matching means "ask".
      const decision = own?.decision ?? "ask";
      expect(decision, tool.name).toBe(tool.risk === "read" ? "allow" : "ask");
    }
  });

  it("are not replaced by name comparisons elsewhere in lib/ and app/", () => {
    const root = path.resolve(import.meta.dirname, "../..");
    const names = TOOLS.map((t) => t.name).join("|");
    const comparison = new RegExp(`[!=]==\\s*"(${names})"|"(${names})"\\s*[!=]==|\\[\\s*"(${names})"\\s*,|\\.includes\\(\\s*"(${names})"\\s*\\)|\\.has\\(\\s*"(${names})"\\s*\\)`);
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== "generated" && entry.name !== "node_modules") walk(full);
        } else if (/\.(ts|tsx)$/.test(entry.name)) {
          fs.readFileSync(full, "utf8")
            .split("\n")
            .forEach((line, i) => {
              const m = comparison.exec(line);
              if (m) found.push(`${path.relative(root, full)}: ${m.slice(1).find(Boolean)}`);
            });
        }
      }
    };
    walk(path.join(root, "lib"));
    walk(path.join(root, "app"));
    // What remains reads one tool's own arguments or output for display, or a rule's tool field
    // (rules name tools by wire name: that is the policy's vocabulary, not a capability check).
    expect(found.sort()).toEqual(
      [
        "lib/dashboard/approvals.ts: run_command", // the command line and exit code of a run_command call, shown on its card
        "lib/dashboard/approvals.ts: run_command",
        "lib/dashboard/approvals.ts: run_command",
        "lib/dashboard/calls.ts: restore_backup", // the backup_id argument of a restore, linked on the call page
        "lib/dashboard/outcome.ts: run_command", // a command's exit status and signal from its summary
        "lib/gateway/contexts.ts: run_command", // a rule for run_command that grants the network tool-wide
        "lib/policy/grants.ts: run_command", // the command rules a grant must not override
        "lib/policy/presets.ts: write_file", // FILE_WRITE_TOOLS, kept equal to the registry above
        "lib/policy/rule-store.ts: run_command", // a rule's limits are options of run_command rules
      ].sort(),
    );
  });
});
