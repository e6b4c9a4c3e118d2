/**
 * `npm start`: the main job on one machine. Prepares the database (SQLite file under data/ by
 * default) and the workspace, prints the agent token (and reviewer password) the first time,
 * builds the Next.js app when the sources changed since the last build, and serves the gateway
 * and the dashboard on HOST:PORT (127.0.0.1:3000 by default).
 *
 * Flags: `--dev` runs `next dev` instead of a production build.
 * Environment: see README.md (AGENT_REACH_WORKSPACE, DATABASE_URL, HOST, PORT, …).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { getConfig } from "@/lib/config";
import { bootstrap, checkStoreOutsideWorkspace } from "@/lib/runtime/bootstrap";
import { assertNoLiveServer } from "@/lib/runtime/instance-lock";
import { buildIfNeeded, NEXT_BIN } from "@/scripts/build-if-needed";

async function main(): Promise<void> {
  const dev = process.argv.includes("--dev");
  process.env.NEXT_TELEMETRY_DISABLED = "1";
  const config = getConfig();
  // Before the workspace is created or registered: a second server here refuses at once.
  assertNoLiveServer(config.dataDir, config.hostId, config.databaseUrl);
  // …and before any credential is made: a port another program holds fails here, in one line.
  await assertPortFree(config.host, config.port);
  checkStoreOutsideWorkspace(config);
  // The build first (minutes, the first time): a start stopped during it has made no credential
  // yet, so the next start still makes and shows them.
  if (!dev) await buildIfNeeded();
  const boot = await bootstrap();
  if (boot.migrations.length > 0) console.log(`[agent-reach] applied migrations: ${boot.migrations.join(", ")}`);

  // Production: scripts/serve.ts (Next.js for the dashboard, the agent doors served directly).
  // Development: `next dev`, everything through Next.js (hot reload).
  const args = dev
    ? [NEXT_BIN, "dev", "-H", config.host, "-p", String(config.port)]
    : [
        // AGENT_REACH_PROFILE_DIR: write a V8 CPU profile of the server there when it stops (benchmarks).
        ...(process.env.AGENT_REACH_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.AGENT_REACH_PROFILE_DIR}`] : []),
        "--import",
        "tsx",
        path.resolve("scripts/serve.ts"),
        "--host",
        config.host,
        "--port",
        String(config.port),
      ];
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, AGENT_REACH_WORKSPACE: config.workspaceRoot, DATABASE_URL: config.databaseUrl },
  });
  // The first start's credentials are shown once: also when the server fails to start after they
  // were made (registered before stopWithParent's exit handler, which ends this process).
  let shown = false;
  const show = (up: boolean) => {
    if (shown) return;
    shown = true;
    console.log(banner(config, boot, up));
  };
  child.once("exit", () => show(false));
  stopWithParent(child);

  const up = await waitForHealth(`http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}/api/health`, child);
  show(up);
}

/** What `npm start` prints once the server answers (or failed): where it serves, and the first start's credentials. */
function banner(config: ReturnType<typeof getConfig>, boot: Awaited<ReturnType<typeof bootstrap>>, up: boolean): string {
  const lines = [
    "",
    up ? `  Agent Reach is serving ${config.publicUrl}` : `  Agent Reach could not start its server on ${config.host}:${config.port} (see above); the data directory is ready.`,
    `  workspace root: ${boot.workspaceRoot}${boot.workspaceCreated ? " (created, with a sample README.md)" : ""}`,
    `  database:       ${describeDatabase(config.databaseUrl)}`,
  ];
  if (boot.agentToken) {
    lines.push(`  agent token (shown once; store it now):`, `    ${boot.agentToken}`);
    lines.push(`  try: curl -H "Authorization: Bearer ${boot.agentToken}" -d '{"path":"."}' ${config.publicUrl}/api/tools/list_directory`);
  }
  if (boot.reviewerPassword) lines.push(`  reviewer sign-in (shown once): login "admin", password ${boot.reviewerPassword}`);
  return `${lines.join("\n")}\n`;
}

/** How long the server gets to stop after a signal before it is killed (ms). */
const STOP_GRACE_MS = 8000;

/**
 * Ties the server's life to this process: SIGINT, SIGTERM or SIGHUP here (from a terminal, from
 * `npm start`'s own signal forwarding, from a process manager) is passed on to the server and
 * every process under it, which are killed if it has not stopped within `STOP_GRACE_MS`; this process exits once the server has.
 * When this process is orphaned (the `npm`/tsx process above it died without passing a signal
 * on, e.g. SIGKILL), it stops the server the same way. When the server exits by itself, this
 * process exits with its status.
 */
function stopWithParent(child: ChildProcess): void {
  let stopping = false;
  // `next start` runs the server in a child process of its own, and its CLI leaves SIGINT to the
  // terminal (which signals the whole foreground group): every process under the child is
  // signalled, deepest first. They stay in this process group, so a group kill still takes all.
  // Pids seen under the child, kept so the ones it leaves behind when it exits can still be reached.
  let known: number[] = [];
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) known = [...new Set([...descendantsOf(child.pid!), ...known])];
    for (const pid of [...known].reverse().concat(child.exitCode === null && child.signalCode === null ? [child.pid!] : [])) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone already
      }
    }
  };
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    signalGroup(signal);
    setTimeout(() => signalGroup("SIGKILL"), STOP_GRACE_MS).unref();
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => stop(signal));
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop("SIGTERM");
  }, 500).unref();
  child.on("exit", (code, signal) => {
    // Whatever next's CLI left behind (seen when the stop began) goes with it.
    if (stopping) signalGroup("SIGKILL");
    process.exit(stopping ? 0 : (code ?? (signal ? 1 : 0)));
  });
}

/** Every descendant pid of `pid`, parents before children (Linux /proc; empty elsewhere). */
function descendantsOf(pid: number): number[] {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendantsOf(c)]);
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

/**
 * Polls the health endpoint until it answers (any status), up to 120 s, while `server` runs.
 * @returns true when it answered; false when the server exited first (another program answering
 *   on the port is not this server) or did not answer in time
 */
async function waitForHealth(url: string, server: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  const running = () => server.exitCode === null && server.signalCode === null;
  while (Date.now() < deadline && running()) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return running();
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  if (running()) console.error(`[agent-reach] the server did not answer at ${url} within 120 s`);
  return false;
}

/**
 * Refuses to start when `host:port` cannot be listened on (another program holds it), before the
 * database, the workspace or any credential is made: one line that says what to do, not a stack.
 * @throws Error naming the port and the PORT/HOST settings
 */
async function assertPortFree(host: string, port: number): Promise<void> {
  const problem = await new Promise<string | null>((resolve) => {
    const probe = net.createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    probe.listen(port, host, () => probe.close(() => resolve(null)));
  });
  if (problem === "EADDRINUSE") throw new Error(`port ${port} on ${host} is in use by another program: stop it, or choose another port with PORT (and HOST).`);
  if (problem !== null) throw new Error(`cannot listen on ${host}:${port} (${problem}): set HOST and PORT to an address of this machine.`);
}

main().catch((err) => {
  console.error(`[agent-reach] ${(err as Error).message}`);
  process.exit(1);
});
