import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";
import { launchChromium, logPageErrors, reviewerContext, screenshot, signIn, sqliteDataDir } from "@/tests/e2e/browser";

/**
 * The review stream in a real browser: changes an agent made without anyone being asked (an
 * operator's rules allow writes and a script) are counted per session (sessions list, session
 * page, navigation, overview), shown with their diffs, marked reviewed one by one or all at once
 * (stored and audited), and reverted from the review page, a conflict (the file changed since)
 * shown and nothing overwritten.
 */

let server: TestServer;
let browser: Browser;
let page: Page;
const SESSION = "e2e-review";
let sessionId: string;
const ids: Record<string, string> = {};

async function agentCall(tool: string, args: unknown): Promise<{ status: number; body: any }> {
  return server.call(tool, args, { prefer: "wait=0", "x-agent-session": SESSION });
}

beforeAll(async () => {
  const { dataDir, databaseUrl } = sqliteDataDir();
  server = await startTestServer({ dataDir, databaseUrl });
  // Writes and `python3 gen.py` apply without asking here: the default "writes ask" rule is off and
  // operator rules allow them (whatever allowed a change, the review stream lists it).
  const now = new Date().toISOString().replace("Z", "+00:00");
  await sql(databaseUrl, `UPDATE "PolicyRule" SET enabled = 0 WHERE id IN ('default:write-file', 'default:edit-file')`);
  for (const [id, tool, command] of [
    ["op:allow-write", "write_file", null],
    ["op:allow-edit", "edit_file", null],
    ["op:allow-gen", "run_command", "python3 gen.py *"],
  ]) {
    await sql(databaseUrl, 'INSERT INTO "PolicyRule" (id, priority, tool, command, decision, note, enabled, source, "createdAt") VALUES ($1, 150, $2, $3, $4, $5, 1, $6, $7)', [id, tool, command, "allow", "test: applies without asking", "operator", now]);
  }
  fs.mkdirSync(path.join(server.workspace, "src"));
  fs.writeFileSync(path.join(server.workspace, "src/app.py"), "def main():\n    return 1\n");
  fs.writeFileSync(path.join(server.workspace, "README.md"), "# Demo\n\nOld intro.\n");
  fs.writeFileSync(path.join(server.workspace, "gen.py"), "import sys\nopen(sys.argv[1], 'w').write('VERSION = 2\\n')\n");
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

async function unseenInDb(): Promise<number> {
  // The session's changing calls (its read_file changed nothing and is never listed).
  const rows = await sql<{ n: number }>(server.databaseUrl, 'SELECT COUNT(*) AS n FROM "ToolCall" WHERE "sessionId" = $1 AND decision = $2 AND status = $3 AND tool <> $4 AND "reviewedAt" IS NULL', [sessionId, "allow", "succeeded", "read_file"]);
  return Number(rows[0].n);
}

describe("review stream", () => {
  it("counts the changes that applied without asking", async () => {
    const edit = await agentCall("edit_file", { path: "src/app.py", old_string: "return 1", new_string: "return 2" });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    ids.edit = edit.body.call_id;
    const created = await agentCall("write_file", { path: "src/util.py", content: "def helper():\n    return 'new helper'\n" });
    expect(created.status).toBe(200);
    ids.created = created.body.call_id;
    const readme = await agentCall("write_file", { path: "README.md", content: "# Demo\n\nNew intro, written by the agent.\n" });
    expect(readme.status).toBe(200);
    ids.readme = readme.body.call_id;
    const script = await agentCall("run_command", { command: "python3 gen.py src/version.py" });
    expect(script.status, JSON.stringify(script.body)).toBe(200);
    expect(script.body.data.changes).toMatchObject({ status: "applied", created: 1 });
    ids.script = script.body.call_id;
    // A read changes nothing and is not listed.
    expect((await agentCall("read_file", { path: "README.md" })).status).toBe(200);
    [{ sessionId }] = await sql<{ sessionId: string }>(server.databaseUrl, 'SELECT "sessionId" FROM "ToolCall" WHERE id = $1', [ids.edit]);

    await page.goto(`${server.url}/sessions`);
    const row = page.locator('[data-testid="sessions"] tr', { hasText: SESSION });
    expect((await row.locator('[data-testid="session-unseen"]').textContent())?.trim()).toBe("4");
    expect((await page.locator('[data-testid="unseen-count-nav"]').textContent())?.trim()).toBe("4");
    await page.goto(`${server.url}/`);
    await page.locator("a", { hasText: "Unseen changes" }).first().waitFor();
    expect(await page.locator("a", { hasText: "Unseen changes" }).first().textContent()).toContain("4");
    await page.goto(`${server.url}/sessions/${sessionId}`);
    expect(await page.locator('[data-testid="session-unseen"]').textContent()).toContain("4 applied without asking");
  }, 300_000);

  it("shows each change's diff and marks one reviewed (stored, audited)", async () => {
    await page.goto(`${server.url}/sessions/${sessionId}`);
    await page.click('[data-testid="session-unseen"] a');
    await page.waitForURL(`**/sessions/${sessionId}/review`);
    const items = page.locator('[data-testid="review-item"]');
    await items.first().waitFor();
    expect(await items.count()).toBe(4);
    const edit = page.locator(`[data-testid="review-item"][data-call-id="${ids.edit}"]`);
    await edit.locator(".d2h-file-wrapper").first().waitFor();
    const editDiff = (await edit.locator('[data-testid="review-diff"]').textContent()) ?? "";
    expect(editDiff).toContain("return 2");
    expect(editDiff).toContain("return 1");
    expect(await page.locator(`[data-testid="review-item"][data-call-id="${ids.created}"] [data-testid="review-diff"]`).textContent()).toContain("new helper");
    expect(await page.locator(`[data-testid="review-item"][data-call-id="${ids.script}"]`).textContent()).toContain("op:allow-gen");
    expect(await page.locator('[data-testid="review-unseen-count"]').textContent()).toBe("4 unseen");
    await screenshot(page, "review-stream.png", true);

    await edit.locator('[data-testid="mark-reviewed"]').click();
    await edit.locator('[role="status"]', { hasText: "Marked reviewed." }).waitFor();
    const [row] = await sql<{ reviewedAt: string | null; reviewedBy: string | null }>(server.databaseUrl, 'SELECT "reviewedAt", "reviewedBy" FROM "ToolCall" WHERE id = $1', [ids.edit]);
    expect(row.reviewedAt).not.toBeNull();
    expect(row.reviewedBy).toBeTruthy();
    const events = await sql<{ actor: string }>(server.databaseUrl, 'SELECT actor FROM "Event" WHERE type = $1 AND "callId" = $2', ["call.reviewed", ids.edit]);
    expect(events).toHaveLength(1);
    expect(events[0].actor).toMatch(/^reviewer:/);
    expect(await unseenInDb()).toBe(3);
    await page.reload();
    await page.locator('[data-testid="review-item"]').first().waitFor();
    expect(await page.locator('[data-testid="review-item"]').count()).toBe(3);
  }, 300_000);

  it("reverts a change from the review page, and shows a conflict without overwriting", async () => {
    const readme = page.locator(`[data-testid="review-item"][data-call-id="${ids.readme}"]`);
    await readme.locator('[data-testid="revert"]').click();
    await readme.locator('[data-testid="revert-result"] [role="status"]').waitFor();
    expect(await readme.locator('[data-testid="revert-result"]').textContent()).toMatch(/^Reverted: 0 created, 1 modified, 0 deleted/);
    expect(fs.readFileSync(path.join(server.workspace, "README.md"), "utf8")).toBe("# Demo\n\nOld intro.\n");

    // Someone changes the created file after the agent: its revert is a conflict, nothing changes.
    fs.writeFileSync(path.join(server.workspace, "src/util.py"), "def helper():\n    return 'edited by hand'\n");
    await page.reload();
    const created = page.locator(`[data-testid="review-item"][data-call-id="${ids.created}"]`);
    await created.locator('[data-testid="revert"]').click();
    const alert = created.locator('[data-testid="revert-result"] [role="alert"]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain("src/util.py");
    expect(fs.readFileSync(path.join(server.workspace, "src/util.py"), "utf8")).toContain("edited by hand");
  }, 300_000);

  it("marks all shown reviewed; the counts go to zero", async () => {
    await page.reload();
    await page.locator('[data-testid="review-item"]').first().waitFor();
    await page.locator('[data-testid="mark-all"] button:visible').first().click();
    await page.locator('[data-testid="mark-all"] [role="status"]:visible').first().waitFor();
    expect(await unseenInDb()).toBe(0);
    await page.goto(`${server.url}/sessions/${sessionId}/review`);
    await page.locator("text=Nothing to review").waitFor();
    await page.goto(`${server.url}/sessions`);
    const row = page.locator('[data-testid="sessions"] tr', { hasText: SESSION });
    expect((await row.locator('[data-testid="session-unseen"]').textContent())?.trim()).toBe("0");
    expect(await page.locator('[data-testid="unseen-count-nav"]').count()).toBe(0);
    // Reviewed ones stay readable with who reviewed them.
    await page.goto(`${server.url}/sessions/${sessionId}/review?show=all`);
    await page.locator('[data-testid="reviewed-by"]').first().waitFor();
    expect(await page.locator('[data-testid="review-item"]').count()).toBeGreaterThanOrEqual(3);
  }, 300_000);

  it("the approval card saves a 'don't ask again' grant; the policy page lists and revokes it", async () => {
    fs.writeFileSync(path.join(server.workspace, "other.py"), "import sys\nprint('ran', sys.argv[1:])\n");
    const asked = await agentCall("run_command", { command: "python3 other.py --check one" });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    await page.goto(`${server.url}/approvals?call=${asked.body.call_id}`);
    const detail = page.locator('main [data-testid="approval-detail"]');
    await detail.waitFor();
    await detail.locator('[data-testid="grant-toggle"]').check();
    expect(await detail.locator('[data-testid="grant-pattern"]').inputValue()).toBe("python3 other.py *");
    await detail.locator('[data-testid="grant-scope-workspace"]').check();
    await detail.locator('[data-testid="grant-expiry"]').selectOption({ label: "8 hours" });
    expect(await detail.locator('[data-testid="grant-preview"]').textContent()).toBe(
      "After approving, run_command calls matching “python3 other.py *” in any session of this workspace run without asking for 8 hours. Sensitive paths, denied commands and leaving the sandbox still ask.",
    );
    await screenshot(page, "approval-grant.png");
    await page.locator('main [data-testid="approval-detail"][data-armed="true"]').waitFor();
    await detail.locator('[data-testid="approve"]').click();
    const outcome = page.locator('main [data-testid="decision-outcome"]');
    await outcome.waitFor();
    expect(await outcome.textContent()).toMatch(/Don't ask again: “python3 other.py \*” \(this workspace, until .+, grant_/);
    const [grant] = await sql<{ id: string; expiresAt: string }>(server.databaseUrl, 'SELECT id, "expiresAt" FROM "PolicyRule" WHERE "createdFromCallId" = $1', [asked.body.call_id]);
    expect(new Date(grant.expiresAt).getTime() - Date.now()).toBeGreaterThan(7.9 * 3600_000);

    // Another session of the workspace: allowed by the grant, and listed in the review stream.
    const later = await server.call("run_command", { command: "python3 other.py two" }, { prefer: "wait=0", "x-agent-session": "e2e-review-2" });
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    await page.goto(`${server.url}/calls/${asked.body.call_id}`);
    expect(await page.locator('[data-testid="approval-grants"]').textContent()).toContain(grant.id);

    await page.goto(`${server.url}/policy`);
    // Scoped to <main>: while React streams the page, a hidden copy of a finished Suspense
    // boundary (div#S:0) can sit in <body> beside the shown one for a moment.
    const row = page.locator(`main [data-testid="grant"][data-grant-id="${grant.id}"]`);
    expect(await row.getAttribute("data-state")).toBe("active");
    expect((await row.locator('[data-testid="grant-allowed"]').textContent())?.trim()).toBe("1");
    await row.locator('[data-testid="revoke-grant"] button').click();
    // The list re-renders with the grant ended (who revoked it, and when).
    await page.locator(`main [data-testid="grant"][data-grant-id="${grant.id}"][data-state="revoked"]`).waitFor();
    expect(await row.textContent()).toMatch(/revoked by \S+ at /);
    const again = await server.call("run_command", { command: "python3 other.py three" }, { prefer: "wait=0", "x-agent-session": "e2e-review-2" });
    expect(again.status).toBe(202);
  }, 300_000);
});
