import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    include: ["tests/**/*.test.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: ["default", "./tests/helpers/summary-reporter.ts"],
    pool: "forks",
    maxWorkers: 2,
  },
});
