/**
 * Writes what the CLI ships with, generated so it is never a hand-kept copy (the CLI is plain
 * JavaScript that starts without a build):
 * - lib/cli/tools.json: the tool list (the same listing GET /api/tools answers, from
 *   lib/tools/registry.ts), so `agent-reach <tool> --help` works without a server;
 * - lib/cli/errors.json: the closed error table of lib/errors.ts (code, HTTP status, retryable).
 * Run it after changing a tool's name, description or input schema, or the error table:
 * `npx tsx scripts/gen-cli-tools.ts` (tests/cli/offline.test.ts and tests/cli/exit-table.test.ts
 * fail until it has been run). `--check` only compares and exits 1 when a file is out of date.
 */
import fs from "node:fs";
import path from "node:path";
import { ERROR_TABLE } from "@/lib/errors";
import { listTools } from "@/lib/tools/registry";

const FILE = path.resolve("lib/cli/tools.json");
const ERRORS_FILE = path.resolve("lib/cli/errors.json");

/** The file's exact expected text: `{tools}` as GET /api/tools lists them, 2-space indented. */
export function cliToolsJson(): string {
  return `${JSON.stringify({ generated_by: "scripts/gen-cli-tools.ts", tools: listTools() }, null, 2)}\n`;
}

/** lib/cli/errors.json's exact expected text: `{errors}`, the error table by name, 2-space indented. */
export function cliErrorsJson(): string {
  return `${JSON.stringify({ generated_by: "scripts/gen-cli-tools.ts", errors: ERROR_TABLE }, null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve("scripts/gen-cli-tools.ts")) {
  const files: [string, string][] = [
    [FILE, cliToolsJson()],
    [ERRORS_FILE, cliErrorsJson()],
  ];
  if (process.argv.includes("--check")) {
    const stale = files.filter(([file, text]) => !fs.existsSync(file) || fs.readFileSync(file, "utf8") !== text);
    for (const [file] of stale) console.error(`${path.relative(process.cwd(), file)} is out of date: run npx tsx scripts/gen-cli-tools.ts`);
    process.exit(stale.length ? 1 : 0);
  }
  for (const [file, text] of files) fs.writeFileSync(file, text);
  console.log(`wrote ${path.relative(process.cwd(), FILE)} (${listTools().length} tools) and ${path.relative(process.cwd(), ERRORS_FILE)} (${Object.keys(ERROR_TABLE).length} errors)`);
}
