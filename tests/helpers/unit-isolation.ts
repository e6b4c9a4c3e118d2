import { afterAll } from "vitest";

/**
 * Setup file of the "unit" project, which runs its test files one after another in a shared
 * worker (`isolate: false`) so that the heavy dependencies (Prisma's runtime, zod, the SQLite
 * driver, the shell parser's grammar) load once per worker instead of once per file. What a test
 * file can see of the files before it is put back here, before each file:
 * - our own modules (lib/, tests/, scripts/) are evaluated afresh, as in an isolated worker: module
 *   state starts empty and a file's `vi.mock` applies to the modules it loads (node_modules and the
 *   generated Prisma client stay loaded: they keep no state of ours);
 * - the process-wide state the product keeps on `globalThis` (the Prisma client, the audit writer's
 *   connection and queue, caches, the event bus) is closed and dropped, except the loaded shell
 *   grammar (read-only, like a dependency);
 * - `process.env` is restored to what the worker started with (useFreshDatabase and tests set
 *   DATABASE_URL, the workspace and settings there).
 * A test file must still undo what it does to the process itself (umask, fake timers, listeners).
 */

type Node = { promise?: unknown; exports?: unknown; evaluated: boolean; importers: Set<string> };
type WorkerState = { evaluatedModules: { idToModuleMap: Map<string, Node> } };

const globals = globalThis as unknown as Record<string, unknown> & { __vitest_worker__?: WorkerState; __unitIsolationEnv?: NodeJS.ProcessEnv };

/** Modules kept between files: vitest's own, dependencies, and the generated Prisma client. */
const KEEP = [/\/vitest\/dist\//, /vitest-virtual-\w+\/dist/, /@vitest\/dist/, /\/node_modules\//, /\/lib\/generated\//, /^node:/];

/** Process-wide state that holds nothing of a test: the shell grammar, loaded once (lib/policy/shell-parse.ts). */
const KEEP_GLOBALS = new Set(["agentReachShellParser"]);

function forgetOwnModules(): void {
  const state = globals.__vitest_worker__;
  if (!state) throw new Error("unit-isolation: vitest's worker state is not where it was expected (globalThis.__vitest_worker__); check the vitest version");
  state.evaluatedModules.idToModuleMap.forEach((node, id) => {
    if (KEEP.some((re) => re.test(id))) return;
    node.promise = undefined;
    node.exports = undefined;
    node.evaluated = false;
    node.importers.clear();
  });
}

function restoreEnv(): void {
  const start = (globals.__unitIsolationEnv ??= { ...process.env });
  for (const key of Object.keys(process.env)) if (!(key in start)) delete process.env[key];
  Object.assign(process.env, start);
}

/** Closes what the last file left open on globalThis, then drops every `agentReach…` entry. */
async function dropProcessState(): Promise<void> {
  const g = globals as Record<string, unknown>;
  const db = g.agentReachDb as { $disconnect(): Promise<void> } | undefined;
  await db?.$disconnect().catch(() => undefined);
  const writerConn = g.agentReachAuditSqlite as { handle: { open: boolean; close(): void } } | undefined;
  if (writerConn?.handle.open) writerConn.handle.close();
  const writerPg = g.agentReachWriterPg as { pool: { end(): Promise<void> } } | undefined;
  await writerPg?.pool.end().catch(() => undefined);
  const checkpointers = g.agentReachCheckpointers as Map<string, { terminate(): Promise<number> }> | undefined;
  await Promise.all([...(checkpointers?.values() ?? [])].map((w) => w.terminate().catch(() => 0)));
  const fanout = g.agentReachFanout as { close(): Promise<void> } | undefined;
  await fanout?.close().catch(() => undefined);
  const stopExecutor = g.agentReachExecutor as (() => void) | undefined;
  stopExecutor?.();
  const sandbox = g.agentReachSandbox as { timer: NodeJS.Timeout | null; watchers: Map<string, Map<string, { close(): void }>> } | undefined;
  if (sandbox?.timer) clearInterval(sandbox.timer);
  sandbox?.watchers.forEach((perRoot) => perRoot.forEach((w) => w.close()));
  const bus = g.agentReachBus as { removeAllListeners(): void } | undefined;
  bus?.removeAllListeners();
  for (const key of Object.keys(g)) if (/^_*agentReach/.test(key) && !KEEP_GLOBALS.has(key)) delete g[key];
}

await dropProcessState();
restoreEnv();
forgetOwnModules();

afterAll(async () => {
  await dropProcessState();
});
