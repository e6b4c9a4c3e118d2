import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { launchChromium, logPageErrors, reviewerContext, screenshot, settled, signIn, sqliteDataDir } from "@/tests/e2e/browser";

/**
 * What a command changed, in a real browser: the call page shows a command's change set with its
 * diff and reverts it; the inbox shows a held change set (the effect, not the command line) and
 * applies it on approval; a session's rewind page shows the combined diff and rewinds.
 */

let server: TestServer;
let browser: Browser;
let page: Page;
const SESSION = "e2e-effects";
/** A drawn diff in either layout (the dashboard opens in the unified layout unless the reviewer chose side by side). */
const DIFF_DRAWN = ".d2h-file-side-diff, .d2h-file-diff";

async function agentCall(tool: string, args: unknown): Promise<any> {
  const res = await server.call(tool, args, { prefer: "wait=0", "x-agent-session": SESSION });
  if (res.status !== 202) {
    expect(res.body.ok, JSON.stringify(res.body)).toBe(true);
    return res.body;
  }
  const decided = await server.reviewer("POST", `/api/approvals/${res.body.call_id}/approve`, {});
  expect(decided.body.result?.ok, JSON.stringify(decided.body)).toBe(true);
  return decided.body.result;
}

beforeAll(async () => {
  const { dataDir, databaseUrl } = sqliteDataDir();
  server = await startTestServer({ dataDir, databaseUrl });
  fs.mkdirSync(path.join(server.workspace, "src"));
  for (const name of ["api", "db", "jobs"]) {
    fs.writeFileSync(path.join(server.workspace, "src", `${name}.py`), `import os\n\nTIMEOUT = 30\nRETRIES = 3\n\n\ndef ${name}_handler(event):\n    return {"ok": True, "source": "${name}"}\n`);
  }
  for (let i = 0; i < 80; i++) fs.writeFileSync(path.join(server.workspace, "src", `fixture_${i}.json`), `{"case": ${i}}\n`);
  browser = await launchChromium();
  const context = await reviewerContext(browser, server);
  page = await context.newPage();
  logPageErrors(page);
  page.on("dialog", (dialog) => void dialog.accept());
  await signIn(page, server, "/");
}, 1_200_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("file changes in the dashboard", () => {
  it("a command's diff on the call page, then its revert", async () => {
    const env = await agentCall("run_command", { command: "sed -i 's/TIMEOUT = 30/TIMEOUT = 120/; s/RETRIES = 3/RETRIES = 5/' src/*.py && python3 -c \"open('src/VERSION','w').write('2.0.0\\n')\"" });
    expect(env.data.changes).toMatchObject({ status: "applied", modified: 3, created: 1 });
    await page.goto(`${server.url}/calls/${env.call_id}`);
    const card = page.locator('[data-testid="file-changes"]');
    await card.locator(DIFF_DRAWN).first().waitFor();
    expect(await card.locator('[data-testid="changed-files"]').textContent()).toContain("src/VERSION");
    await screenshot(page, "command-diff-call-page.png", true);
    await page.click('[data-testid="revert-call"] button');
    await expectDone(page, '[data-testid="revert-call"]');
    expect(fs.readFileSync(path.join(server.workspace, "src/api.py"), "utf8")).toContain("TIMEOUT = 30");
    expect(fs.existsSync(path.join(server.workspace, "src/VERSION"))).toBe(false);
  }, 300_000);

  it("a held change set in the approvals inbox, approved as an effect", async () => {
    const env = await agentCall("run_command", { command: "rm -f src/fixture_*.json && echo cleaned" });
    expect(env.data.changes).toMatchObject({ status: "held", deleted: 80 });
    await page.goto(`${server.url}/approvals?call=${env.call_id}`);
    const detail = page.locator(`[data-testid="approval-detail"][data-call-id="${env.call_id}"]`);
    await detail.locator(DIFF_DRAWN).first().waitFor();
    expect(await detail.locator('[data-testid="preview-warnings"]').textContent()).toContain("deletes 80 files");
    // The picture is of the effect: what the command would delete, above its diff.
    await detail.locator('[data-testid="preview-warnings"]').evaluate((el) => el.scrollIntoView({ block: "start" }));
    await screenshot(page, "held-effects-approval.png");
    const decided = await server.reviewer("POST", `/api/approvals/${env.call_id}/approve`, {});
    expect(decided.body.result.data.changes.status).toBe("applied");
    expect(fs.readdirSync(path.join(server.workspace, "src")).filter((n) => n.endsWith(".json"))).toEqual([]);
  }, 300_000);

  it("a session rewind: the combined diff, then the rewind", async () => {
    const first = await agentCall("write_file", { path: "src/api.py", content: "# rewritten by the agent\n" });
    await agentCall("run_command", { command: "python3 -c \"open('src/new_module.py','w').write('x = 1\\n')\" && sed -i 's/db_handler/database_handler/' src/db.py" });
    const sessions = await server.reviewer("GET", `/api/calls/${first.call_id}`);
    const sessionId = sessions.body.call.session_id as string;
    await page.goto(`${server.url}/sessions/${sessionId}`);
    // A streamed Suspense boundary briefly holds a hidden copy: wait for the one shown.
    await page.locator('[data-testid="session-changes"]:visible').waitFor();
    await page.goto(`${server.url}/sessions/${sessionId}/rewind?before=${first.call_id}`);
    await page.locator('[data-testid="rewind-preview"]').locator(DIFF_DRAWN).first().waitFor();
    await screenshot(page, "session-rewind.png", true);
    await page.click('[data-testid="rewind-form"] button');
    await expectDone(page, '[data-testid="rewind-form"]');
    // The page re-rendered with the result: a clean rewind shows no conflicts box, only its answer
    // and that nothing is left to undo.
    await settled(page);
    expect(await page.locator('[data-testid="rewind-conflicts"]').count()).toBe(0);
    expect(await page.locator('[data-testid="rewind-form"] [role="status"]').textContent()).toMatch(/^Rewound 2 call\(s\)/);
    expect(await page.locator('[data-testid="rewind-preview"]').textContent()).toContain("No call after this one is left to undo");
    await page.reload();
    expect(await page.locator('[data-testid="rewind-conflicts"]').count()).toBe(0);
    expect(fs.readFileSync(path.join(server.workspace, "src/api.py"), "utf8")).toContain("TIMEOUT = 30");
    expect(fs.existsSync(path.join(server.workspace, "src/new_module.py"))).toBe(false);
  }, 300_000);
});

describe("a session by its name", () => {
  it("/sessions/<name> redirects to the session's id page; its review page too; an unknown name is a 404 page", async () => {
    const res = await server.call("read_file", { path: "src/db.py" }, { "x-agent-session": SESSION });
    const status = await server.reviewer("GET", `/api/calls/${res.body.call_id}`);
    const sessionId = status.body.call.session_id as string;
    const named = await page.goto(`${server.url}/sessions/${SESSION}?tool=read_file`);
    expect(named!.status()).toBe(200);
    expect(page.url()).toBe(`${server.url}/sessions/${sessionId}?tool=read_file`);
    expect(await page.locator('[data-testid="session-title"]').textContent()).toContain(SESSION);
    await page.goto(`${server.url}/sessions/${SESSION}/review`);
    expect(page.url()).toBe(`${server.url}/sessions/${sessionId}/review`);
    const missing = await page.goto(`${server.url}/sessions/no-such-session-name`);
    expect(missing!.status()).toBe(404);
    await page.getByText("Nothing has this id").waitFor();
  }, 300_000);
});

/**
 * Waits for an action form's answer and expects success: the form shows `role="status"` when
 * the action succeeded and `role="alert"` with the reason when it did not (the failure names it).
 */
async function expectDone(p: Page, form: string): Promise<void> {
  const answer = p.locator(`${form} [role="status"], ${form} [role="alert"]`).first();
  await answer.waitFor().catch(async (e: Error) => {
    throw new Error(`${e.message}\non ${p.url()}:\n${(await p.locator("main").textContent())?.slice(0, 2000)}`);
  });
  expect(await answer.getAttribute("role"), (await answer.textContent()) ?? "").toBe("status");
}
