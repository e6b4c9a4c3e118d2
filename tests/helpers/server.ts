import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildIfNeeded } from "@/scripts/build-if-needed";

/**
 * Starts the real product for door tests: `scripts/start.ts` (the same code `npm start` runs)
 * with its own data directory, workspace, loopback port and preset tokens, serving a production
 * build of the app (built once per source change, under a cross-process lock).
 */
export interface TestServer {
  url: string;
  agentToken: string;
  reviewerToken: string;
  reviewerPassword: string;
  workspace: string;
  dataDir: string;
  databaseUrl: string;
  /** pid of the Next.js server process (child of scripts/start.ts). */
  pid: number;
  /** Calls a tool over HTTP; returns status, headers and parsed JSON. */
  call(tool: string, args: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  /** A request with the reviewer token. */
  reviewer(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL the whole process group (crash). */
  kill(): Promise<void>;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Builds the app once for all test workers (buildIfNeeded serialises concurrent builders). */
export async function ensureBuilt(): Promise<void> {
  await buildIfNeeded(ROOT);
}

/** The first descendant of `pid` whose command line contains `needle` (Linux /proc), or null. */
function descendantPid(pid: number, needle: string): number | null {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return null;
  }
  for (const child of children) {
    const cmdline = fs.readFileSync(`/proc/${child}/cmdline`, "utf8").replace(/\0/g, " ");
    if (cmdline.includes(needle)) return child;
    const deeper = descendantPid(child, needle);
    if (deeper) return deeper;
  }
  return null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface StartOptions {
  /** Workspace root; a fresh temp dir when omitted. */
  workspace?: string;
  /** Reuse a data dir (restart tests). */
  dataDir?: string;
  /** Reuse a database (restart tests, several instances); a fresh one when omitted. */
  databaseUrl?: string;
  port?: number;
  env?: Record<string, string>;
}

/**
 * A fresh database for a new server: on the test PostgreSQL server when the test runs in the
 * "postgres" project, else a SQLite file in the data dir. (Imported lazily so benchmarks can use
 * this launcher outside vitest.)
 */
async function defaultDatabaseUrl(dataDir: string): Promise<string> {
  if (process.env.VITEST) {
    const { createPgDatabase, testPgUrl } = await import("@/tests/helpers/pg");
    const pg = testPgUrl();
    if (pg) return createPgDatabase(pg);
  }
  return `file:${path.join(dataDir, "agent-reach.db")}`;
}

export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  await ensureBuilt();
  const base = await fsp.realpath(os.tmpdir());
  const workspace = options.workspace ?? (await fsp.mkdtemp(path.join(base, "ar-ws-")));
  const dataDir = options.dataDir ?? (await fsp.mkdtemp(path.join(base, "ar-data-")));
  const port = options.port ?? (await freePort());
  const databaseUrl = options.databaseUrl ?? (await defaultDatabaseUrl(dataDir));
  const agentToken = "ar_agent_test_0123456789abcdefghijklmnopqrstuvwxyz";
  const reviewerToken = "ar_rev_test_0123456789abcdefghijklmnopqrstuvwxyz";
  const reviewerPassword = "test-reviewer-password";
  const env = {
    ...process.env,
    NODE_ENV: "production" as const,
    HOST: "127.0.0.1",
    PORT: String(port),
    AGENT_REACH_WORKSPACE: workspace,
    AGENT_REACH_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    AGENT_REACH_AGENT_TOKEN: agentToken,
    AGENT_REACH_REVIEWER_TOKEN: reviewerToken,
    AGENT_REACH_REVIEWER_PASSWORD: reviewerPassword,
    AGENT_REACH_HOST_ID: `test-${port}`,
    ...options.env,
  };
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/start.ts"], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`server did not become healthy:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      /* already gone */
    }
  };
  return {
    url,
    agentToken,
    reviewerToken,
    reviewerPassword,
    workspace,
    dataDir,
    databaseUrl,
    pid: descendantPid(child.pid!, "agent-reach-server") ?? descendantPid(child.pid!, "next") ?? child.pid!,
    async call(tool, args, headers = {}) {
      const res = await fetch(`${url}/api/tools/${tool}`, {
        method: "POST",
        headers: { authorization: `Bearer ${agentToken}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(args),
      });
      return { status: res.status, body: await res.json(), headers: res.headers };
    },
    async reviewer(method, pathname, body) {
      const res = await fetch(`${url}${pathname}`, {
        method,
        headers: { authorization: `Bearer ${reviewerToken}`, "content-type": "application/json" },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    },
    async stop() {
      killGroup("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      killGroup("SIGKILL");
    },
    async kill() {
      killGroup("SIGKILL");
      await exited;
    },
  };
}
