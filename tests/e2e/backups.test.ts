import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { launchChromium, logPageErrors, reviewerContext, screenshot, signIn, sqliteDataDir } from "@/tests/e2e/browser";

/**
 * Backups in a real browser: find a file's versions, diff one against
 * the current file, view its content, restore it and see the file back; the restore is an audited
 * call by the reviewer that backed up the replaced bytes, so it can be undone the same way.
 */

let server: TestServer;
let browser: Browser;
let page: Page;
const FILE = "src/settings.py";
const V1 = ['"""Service settings."""', "", "DEBUG = False", "TIMEOUT_S = 30", 'ALLOWED_HOSTS = ["api.example.com"]', ""].join("\n");
const V2 = ['"""Service settings."""', "", "DEBUG = True  # temporary", "TIMEOUT_S = 300", 'ALLOWED_HOSTS = ["*"]', "RETRIES = 5", ""].join("\n");

/** An agent write approved through the reviewer API (as a second reviewer tool would). */
async function approvedWrite(file: string, content: string): Promise<void> {
  const res = await server.call("write_file", { path: file, content }, { prefer: "wait=0" });
  expect(res.body.error?.name).toBe("approval_pending");
  const decision = await server.reviewer("POST", `/api/approvals/${res.body.call_id}/approve`, {});
  expect(decision.body.result?.ok, JSON.stringify(decision.body)).toBe(true);
}

beforeAll(async () => {
  const { dataDir, databaseUrl } = sqliteDataDir();
  server = await startTestServer({ dataDir, databaseUrl });
  fs.mkdirSync(path.join(server.workspace, "src"));
  fs.writeFileSync(path.join(server.workspace, FILE), V1);
  await approvedWrite(FILE, V2);
  browser = await launchChromium();
  const context = await reviewerContext(browser, server);
  page = await context.newPage();
  logPageErrors(page);
  page.on("dialog", (dialog) => void dialog.accept());
  await signIn(page, server, "/backups");
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("backups", () => {
  it("finds the file, diffs a version against the current file, restores it, and the restore can be undone", async () => {
    await page.fill('input[name="q"]', "settings");
    await page.click('button:has-text("Search")');
    await page.locator('main [data-testid="backup-files"] a').first().click();
    const versions = page.locator('main [data-testid="backup-versions"] tbody tr');
    await versions.first().waitFor();
    expect(await versions.count()).toBe(1);
    expect(await versions.first().textContent()).toContain("write_file");

    await versions.first().locator("a").first().click();
    const diff = page.locator('main [data-testid="backup-diff"]');
    await diff.locator(".d2h-file-diff").first().waitFor(); // unified by default
    expect(await diff.locator(".d2h-del").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('ALLOWED_HOSTS = ["*"]')]));
    expect(await diff.locator(".d2h-ins").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('ALLOWED_HOSTS = ["api.example.com"]')]));
    await screenshot(page, "backup-diff.png");

    await page.click('main a:text-is("Content")');
    await page.waitForURL((u) => u.searchParams.get("view") === "content");
    expect(await page.locator("main pre").first().textContent()).toBe(V1);
    const backupUrl = page.url().replace(/\?.*$/, "");

    await page.click('[data-testid="restore"]');
    const result = page.locator('main [data-testid="restore-result"]');
    await result.waitFor();
    expect(await result.textContent()).toContain("Restored");
    expect(fs.readFileSync(path.join(server.workspace, FILE), "utf8")).toBe(V1);

    // The restore was an audited call made by the reviewer, and it kept V2 as a new backup.
    const callLink = result.locator('a:has-text("The restore call")');
    const callId = (await callLink.getAttribute("href"))!.split("/").pop()!;
    const call = await server.reviewer("GET", `/api/calls/${callId}`);
    expect(call.body.call).toMatchObject({ tool: "restore_backup", status: "succeeded", reviewer: "admin" });
    const undoLink = result.locator('a[href^="/backups/bak_"]');
    const undoId = (await undoLink.getAttribute("href"))!.split("/").pop()!;
    await undoLink.click();
    await page.waitForURL((u) => u.pathname === `/backups/${undoId}`);
    await page.locator(`main [data-testid="restore"]`).waitFor();
    await page.locator("main dd code", { hasText: undoId }).waitFor();
    await page.click('[data-testid="restore"]');
    const undone = page.locator('main [data-testid="restore-result"]');
    await undone.waitFor();
    expect(await undone.textContent()).toContain("Restored");
    expect(fs.readFileSync(path.join(server.workspace, FILE), "utf8")).toBe(V2);

    const raw = await page.request.get(`${backupUrl}/raw`);
    expect(raw.status()).toBe(200);
    expect(await raw.text()).toBe(V1);
  });

  it("shows the call that made a backup, with its diff and approval history", async () => {
    await page.goto(`${server.url}/backups?path=${encodeURIComponent(FILE)}`);
    const rows = page.locator('main [data-testid="backup-versions"] tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(3);
    await rows.last().locator('a[href^="/calls/"]').click();
    await page.locator('main [data-testid="approval-history"]').waitFor();
    expect(await page.locator('main [data-testid="approval-history"]').textContent()).toContain("approved");
    expect(await page.locator("main .d2h-ins").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("RETRIES = 5")]));
  });
});
