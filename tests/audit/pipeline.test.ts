import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { makeToolContext } from "@/tests/helpers/tool-context";
import { createGateway, type Gateway } from "@/lib/gateway";
import { markInterrupted } from "@/lib/approvals/queue";
import { invalidateRules } from "@/lib/policy/rule-store";
import { readFileTool } from "@/lib/tools/read-file";
import { submit, writerStats, type EventInput } from "@/lib/audit/writer";

/**
 * The audited pipeline in process (no server): exactly-once execution under 50 concurrent
 * approvals, waiters receiving the very envelope the tool produced (unmasked under a
 * `redact: false` rule, whole past the stored copy's cap), a capped stored copy that is still an
 * envelope, group commit, and a SIGKILL between "received" and "run" that leaves the received
 * record for the next start to mark interrupted.
 */

let env: { url: string; workspace: string; dataDir: string };
let gw: Gateway;
const FAKE_TOKEN = `ghp_${"A1b2C3d4E5".repeat(3)}123456`;

beforeAll(async () => {
  env = await useFreshDatabase();
  gw = await createGateway({
    env: { DATABASE_URL: env.url, AGENT_REACH_WORKSPACE: env.workspace, AGENT_REACH_DATA_DIR: env.dataDir, AGENT_REACH_READ_MAX_CHARS: "1000000", AGENT_REACH_HOST_ID: "pipeline-test" },
  });
  // Reads under secret/ ask a reviewer and, once approved, come back unmasked.
  await gw.db.policyRule.create({
    data: { id: "test:ask-secret", priority: 1, tool: "read_file", pathGlob: "secret/**", decision: "ask", enabled: true, source: "operator", optionsJson: JSON.stringify({ redact: false }) },
  });
  invalidateRules();
  fs.mkdirSync(path.join(env.workspace, "secret"));
  fs.writeFileSync(path.join(env.workspace, "secret/key.txt"), `token = ${FAKE_TOKEN}\n`);
  // 2,000 lines of quotes: 1,000,000 characters of content, about 2,000,000 once JSON-escaped.
  fs.writeFileSync(path.join(env.workspace, "secret/big.txt"), `${'"'.repeat(499)}\n`.repeat(2000));
  fs.writeFileSync(path.join(env.workspace, "small.txt"), "hello\n");
  fs.writeFileSync(path.join(env.workspace, "target.txt"), "before\n");
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

/** Starts a call that waits for a reviewer; resolves its id once it is queued. */
async function queued(tool: string, args: unknown): Promise<{ callId: string; outcome: Promise<unknown> }> {
  let resolveId!: (id: string) => void;
  const id = new Promise<string>((r) => (resolveId = r));
  const outcome = gw.call(tool, args, { waitMs: 60_000, onPending: resolveId, caller: { sessionKey: "pipeline-test" } });
  return { callId: await Promise.race([id, outcome.then((e) => Promise.reject(new Error(`not queued: ${JSON.stringify(e)}`)))]), outcome };
}

describe("exactly once", () => {
  it("50 concurrent approvals of one queued write: one runs it, 49 are told it was decided, one backup, one run event", async () => {
    const { callId, outcome } = await queued("write_file", { path: "target.txt", content: "after\n" });
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => gw.approve(callId, `reviewer${i}`)));
    const won = decisions.filter((d) => d.ok);
    expect(won).toHaveLength(1);
    expect(decisions.filter((d) => !d.ok && d.error.name === "conflict" && d.error.detail.reason === "already_decided")).toHaveLength(49);
    const agentEnvelope = (await outcome) as { ok: boolean; call_id: string };
    expect(agentEnvelope.ok).toBe(true);
    expect(won[0].ok && won[0].envelope).toEqual(agentEnvelope);
    expect(fs.readFileSync(path.join(env.workspace, "target.txt"), "utf8")).toBe("after\n");
    expect(await gw.db.event.count({ where: { callId, type: "call.running" } })).toBe(1);
    expect(await gw.db.event.count({ where: { callId, type: "call.approved" } })).toBe(1);
    expect(await gw.db.backup.count({ where: { callId } })).toBe(1);
  });
});

describe("waiters receive the envelope the tool produced", () => {
  it("unmasked under a redact: false rule, while the stored copy stays masked", async () => {
    const { callId, outcome } = await queued("read_file", { path: "secret/key.txt" });
    const decision = await gw.approve(callId, "admin");
    const waited = await outcome;
    const produced = await readFileTool.run(readFileTool.input.parse({ path: "secret/key.txt" }), makeToolContext(env.workspace));
    expect(JSON.stringify(waited)).toBe(JSON.stringify({ ok: true, call_id: callId, data: produced }));
    expect(JSON.stringify(waited)).toContain(FAKE_TOKEN);
    expect(decision.ok && JSON.stringify(decision.envelope)).toBe(JSON.stringify(waited));
    const stored = (await gw.db.toolCall.findUniqueOrThrow({ where: { id: callId } })).resultJson!;
    expect(stored).not.toContain(FAKE_TOKEN);
  });

  it("whole past the storage cap; the stored copy is a valid envelope that says it was cut", async () => {
    const { callId, outcome } = await queued("read_file", { path: "secret/big.txt", limit: 2000 });
    await gw.approve(callId, "admin");
    const waited = await outcome;
    const ctx = makeToolContext(env.workspace, { readMaxChars: 1_000_000 });
    const produced = await readFileTool.run(readFileTool.input.parse({ path: "secret/big.txt", limit: 2000 }), ctx);
    const bytes = JSON.stringify(waited);
    expect(bytes.length).toBeGreaterThan(1_000_000);
    expect(bytes).toBe(JSON.stringify({ ok: true, call_id: callId, data: produced }));
    const stored = JSON.parse((await gw.db.toolCall.findUniqueOrThrow({ where: { id: callId } })).resultJson!);
    expect(stored).toMatchObject({ ok: true, call_id: callId, truncated_for_storage: { original_length: expect.any(Number) }, data: { _truncated: true } });
    expect(stored.truncated_for_storage.original_length).toBeGreaterThan(1_000_000);
  });
});

describe("group commit", () => {
  it("concurrent calls share transactions, and the chain verifies with its signed head", async () => {
    const before = gw.stats();
    const envelopes = await Promise.all(Array.from({ length: 64 }, (_, i) => gw.call("read_file", { path: "small.txt" }, { caller: { sessionKey: `group-${i % 8}` } })));
    expect(envelopes.every((e) => e.ok)).toBe(true);
    const after = gw.stats();
    // Three writes per call (received, running, outcome); a read's received record goes with its
    // move to running, and concurrent calls share commits: fewer transactions than two per call.
    expect(after.operations - before.operations).toBe(64 * 3);
    expect(after.transactions - before.transactions).toBeLessThan(64 * 2);
    const verified = await gw.verify();
    expect(verified.ok).toBe(true);
  });
});

describe("a call's status changes committed with its insert", () => {
  it("are folded into the inserted row with every event appended; one that does not apply stops the folding, as one by one", async () => {
    const ref = await gw.db.toolCall.findFirstOrThrow({ where: { tool: "read_file" } });
    const base = { sessionId: ref.sessionId, workspaceId: ref.workspaceId, agentId: ref.agentId, door: "http", tool: "read_file", argsJson: "{}", bytesIn: 2, hostId: "fold-test", createdAt: new Date() };
    const event = (type: string, callId: string): EventInput => ({ type, callId, actor: "system" });
    const [a, b] = [`call_fold_a${Date.now()}`, `call_fold_b${Date.now()}`];
    const started = new Date();
    const before = writerStats();
    // Submitted in one turn of the event loop: one transaction.
    const results = await Promise.all([
      submit({ kind: "insert", row: { ...base, id: a, status: "received" }, event: event("call.received", a) }),
      submit({ kind: "transition", callId: a, from: ["received"], to: "running", columns: { startedAt: started, target: "small.txt" }, event: event("call.running", a) }),
      submit({ kind: "transition", callId: a, from: ["running"], to: "succeeded", columns: { summary: "done", target: undefined }, event: event("call.succeeded", a) }),
      submit({ kind: "insert", row: { ...base, id: b, status: "received" }, event: event("call.received", b) }),
      // Not in `from` (b is "received"): not applied, no event; the next change applies as an UPDATE.
      submit({ kind: "transition", callId: b, from: ["running"], to: "succeeded", columns: { summary: "wrong" }, event: event("call.succeeded", b) }),
      submit({ kind: "transition", callId: b, from: ["received"], to: "pending", columns: { summary: "queued" }, event: event("call.pending", b) }),
    ]);
    expect(writerStats().transactions - before.transactions).toBe(1);
    expect(results.map((r) => r.applied)).toEqual([true, true, true, true, false, true]);
    const rowA = await gw.db.toolCall.findUniqueOrThrow({ where: { id: a } });
    expect([rowA.status, rowA.summary, rowA.target, rowA.startedAt?.getTime()]).toEqual(["succeeded", "done", "small.txt", started.getTime()]);
    const rowB = await gw.db.toolCall.findUniqueOrThrow({ where: { id: b } });
    expect([rowB.status, rowB.summary]).toEqual(["pending", "queued"]);
    const events = await gw.db.event.findMany({ where: { callId: { in: [a, b] } }, orderBy: { seq: "asc" } });
    expect(events.map((e) => `${e.callId === a ? "a" : "b"}:${e.type}`)).toEqual(["a:call.received", "a:call.running", "a:call.succeeded", "b:call.received", "b:call.pending"]);
    expect((await gw.verify()).ok).toBe(true);
  });
});

/**
 * Starts a child process that makes one call through the pipeline with `patch` applied to the
 * tool (it prints MARK when it reaches the point to stop at), waits for MARK, and SIGKILLs it.
 */
async function killMidCall(host: string, tool: string, args: unknown, patch: string): Promise<void> {
  const script = path.join(env.dataDir, `crash-${host}.ts`);
  fs.writeFileSync(
    script,
    `import { getTool } from "@/lib/tools/registry";
    import { callTool } from "@/lib/gateway/call-tool";
    (async () => {
    const tool = getTool(${JSON.stringify(tool)})!;
    ${patch}
    await callTool({ door: "http", agent: ${JSON.stringify(gw.agent)}, sessionKey: "crash" }, ${JSON.stringify(tool)}, ${JSON.stringify(args)}, { waitMs: 0 });
    })();
    `,
  );
  const child = spawn(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "--tsconfig", path.resolve("tsconfig.json"), script], {
    cwd: path.resolve("."),
    env: { ...process.env, AGENT_REACH_HOST_ID: host },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("MARK") && resolve());
    child.once("exit", (code) => reject(new Error(`child exited (${code}) before MARK`)));
  });
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
}

describe("a crash between received and run", () => {
  it("SIGKILL in a write's decision step leaves its received record, and the next start marks it interrupted", async () => {
    // Stop right after the received record: the fence/policy step never returns.
    await killMidCall("crash-decide", "write_file", { path: "crash.txt", content: "x" }, `tool.subject = async () => { process.stdout.write("MARK\\n"); return new Promise(() => {}); };`);
    const row = await gw.db.toolCall.findFirstOrThrow({ where: { hostId: "crash-decide" } });
    expect(row.status).toBe("received");
    expect(await gw.db.event.count({ where: { callId: row.id, type: "call.received" } })).toBe(1);
    expect(await markInterrupted("crash-decide")).toBe(1);
    const after = await gw.db.toolCall.findUniqueOrThrow({ where: { id: row.id } });
    expect(after.status).toBe("interrupted");
    expect(JSON.parse(after.resultJson!).error.detail).toMatchObject({ reason: "interrupted", started: false });
    expect((await gw.verify()).ok).toBe(true);
  }, 240_000);

  it("SIGKILL while a read runs leaves its received and running records (one commit), and the next start marks it interrupted", async () => {
    await killMidCall("crash-run", "read_file", { path: "small.txt" }, `tool.run = async () => { process.stdout.write("MARK\\n"); return new Promise(() => {}); };`);
    const row = await gw.db.toolCall.findFirstOrThrow({ where: { hostId: "crash-run" } });
    expect(row.status).toBe("running");
    const events = await gw.db.event.findMany({ where: { callId: row.id }, orderBy: { seq: "asc" } });
    expect(events.map((e) => e.type)).toEqual(["call.received", "call.running"]);
    expect(await markInterrupted("crash-run")).toBe(1);
    const after = await gw.db.toolCall.findUniqueOrThrow({ where: { id: row.id } });
    expect(after.status).toBe("interrupted");
    expect(JSON.parse(after.resultJson!).error.detail).toMatchObject({ reason: "interrupted", started: true });
    expect((await gw.verify()).ok).toBe(true);
  }, 240_000);
});
