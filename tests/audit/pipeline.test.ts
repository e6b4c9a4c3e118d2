import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { makeToolContext } from "@/tests/helpers/tool-context";

/**
 * The audited pipeline in process (no server): exactly-once execution under 50 concurrent
 * approvals, waiters receiving the very envelope the tool produced (unmasked under a
 * `redact: false` rule, whole past the stored copy's cap), a capped stored copy that is still an
 * envelope, group commit, and a SIGKILL between "received" and "run" that leaves the received
 * record for the next start to mark interrupted.
 */

let env: { url: string; workspace: string; dataDir: string };
let agent: { id: string; name: string };
const FAKE_TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}123456`;

beforeAll(async () => {
  env = await useFreshDatabase();
  process.env.AGENT_REACH_READ_MAX_CHARS = "1000000";
  process.env.AGENT_REACH_HOST_ID = "pipeline-test";
  const { bootstrap } = await import("@/lib/runtime/bootstrap");
  await bootstrap({} as NodeJS.ProcessEnv);
  const { db } = await import("@/lib/db");
  agent = await db().agent.findFirstOrThrow({ select: { id: true, name: true } });
  // Reads under secret/ ask a reviewer and, once approved, come back unmasked.
  await db().policyRule.create({
    data: { id: "test:ask-secret", priority: 1, tool: "read_file", pathGlob: "secret/**", decision: "ask", enabled: true, source: "operator", optionsJson: JSON.stringify({ redact: false }) },
  });
  const { invalidateRules } = await import("@/lib/gateway/rules");
  invalidateRules();
  fs.mkdirSync(path.join(env.workspace, "secret"));
  fs.writeFileSync(path.join(env.workspace, "secret/key.txt"), `token = ${FAKE_TOKEN}\n`);
  // 2,000 lines of quotes: 1,000,000 characters of content, about 2,000,000 once JSON-escaped.
  fs.writeFileSync(path.join(env.workspace, "secret/big.txt"), `${'"'.repeat(499)}\n`.repeat(2000));
  fs.writeFileSync(path.join(env.workspace, "small.txt"), "hello\n");
  fs.writeFileSync(path.join(env.workspace, "target.txt"), "before\n");
}, 60_000);

const caller = () => ({ door: "http" as const, agent: { ...agent }, sessionKey: "pipeline-test" });

/** Starts a call that waits for a reviewer; resolves its id once it is queued. */
async function queued(tool: string, args: unknown): Promise<{ callId: string; outcome: Promise<unknown> }> {
  const { callTool } = await import("@/lib/gateway/call-tool");
  let resolveId!: (id: string) => void;
  const id = new Promise<string>((r) => (resolveId = r));
  const outcome = callTool(caller(), tool, args, { waitMs: 60_000, onPending: resolveId });
  return { callId: await Promise.race([id, outcome.then((e) => Promise.reject(new Error(`not queued: ${JSON.stringify(e)}`)))]), outcome };
}

describe("exactly once", () => {
  it("50 concurrent approvals of one queued write: one runs it, 49 are told it was decided, one backup, one run event", async () => {
    const { approveCall } = await import("@/lib/approvals/queue");
    const { db } = await import("@/lib/db");
    const { callId, outcome } = await queued("write_file", { path: "target.txt", content: "after\n" });
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => approveCall(callId, `reviewer${i}`)));
    const won = decisions.filter((d) => d.ok);
    expect(won).toHaveLength(1);
    expect(decisions.filter((d) => !d.ok && d.error.name === "conflict" && d.error.detail.reason === "already_decided")).toHaveLength(49);
    const agentEnvelope = (await outcome) as { ok: boolean; call_id: string };
    expect(agentEnvelope.ok).toBe(true);
    expect(won[0].ok && won[0].envelope).toEqual(agentEnvelope);
    expect(fs.readFileSync(path.join(env.workspace, "target.txt"), "utf8")).toBe("after\n");
    expect(await db().event.count({ where: { callId, type: "call.running" } })).toBe(1);
    expect(await db().event.count({ where: { callId, type: "call.approved" } })).toBe(1);
    expect(await db().backup.count({ where: { callId } })).toBe(1);
  });
});

describe("waiters receive the envelope the tool produced", () => {
  it("unmasked under a redact: false rule, while the stored copy stays masked", async () => {
    const { approveCall } = await import("@/lib/approvals/queue");
    const { readFileTool } = await import("@/lib/tools/read-file");
    const { db } = await import("@/lib/db");
    const { callId, outcome } = await queued("read_file", { path: "secret/key.txt" });
    const decision = await approveCall(callId, "admin");
    const waited = await outcome;
    const produced = await readFileTool.run(readFileTool.input.parse({ path: "secret/key.txt" }), makeToolContext(env.workspace));
    expect(JSON.stringify(waited)).toBe(JSON.stringify({ ok: true, call_id: callId, data: produced }));
    expect(JSON.stringify(waited)).toContain(FAKE_TOKEN);
    expect(decision.ok && JSON.stringify(decision.envelope)).toBe(JSON.stringify(waited));
    const stored = (await db().toolCall.findUniqueOrThrow({ where: { id: callId } })).resultJson!;
    expect(stored).not.toContain(FAKE_TOKEN);
  });

  it("whole past the storage cap; the stored copy is a valid envelope that says it was cut", async () => {
    const { approveCall } = await import("@/lib/approvals/queue");
    const { readFileTool } = await import("@/lib/tools/read-file");
    const { db } = await import("@/lib/db");
    const { callId, outcome } = await queued("read_file", { path: "secret/big.txt", limit: 2000 });
    await approveCall(callId, "admin");
    const waited = await outcome;
    const ctx = makeToolContext(env.workspace, { readMaxChars: 1_000_000 });
    const produced = await readFileTool.run(readFileTool.input.parse({ path: "secret/big.txt", limit: 2000 }), ctx);
    const bytes = JSON.stringify(waited);
    expect(bytes.length).toBeGreaterThan(1_000_000);
    expect(bytes).toBe(JSON.stringify({ ok: true, call_id: callId, data: produced }));
    const stored = JSON.parse((await db().toolCall.findUniqueOrThrow({ where: { id: callId } })).resultJson!);
    expect(stored).toMatchObject({ ok: true, call_id: callId, truncated_for_storage: { original_length: expect.any(Number) }, data: { _truncated: true } });
    expect(stored.truncated_for_storage.original_length).toBeGreaterThan(1_000_000);
  });
});

describe("group commit", () => {
  it("concurrent calls share transactions, and the chain verifies with its signed head", async () => {
    const { callTool } = await import("@/lib/gateway/call-tool");
    const { writerStats } = await import("@/lib/audit/writer");
    const { verifyChain } = await import("@/lib/audit/events");
    const before = writerStats();
    const envelopes = await Promise.all(
      Array.from({ length: 64 }, (_, i) => callTool({ ...caller(), sessionKey: `group-${i % 8}` }, "read_file", { path: "small.txt" }, { waitMs: 0 })),
    );
    expect(envelopes.every((e) => e.ok)).toBe(true);
    const after = writerStats();
    // Three writes per call (received, running, outcome); fewer transactions than writes.
    expect(after.operations - before.operations).toBe(64 * 3);
    expect(after.transactions - before.transactions).toBeLessThan(64 * 3);
    const verified = await verifyChain();
    expect(verified.ok).toBe(true);
  });
});

describe("a crash between received and run", () => {
  it("SIGKILL after the received record is committed leaves it, and the next start marks it interrupted", async () => {
    const { db } = await import("@/lib/db");
    const { markInterrupted } = await import("@/lib/approvals/queue");
    const script = path.join(env.dataDir, "crash-child.ts");
    fs.writeFileSync(
      script,
      `(async () => {
      const { getTool } = await import("@/lib/tools/registry");
      const { callTool } = await import("@/lib/gateway/call-tool");
      const tool = getTool("read_file")!;
      // Stop right after the received record: the fence/policy step never returns.
      tool.subject = async () => { process.stdout.write("RECEIVED\\n"); return new Promise(() => {}); };
      await callTool({ door: "http", agent: ${JSON.stringify(agent)}, sessionKey: "crash" }, "read_file", { path: "small.txt" }, { waitMs: 0 });
      })();
      `,
    );
    const child = spawn(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--tsconfig", path.resolve("tsconfig.json"), script], {
      cwd: path.resolve("."),
      env: { ...process.env, AGENT_REACH_HOST_ID: "crash-host" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (d: Buffer) => d.toString().includes("RECEIVED") && resolve());
      child.once("exit", (code) => reject(new Error(`child exited (${code}) before recording`)));
    });
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const row = await db().toolCall.findFirstOrThrow({ where: { hostId: "crash-host" } });
    expect(row.status).toBe("received");
    expect(await db().event.count({ where: { callId: row.id, type: "call.received" } })).toBe(1);
    expect(await markInterrupted("crash-host")).toBe(1);
    const after = await db().toolCall.findUniqueOrThrow({ where: { id: row.id } });
    expect(after.status).toBe("interrupted");
    expect(JSON.parse(after.resultJson!).error.detail).toMatchObject({ reason: "interrupted", started: false });
    const { verifyChain } = await import("@/lib/audit/events");
    expect((await verifyChain()).ok).toBe(true);
  }, 60_000);
});
