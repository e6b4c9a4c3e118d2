import path from "node:path";
import { defineConfig } from "prisma/config";

// Prisma 7's CLI would download a native schema engine, which this project never needs:
// `prisma generate` does not run it, and migrations are applied by lib/db/migrate.ts.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve("scripts/no-schema-engine.sh");

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "file:./data/agent-reach.db" },
});
