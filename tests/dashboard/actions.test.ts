import { beforeAll, describe, expect, it, vi } from "vitest";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/**
 * The dashboard's server actions with bad input: a malformed or missing form field, an unknown id,
 * a value of the wrong type sent by a hand-made request. Each answers the API's error (a stable
 * name and code from lib/errors.ts) and none throws. Everything is real (database, sign-in, the
 * lib functions) except Next's request context: the session cookie jar and the cache.
 */

const cookieJar = new Map<string, string>();
vi.mock("next/headers", () => ({
  cookies: async () => ({ get: (name: string) => (cookieJar.has(name) ? { name, value: cookieJar.get(name) } : undefined), set: () => {} }),
}));
vi.mock("next/cache", () => ({ revalidatePath: () => {} }));

function form(fields: Record<string, string | Blob> = {}): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.set(k, v);
  return f;
}

const invalid = { ok: false, error: { name: "invalid_arguments", code: 101 } };
const notFound = { ok: false, error: { name: "not_found", code: 202 } };

beforeAll(async () => {
  await useFreshDatabase();
  const tokens = await import("@/lib/auth/tokens");
  await tokens.ensureReviewer("pw-for-actions", undefined);
  const session = await tokens.signIn("admin", "pw-for-actions");
  if (!session || session === "throttled") throw new Error("sign-in failed");
  cookieJar.set(tokens.SESSION_COOKIE, session.session);
  await (await import("@/lib/policy/rule-store")).seedDefaultRules();
});

describe("policy page actions", () => {
  it("answer a bad rule, an unknown id and a bad preset with the API's errors", async () => {
    const a = await import("@/app/(dashboard)/policy/actions");
    expect(await a.createRuleAction(null, form())).toMatchObject(invalid);
    expect(await a.createRuleAction(null, form({ tool: "no_such_tool", decision: "ask" }))).toMatchObject({ ok: false, error: { name: "invalid_arguments", message: expect.stringContaining("tool: unknown tool") } });
    expect(await a.createRuleAction(null, form({ tool: new Blob(["read_file"]), decision: "ask" }))).toMatchObject(invalid);
    expect(await a.updateRuleAction(null, form({ id: "rule_missing", tool: "*", decision: "ask" }))).toMatchObject(notFound);
    expect(await a.updateRuleAction(null, form({ tool: "*", decision: "ask" }))).toMatchObject(notFound);
    expect(await a.toggleRuleAction(null, form({ id: "rule_missing", enabled: "true" }))).toMatchObject(notFound);
    expect(await a.moveRuleAction(null, form({ id: "rule_missing", direction: "sideways" }))).toMatchObject(notFound);
    expect(await a.deleteRuleAction(null, form())).toMatchObject(notFound);
    expect(await a.deleteRuleAction(null, form({ id: "default:read-tools" }))).toMatchObject({ ok: false, error: { name: "forbidden", code: 607 } });
    expect(await a.setWorkspacePresetAction(null, form({ preset: "yolo" }))).toMatchObject(invalid);
    expect(await a.tryPolicyAction(null, form())).toMatchObject(invalid);
    expect(await a.tryPolicyAction(null, form({ tool: "read_file", path: "../../etc/passwd" }))).toMatchObject({ ok: false, error: { name: "path_outside_workspace", code: 201 } });
  });

  it("a good rule still goes through, with the success message", async () => {
    const a = await import("@/app/(dashboard)/policy/actions");
    expect(await a.createRuleAction(null, form({ tool: "read_file", pathGlob: "notes/**", decision: "allow", enabled: "on" }))).toEqual({ ok: true, message: "Rule added at the end." });
  });
});

describe("token page actions", () => {
  it("answer a blank name, an unknown workspace, preset or token with the API's errors", async () => {
    const a = await import("@/app/(dashboard)/tokens/actions");
    expect(await a.createTokenAction(null, form({ name: "  " }))).toMatchObject(invalid);
    expect(await a.createTokenAction(null, form({ name: "bot", workspaceId: "ws_missing" }))).toMatchObject({ ok: false, error: { name: "invalid_arguments", message: "Unknown workspace." } });
    expect(await a.createTokenAction(null, form({ name: "bot", preset: "yolo" }))).toMatchObject(invalid);
    expect(await a.setTokenPresetAction(null, form({ agentId: "agt_missing", preset: "strict" }))).toMatchObject(notFound);
    expect(await a.setTokenPresetAction(null, form({ preset: "strict" }))).toMatchObject(notFound);
    expect(await a.revokeTokenAction(null, form())).toMatchObject(notFound);
    expect(await a.revokeTokenAction(null, form({ agentId: "agt_missing" }))).toMatchObject(notFound);
  });
});

describe("approval actions", () => {
  it("answer a malformed call id, grant, reason, content or context with invalid_arguments", async () => {
    const a = await import("@/app/(dashboard)/approvals/actions");
    for (const outcome of [
      await a.approveAction(42 as never),
      await a.approveAction("", undefined),
      await a.approveAction("call_x", { scope: "galaxy" }),
      await a.approveEditedAction("call_x", 7 as never),
      await a.rejectAction({} as never, "no"),
      await a.rejectAction("call_x", 5 as never),
    ]) {
      expect(outcome).toMatchObject(invalid);
      expect(outcome.message).toMatch(/^Not (approved|rejected): /);
    }
    expect(await a.rejectAction("call_x", "   ")).toMatchObject(invalid);
    expect(await a.previewEditAction(null as never, "x")).toMatchObject(invalid);
    expect(await a.contextDiffAction("call_x", "all" as never)).toMatchObject(invalid);
    expect(await a.contextDiffAction("call_x", 2.5)).toMatchObject(invalid);
  });

  it("answer an unknown call with the queue's error", async () => {
    const a = await import("@/app/(dashboard)/approvals/actions");
    expect(await a.approveAction("call_missing")).toMatchObject({ ok: false, error: { name: "not_found" } });
    expect(await a.contextDiffAction("call_missing", 25)).toMatchObject({ ok: false, error: { name: "conflict", detail: { reason: "not_pending" } } });
    expect(await a.previewEditAction("call_missing", "x")).toMatchObject({ ok: false, error: { name: "conflict", detail: { reason: "not_pending" } } });
  });
});

describe("other dashboard actions", () => {
  it("restore, reveal, revert, review, rewind, settings and sign-in answer bad input with the API's errors", async () => {
    const backups = await import("@/app/(dashboard)/backups/actions");
    expect(await backups.restoreAction(null, form())).toMatchObject(invalid);
    expect(await backups.restoreAction(null, form({ backupId: "bak_x", expectedSha256: "not-a-sha" }))).toMatchObject(invalid);

    const calls = await import("@/app/(dashboard)/calls/[callId]/actions");
    expect(await calls.revealOutputAction(null, form())).toMatchObject(notFound);
    expect(await calls.revealOutputAction(null, form({ callId: "call_missing" }))).toMatchObject(notFound);
    const revert = await calls.revertCallAction(null, form({ callId: "call_missing" }));
    expect(revert).toMatchObject({ ok: false, error: { name: expect.any(String), code: expect.any(Number), message: expect.any(String) } });

    const review = await import("@/app/(dashboard)/sessions/[sessionId]/review/actions");
    expect(await review.markReviewedAction(null, form())).toMatchObject({ ok: false, error: { name: "invalid_arguments", message: "Nothing to mark." } });
    expect(await review.revertFromReviewAction(null, form({ sessionId: "s" }))).toMatchObject(invalid);

    const rewind = await import("@/app/(dashboard)/sessions/[sessionId]/rewind/actions");
    expect(await rewind.rewindAction(null, form())).toMatchObject({ ok: false, error: { name: expect.any(String), code: expect.any(Number) } });

    const settings = await import("@/app/(dashboard)/settings/actions");
    expect(await settings.saveWebhookAction(null, form({ webhookUrl: "ftp://example.com/" }))).toMatchObject(invalid);
    expect(await settings.saveWebhookAction(null, form({ webhookUrl: "", webhookFormat: "morse" }))).toMatchObject(invalid);

    const login = await import("@/app/login/actions");
    expect(await login.signInAction(null, form({ login: "admin", password: "wrong" }))).toMatchObject({ ok: false, error: { name: "unauthorized", code: 606, message: "Wrong login or password." } });
    expect(await login.signInAction(null, form())).toMatchObject({ ok: false, error: { name: "unauthorized" } });
  });
});
