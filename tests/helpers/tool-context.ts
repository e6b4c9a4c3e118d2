import crypto from "node:crypto";
import fs from "node:fs";
import { test } from "vitest";
import { loadConfig, type Config } from "@/lib/config";
import type { AuditNotes, BackupRecord, BackupStore, ToolContext, Workspace } from "@/lib/tools/define-tool";
import { makeFixture, type Fixture } from "@/tests/helpers/fixture";

/**
 * A ToolContext for unit tests of one tool's `run`, with an in-memory BackupStore.
 * Tests through the real doors (HTTP, MCP, CLI) use the database-backed store instead.
 */
export interface TestContext extends ToolContext {
  notes: AuditNotes;
  savedBackups: Array<BackupRecord & { bytes: Buffer }>;
}

export function makeToolContext(root: string, overrides: Partial<Config> = {}): TestContext {
  const workspace: Workspace = { id: "ws_test", root: fs.realpathSync(root), configuredRoot: root };
  const config: Config = { ...loadConfig({ AGENT_REACH_WORKSPACE: root } as unknown as NodeJS.ProcessEnv), ...overrides };
  const savedBackups: Array<BackupRecord & { bytes: Buffer }> = [];
  let made = 0;
  const callId = `call_test_${crypto.randomUUID()}`;
  const backups: BackupStore = {
    async save({ path, bytes, mode }) {
      const rec = {
        id: `bak_${++made}`,
        path,
        sha256: crypto.createHash("sha256").update(bytes).digest("hex"),
        size: bytes.length,
        mode,
        callId,
        createdAt: new Date(),
      };
      savedBackups.push({ ...rec, bytes: Buffer.from(bytes) });
      return rec;
    },
    async discard(ids) {
      for (const id of ids) {
        const i = savedBackups.findIndex((b) => b.id === id);
        if (i >= 0) savedBackups.splice(i, 1);
      }
    },
    async get(id) {
      return savedBackups.find((b) => b.id === id) ?? null;
    },
    async list({ path, offset, limit }) {
      const all = savedBackups.filter((b) => path === undefined || b.path === path).reverse();
      return { items: all.slice(offset, offset + limit), total: all.length };
    },
  };
  const ctx: TestContext = {
    callId,
    workspace,
    config,
    signal: new AbortController().signal,
    notes: {},
    note(n) {
      Object.assign(ctx.notes, n);
    },
    backups,
    savedBackups,
  };
  return ctx;
}

/**
 * `test` with the two fixtures most tool tests set up by hand: `f`, a fresh field-cases
 * workspace (tests/helpers/fixture.ts; removed after the test), and `ctx`, a ToolContext on it.
 * Each is made only for the tests that name it: `workspaceTest("…", async ({ f, ctx }) => …)`;
 * with a table, `workspaceTest.for(rows)("…", async (row, { f, ctx }) => …)`.
 */
export const workspaceTest = test.extend<{ f: Fixture; ctx: TestContext }>({
  f: async ({}, use) => {
    const f = await makeFixture();
    await use(f);
    await f.cleanup();
  },
  ctx: async ({ f }, use) => {
    await use(makeToolContext(f.ws));
  },
});
