import { beforeAll, describe, expect, it } from "vitest";
import { createAgentToken, ensureReviewer, SESSION_COOKIE, signIn } from "@/lib/auth/tokens";
import { requireAgentOrReviewer, requireReviewer } from "@/lib/http/auth";
import { approvalWait } from "@/lib/http/respond";
import { useFreshDatabase } from "@/tests/helpers/test-db";

/** The HTTP door's route helpers, on a real SQLite database: who is calling, and how long to wait. */

const REVIEWER_TOKEN = `ar_rev_${"r".repeat(24)}`;
const PASSWORD = "correct horse battery";
let agentToken: string;

beforeAll(async () => {
  await useFreshDatabase();
  agentToken = (await createAgentToken("helpers-test")).token;
  await ensureReviewer(PASSWORD, REVIEWER_TOKEN);
});

const request = (headers: Record<string, string>, method = "GET") => new Request("http://127.0.0.1:3000/api/calls/x", { method, headers });

describe("approvalWait", () => {
  const config = { approvalWaitDefaultMs: 30_000, approvalWaitMaxMs: 120_000 };
  it.each([
    [{}, 30_000, null],
    [{ prefer: "wait=10" }, 10_000, "wait=10"],
    [{ prefer: "respond-async, wait=5" }, 5_000, "wait=5"],
    [{ prefer: "wait=9999" }, 120_000, "wait=120"],
    [{ prefer: "wait=0" }, 0, "wait=0"],
    [{ prefer: "handling=lenient" }, 30_000, null],
    // A malformed wait is ignored (RFC 7240 section 2): the default applies, and nothing says it was honored.
    [{ prefer: "wait=abc" }, 30_000, null],
    [{ prefer: "wait=-1" }, 30_000, null],
    [{ prefer: "wait=" }, 30_000, null],
    [{ prefer: "wait=1e3" }, 30_000, null],
    [{ prefer: "wait=abc, wait=7" }, 7_000, "wait=7"],
    [{ prefer: 'wait="4"' }, 4_000, "wait=4"],
    [{ prefer: "WAIT = 3 ; x=y" }, 3_000, "wait=3"],
  ] as const)("%j waits %i ms, applied %s", (headers, waitMs, applied) => {
    expect(approvalWait(request(headers), config)).toEqual({ waitMs, applied });
  });
});

describe("requireAgentOrReviewer", () => {
  it("an agent token authenticates the agent", async () => {
    const auth = await requireAgentOrReviewer(request({ authorization: `Bearer ${agentToken}` }));
    expect(auth.ok && auth.agent?.name).toBe("helpers-test");
    expect(auth.ok && auth.reviewer).toBe(null);
  });

  it("a reviewer token authenticates the reviewer", async () => {
    const auth = await requireAgentOrReviewer(request({ authorization: `Bearer ${REVIEWER_TOKEN}` }));
    expect(auth.ok && auth.agent).toBe(null);
    expect(auth.ok && auth.reviewer?.login).toBeTruthy();
  });

  it.each([
    ["a wrong agent token", { authorization: `Bearer ar_agent_${"x".repeat(30)}` }],
    ["a wrong reviewer token", { authorization: `Bearer ar_rev_${"x".repeat(30)}` }],
    ["no credential", {}],
  ])("%s is 401 unauthorized", async (_label, headers) => {
    const auth = await requireAgentOrReviewer(request(headers));
    expect(auth.ok).toBe(false);
    if (!auth.ok) expect(auth.response.status).toBe(401);
  });
});

describe("requireReviewer with the session cookie", () => {
  it.each(["null", "not a url", "http://[::1", "http://evil.example"])("an Origin of %j on a state-changing request is 403 forbidden, never a crash", async (origin) => {
    const session = await signIn("admin", PASSWORD);
    if (!session || session === "throttled") throw new Error("sign-in failed");
    const req = request({ cookie: `${SESSION_COOKIE}=${session.session}`, "x-csrf-token": session.csrfToken, origin, host: "127.0.0.1:3000" }, "POST");
    const auth = await requireReviewer(req, { mutation: true });
    expect(auth.ok).toBe(false);
    if (!auth.ok) expect(auth.response.status).toBe(403);
  });

  it("the same request from the dashboard's own origin passes", async () => {
    const session = await signIn("admin", PASSWORD);
    if (!session || session === "throttled") throw new Error("sign-in failed");
    const req = request({ cookie: `${SESSION_COOKIE}=${session.session}`, "x-csrf-token": session.csrfToken, origin: "http://127.0.0.1:3000", host: "127.0.0.1:3000" }, "POST");
    expect((await requireReviewer(req, { mutation: true })).ok).toBe(true);
  });
});
