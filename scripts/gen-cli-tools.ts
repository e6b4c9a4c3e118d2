/**
 * Writes lib/cli/tools.json: the tool list the CLI ships with (the same listing GET /api/tools
 * answers, from lib/tools/registry.ts), so `agent-reach <tool> --help` works without a server.
 * Run it after changing a tool's name, description or input schema: `npx tsx scripts/gen-cli-tools.ts`
 * (tests/cli/tools-json.test.ts fails until it has been run). `--check` only compares and exits 1
 * when the file is out of date.
 */
import fs from "node:fs";
import path from "node:path";
import { listTools } from "@/lib/tools/registry";

const FILE = path.resolve("lib/cli/tools.json");

/** The file's exact expected text: `{tools}` as GET /api/tools lists them, 2-space indented. */
export function cliToolsJson(): string {
  return `${JSON.stringify({ generated_by: "scripts/gen-cli-tools.ts", tools: listTools() }, null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve("scripts/gen-cli-tools.ts")) {
  const text = cliToolsJson();
  if (process.argv.includes("--check")) {
    const same = fs.existsSync(FILE) && fs.readFileSync(FILE, "utf8") === text;
    if (!same) console.error(`${path.relative(process.cwd(), FILE)} is out of date: run npx tsx scripts/gen-cli-tools.ts`);
    process.exit(same ? 0 : 1);
  }
  fs.writeFileSync(FILE, text);
  console.log(`wrote ${path.relative(process.cwd(), FILE)} (${listTools().length} tools)`);
}
