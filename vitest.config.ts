import { defineConfig } from "vitest/config";

/**
 * Two projects run by `npm test`:
 * - "sqlite": every test, on SQLite files (the default store);
 * - "postgres": the tests that touch the database (audit log, doors), again on a throwaway
 *   PostgreSQL server started from Debian's packages (tests/helpers/pg-global-setup.ts), so the
 *   same behaviour is proven on both providers, plus tests/pg (several instances on one database).
 */
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
      { extends: true, test: { name: "sqlite", include: ["tests/**/*.test.ts"], exclude: ["tests/pg/**"] } },
      {
        extends: true,
        test: {
          name: "postgres",
          include: ["tests/audit/**/*.test.ts", "tests/doors/**/*.test.ts", "tests/pg/**/*.test.ts"],
          // The conformance suite checks the protocol, not the store: once (sqlite) is enough.
          // database-locked holds a SQLite write lock with better-sqlite3: a SQLite-only behaviour
          // (PostgreSQL's side of it, a database that is down, is tests/reliability's faults-db).
          exclude: ["tests/doors/mcp-conformance.test.ts", "tests/doors/database-locked.test.ts"],
          globalSetup: ["tests/helpers/pg-global-setup.ts"],
        },
      },
    ],
  },
});
