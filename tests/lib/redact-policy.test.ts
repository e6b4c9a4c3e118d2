import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * Masking through the gateway and its relaxation by policy, in process on a real
 * database and workspace: what the agent receives, what the audit row stores, a rule with
 * `{"redact": false}`, and a reviewer revealing a masked value (lib/redact/reveal.ts) with the
 * `secret.revealed` event.
 */

const KEY = "AKIAIOSFODNN7EXAMPLE";
const PASSWORD = "hunter2hunter2";
const CONFIG = `region=eu-west-1\naws_access_key_id=${KEY}\nDB_PASSWORD=${PASSWORD}\n`;

let workspace: string;
type Lib = {
  callTool: typeof import("@/lib/gateway/call-tool").callTool;
  reveal: typeof import("@/lib/redact/reveal").revealCallOutput;
  db: typeof import("@/lib/db").db;
  invalidateRules: typeof import("@/lib/policy/rule-store").invalidateRules;
};
let lib: Lib;
let agent: import("@/lib/gateway/call-tool").Caller;

beforeAll(async () => {
  ({ workspace } = await useFreshDatabase());
  const { seedDefaultRules, invalidateRules } = await import("@/lib/policy/rule-store");
  await seedDefaultRules();
  const { createAgentToken } = await import("@/lib/auth/tokens");
  agent = { door: "http", agent: (await createAgentToken("test agent")).agent, sessionKey: "redact" };
  lib = {
    callTool: (await import("@/lib/gateway/call-tool")).callTool,
    reveal: (await import("@/lib/redact/reveal")).revealCallOutput,
    db: (await import("@/lib/db")).db,
    invalidateRules,
  };
  for (const dir of ["config", "fixtures"]) fs.mkdirSync(path.join(workspace, dir));
  fs.writeFileSync(path.join(workspace, "config/app.conf"), CONFIG);
  fs.writeFileSync(path.join(workspace, "fixtures/app.conf"), CONFIG);
  await lib.db().policyRule.create({
    data: { id: "ops:fixtures-unmasked", priority: 50, tool: "*", pathGlob: "fixtures/**", decision: "allow", note: "fake keys for tests", optionsJson: JSON.stringify({ redact: false }) },
  });
  lib.invalidateRules();
});

async function read(file: string) {
  const envelope = await lib.callTool(agent, "read_file", { path: file }, { waitMs: 0 });
  if (!envelope.ok) throw new Error(`read_file failed: ${envelope.error.name}`);
  return { callId: envelope.call_id, content: (envelope.data as { content: string }).content };
}

async function storedRow(callId: string): Promise<string> {
  const row = await lib.db().toolCall.findUniqueOrThrow({ where: { id: callId } });
  return JSON.stringify(row);
}

describe("what the agent receives and the log stores", () => {
  it("masked by default, in the answer and in the stored row", async () => {
    const { callId, content } = await read("config/app.conf");
    expect(content).toContain(`[REDACTED:aws_access_key:20]`);
    expect(content).toContain(`DB_PASSWORD=[REDACTED:secret_assignment:14]`);
    expect(content).toContain("region=eu-west-1");
    for (const secret of [KEY, PASSWORD]) {
      expect(content).not.toContain(secret);
      expect(await storedRow(callId)).not.toContain(secret);
    }
  });

  it("a rule with redact:false lets the agent see its paths unmasked; the stored row stays masked", async () => {
    const { callId, content } = await read("fixtures/app.conf");
    expect(content).toContain(KEY);
    expect(content).toContain(PASSWORD);
    const row = await storedRow(callId);
    expect(row).not.toContain(KEY);
    expect(row).not.toContain(PASSWORD);
    const decision = JSON.parse((await lib.db().toolCall.findUniqueOrThrow({ where: { id: callId } })).decisionJson!);
    expect(decision.options).toEqual({ redact: false });
  });
});

describe("a reviewer reveals a masked value", () => {
  it("only where policy relaxes masking, and the reveal is logged without the values", async () => {
    const { callId } = await read("fixtures/app.conf");
    const result = await lib.reveal(callId, "alice");
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect((result.data as { content: string }).content).toContain(KEY);
    expect(result.revealed).toEqual({ aws_access_key: 1, secret_assignment: 1 });
    const events = await lib.db().event.findMany({ where: { callId, type: "secret.revealed" } });
    expect(events).toHaveLength(1);
    expect(events[0].actor).toBe("reviewer:alice");
    expect(JSON.parse(events[0].dataJson)).toEqual({ tool: "read_file", paths: ["fixtures/app.conf"], kinds: { aws_access_key: 1, secret_assignment: 1 } });
    expect(events[0].dataJson).not.toContain(KEY);
  });

  it("refuses where the policy keeps masking", async () => {
    const { callId } = await read("config/app.conf");
    const result = await lib.reveal(callId, "alice");
    expect(result).toMatchObject({ ok: false, error: { name: "forbidden", detail: { reason: "policy_keeps_masked", paths: ["config/app.conf"] } } });
    expect(await lib.db().event.count({ where: { callId, type: "secret.revealed" } })).toBe(0);
  });

  it("refuses when the file changed since the call", async () => {
    fs.writeFileSync(path.join(workspace, "fixtures/changing.conf"), `API_KEY=first-value-1234\n`);
    const { callId } = await read("fixtures/changing.conf");
    fs.writeFileSync(path.join(workspace, "fixtures/changing.conf"), `API_KEY=other-value-5678\n`);
    expect(await lib.reveal(callId, "alice")).toMatchObject({ ok: false, error: { name: "conflict" } });
  });

  it("refuses output that cannot be produced again (run_command)", async () => {
    const envelope = await lib.callTool(agent, "run_command", { command: "cat fixtures/app.conf" }, { waitMs: 0 });
    expect(envelope.ok).toBe(true);
    const result = await lib.reveal(envelope.call_id!, "alice");
    expect(result).toMatchObject({ ok: false, error: { name: "forbidden", detail: { reason: "not_reproducible" } } });
  });

  it.each([
    ["an unknown call", "call_nope", "not_found"],
  ])("answers %s with %s", async (_label, callId, name) => {
    expect(await lib.reveal(callId, "alice")).toMatchObject({ ok: false, error: { name } });
  });

  it("a call without masked values is shown as stored, with nothing logged", async () => {
    fs.writeFileSync(path.join(workspace, "fixtures/plain.txt"), "nothing secret\n");
    const { callId } = await read("fixtures/plain.txt");
    expect(await lib.reveal(callId, "alice")).toMatchObject({ ok: true, revealed: {} });
    expect(await lib.db().event.count({ where: { callId, type: "secret.revealed" } })).toBe(0);
  });
});
