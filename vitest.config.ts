import { defineConfig } from "vitest/config";

/**
 * The test projects. `npm test` runs them all; each can run alone (`vitest run --project unit`).
 * - "unit" (`npm run test:unit`): the logic, in this process, on SQLite files: no server, no
 *   browser, no PostgreSQL, no child process. Seconds; the one to run on every change.
 * - "system" (`npm run test:system`): in this process too, but with real child processes:
 *   commands in the bwrap sandbox, cgroup limits, git repositories, bash as the reference for the
 *   shell parser, a SIGKILLed child. Minutes.
 * - "doors": the doors through a real `next start` (HTTP, MCP, CLI, the Claude Code hook), on
 *   SQLite; the first one in a worktree builds the app.
 * - "e2e": the dashboard in real Chromium, on SQLite.
 * - "reliability": crashes, faults and fuzzing against real servers, on SQLite.
 * - "postgres": the tests that touch the database (audit log, doors) again on a throwaway
 *   PostgreSQL server started from Debian's packages (tests/helpers/pg-global-setup.ts), so the
 *   same behaviour is proven on both providers, plus tests/pg (several instances on one database).
 * The type-check is not a test: `.ci/run` runs `tsc` next to `npm test`.
 */

/**
 * In-process test files that spawn processes (bwrap, git, bash, sh, iconv as the reference
 * encoder, a node child) or run commands through the sandbox: the "system" project, so "unit"
 * stays pure logic. (Files that need a FIFO, or read the product's one-off sandbox probe, stay in
 * "unit".)
 */
const SYSTEM_TESTS = [
  "tests/audit/pipeline.test.ts",
  "tests/dashboard/desk.test.ts",
  "tests/effects/**/*.test.ts",
  "tests/exec/cgroup.test.ts",
  "tests/exec/containment.test.ts",
  "tests/exec/limits.test.ts",
  "tests/exec/run-command.test.ts",
  "tests/exec/git-config-sanitize.test.ts",
  "tests/exec/sandbox-git.test.ts",
  "tests/exec/sandbox-gitconfig.test.ts",
  "tests/exec/sandbox-home.test.ts",
  "tests/exec/sandbox-masks.test.ts",
  "tests/exec/sandbox-secrets.test.ts",
  "tests/exec/sandbox.test.ts",
  "tests/lib/health.test.ts",
  "tests/lib/redact-encoded.test.ts",
  "tests/lib/redact-policy.test.ts",
  "tests/policy/classes.test.ts",
  "tests/policy/command-policy.test.ts",
  "tests/policy/git-repo.test.ts",
  "tests/policy/presets.test.ts",
  "tests/policy/sensitive-reads.test.ts",
  "tests/policy/shell-parse.test.ts",
  "tests/tools/output-schemas.test.ts",
  "tests/tools/encodings.test.ts",
  "tests/tools/run-command.test.ts",
  "tests/workspace/encoding.test.ts",
];

/** Test files outside tests/doors that start a real server (they belong to "doors"). */
const SERVER_TESTS = ["tests/cli/cli.test.ts", "tests/cli/offline.test.ts", "tests/hooks/claude-code.test.ts", "tests/runtime/start.test.ts"];

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    environment: "node",
    // Tests were written against the strict preset (every write and non-read-only command asks):
    // workspaces they create, in process or through tests/helpers/server.ts (which passes the
    // environment on), start strict. Tests of the other presets choose theirs explicitly.
    env: { AGENT_REACH_DEFAULT_PRESET: "strict" },
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: ["default", "./tests/helpers/summary-reporter.ts"],
    pool: "forks",
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["tests/**/*.test.ts"],
          // One worker runs many files: dependencies load once per worker, not once per file.
          // tests/helpers/unit-isolation.ts gives each file fresh modules of ours, a fresh
          // globalThis state and the starting environment, as an isolated worker would.
          isolate: false,
          setupFiles: ["tests/helpers/unit-isolation.ts"],
          exclude: ["tests/doors/**", "tests/e2e/**", "tests/reliability/**", "tests/pg/**", ...SERVER_TESTS, ...SYSTEM_TESTS],
        },
      },
      { extends: true, test: { name: "system", include: SYSTEM_TESTS } },
      { extends: true, test: { name: "doors", include: ["tests/doors/**/*.test.ts", ...SERVER_TESTS] } },
      { extends: true, test: { name: "e2e", include: ["tests/e2e/**/*.test.ts"] } },
      { extends: true, test: { name: "reliability", include: ["tests/reliability/**/*.test.ts"] } },
      {
        extends: true,
        test: {
          name: "postgres",
          include: ["tests/audit/**/*.test.ts", "tests/doors/**/*.test.ts", "tests/pg/**/*.test.ts"],
          // The conformance suite checks the protocol, not the store: once (on SQLite) is enough.
          // database-locked holds a SQLite write lock with better-sqlite3: a SQLite-only behaviour
          // (PostgreSQL's side of it, a database that is down, is tests/reliability's faults-db).
          // The sandbox escape table (what a command in the box can reach) and the catastrophic
          // regex (the matcher worker's budget) check the box and the matcher, not the store; the
          // few rows they read (a verdict's preset, an unboxed call's summary) are written by the
          // same audit path the other door files prove here. (containment stays: it checks that
          // no stored row holds a raw secret, on both providers.)
          exclude: ["tests/doors/mcp-conformance.test.ts", "tests/doors/database-locked.test.ts", "tests/doors/sandbox.test.ts", "tests/doors/search-redos.test.ts"],
          globalSetup: ["tests/helpers/pg-global-setup.ts"],
        },
      },
    ],
  },
});
