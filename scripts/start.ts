/**
 * `npm start`: the main job on one machine. Prepares the database (SQLite file under data/ by
 * default) and the workspace, prints the agent token (and reviewer password) the first time,
 * builds the Next.js app when the sources changed since the last build, and serves the gateway
 * and the dashboard on HOST:PORT (127.0.0.1:3000 by default).
 *
 * Flags: `--dev` runs `next dev` instead of a production build.
 * Environment: see README.md (AGENT_REACH_WORKSPACE, DATABASE_URL, HOST, PORT, …).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { bootstrap } from "@/lib/runtime/bootstrap";
import { buildIfNeeded, NEXT_BIN } from "@/scripts/build-if-needed";

async function main(): Promise<void> {
  const dev = process.argv.includes("--dev");
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  const config = getConfig();
  const boot = await bootstrap();
  if (boot.migrations.length > 0) console.log(`[agent-reach] applied migrations: ${boot.migrations.join(", ")}`);
  if (!dev) await buildIfNeeded();

  const child = spawn(process.execPath, [NEXT_BIN, dev ? "dev" : "start", "-H", config.host, "-p", String(config.port)], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, AGENT_REACH_WORKSPACE: config.workspaceRoot, DATABASE_URL: config.databaseUrl },
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

  await waitForHealth(`http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}/api/health`);
  const lines = [
    "",
    `  Agent Reach is serving ${config.publicUrl}`,
    `  workspace root: ${boot.workspaceRoot}`,
    `  database:       ${describeDatabase(config.databaseUrl)}`,
  ];
  if (boot.agentToken) {
    lines.push(`  agent token (shown once; store it now):`, `    ${boot.agentToken}`);
    lines.push(`  try: curl -H "Authorization: Bearer ${boot.agentToken}" -d '{"path":"."}' ${config.publicUrl}/api/tools/list_directory`);
  }
  if (boot.reviewerPassword) lines.push(`  reviewer sign-in (shown once): login "admin", password ${boot.reviewerPassword}`);
  console.log(`${lines.join("\n")}\n`);
}

/** The database for the banner: a SQLite file's path (relative when under the cwd), or PostgreSQL's host and name (never its password). */
function describeDatabase(url: string): string {
  if (url.startsWith("file:")) {
    const rel = path.relative(process.cwd(), path.resolve(url.slice(5)));
    return rel.startsWith("..") ? path.resolve(url.slice(5)) : rel;
  }
  const u = new URL(url);
  return `PostgreSQL ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

/** Polls the health endpoint until it answers (any status), up to 120 s. */
async function waitForHealth(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  console.error(`[agent-reach] the server did not answer at ${url} within 120 s`);
}

main().catch((err) => {
  console.error(`[agent-reach] ${(err as Error).message}`);
  process.exit(1);
});
