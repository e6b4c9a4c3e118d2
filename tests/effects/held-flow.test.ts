import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";
import { callTool } from "@/lib/gateway/call-tool";
import { approveCall, rejectCall } from "@/lib/approvals/queue";
import { currentWorkspace } from "@/lib/gateway/workspace";
import { seedDefaultRules } from "@/lib/gateway/rules";
import { db } from "@/lib/db";

/** The held-effects lifecycle in process: a command's change set held, then approved or rejected. */
let root: string;
beforeAll(async () => {
  await useFreshDatabase();
  await seedDefaultRules();
  root = (await currentWorkspace()).root;
});

const asReviewer = (command: string) =>
  callTool({ door: "dashboard", agent: null, reviewer: "admin", sessionKey: "held" }, "run_command", { command }, { waitMs: 0 });

describe("held change sets", () => {
  it("deleting 60 files is held, then applied on approval", async () => {
    fs.mkdirSync(path.join(root, "many"));
    for (let i = 0; i < 60; i++) fs.writeFileSync(path.join(root, "many", `f${i}`), `${i}\n`);
    const env: any = await asReviewer("rm -rf many && echo gone");
    expect(env.ok, JSON.stringify(env)).toBe(true);
    expect(env.data.changes.status).toBe("held");
    expect(fs.readdirSync(path.join(root, "many"))).toHaveLength(60);
    const row = await db().toolCall.findUnique({ where: { id: env.call_id } });
    expect(row?.status).toBe("pending");
    const decided: any = await approveCall(env.call_id, "admin");
    expect(decided.ok, JSON.stringify(decided)).toBe(true);
    expect(decided.status).toBe("succeeded");
    expect(fs.existsSync(path.join(root, "many"))).toBe(false);
  }, 120_000);

  it("a CI workflow change is held; rejecting discards it", async () => {
    const env: any = await asReviewer("mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml");
    expect(env.data.changes.status).toBe("held");
    const decided: any = await rejectCall(env.call_id, "admin", "no");
    expect(decided.ok, JSON.stringify(decided)).toBe(true);
    expect(decided.envelope.error.detail.changes.status).toBe("discarded");
    expect(fs.existsSync(path.join(root, ".github"))).toBe(false);
  }, 120_000);
});
