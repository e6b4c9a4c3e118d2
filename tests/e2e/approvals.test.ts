import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { launchChromium, logPageErrors, reviewerContext, screenshot, signIn, sqliteDataDir, waitFor } from "@/tests/e2e/browser";

/**
 * The approvals inbox in a real browser against `next start`: sign-in
 * guards, an agent's request that waits while the reviewer sees the diff live and approves it,
 * rejection with a reason, edit-then-approve writing the edited bytes, a command shown in full
 * with its parts and hidden characters revealed, the "changed since" warning, the tab title count,
 * the browser notification and the webhook.
 */

const sha256 = (b: string | Buffer) => crypto.createHash("sha256").update(b).digest("hex");

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { dataDir, databaseUrl } = sqliteDataDir();
  server = await startTestServer({ dataDir, databaseUrl });
  browser = await launchChromium();
  context = await reviewerContext(browser, server);
  page = await context.newPage();
  logPageErrors(page);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Queues a call without waiting; returns its call id. */
async function queue(tool: string, args: Record<string, unknown>): Promise<string> {
  const res = await server.call(tool, args, { prefer: "wait=0" });
  expect(res.body.error?.name, JSON.stringify(res.body)).toBe("approval_pending");
  return res.body.call_id as string;
}

/** The agent's view of a call after it ended. */
async function agentResult(callId: string) {
  const res = await fetch(`${server.url}/api/calls/${callId}?wait=10`, { headers: { authorization: `Bearer ${server.agentToken}` } });
  return { status: res.status, body: await res.json() };
}

const detail = () => page.locator('main [data-testid="approval-detail"]');

describe("sign-in", () => {
  it("sends a visitor to the login page with the page to come back to, and refuses the live feed and the export", async () => {
    const anonymous = await browser.newContext();
    const p = await anonymous.newPage();
    for (const target of ["/", "/approvals?call=call_x", "/sessions", "/backups", "/policy", "/tokens", "/audit", "/settings", "/calls/call_x"]) {
      await p.goto(`${server.url}${target}`);
      const url = new URL(p.url());
      expect(url.pathname, target).toBe("/login");
      expect(url.searchParams.get("next"), target).toBe(target);
    }
    for (const api of ["/api/events", "/api/audit/export", "/backups/bak_x/raw"]) {
      const res = await fetch(`${server.url}${api}`);
      expect(res.status, api).toBe(401);
    }
    await p.fill('input[name="password"]', "wrong password");
    await p.click('button[type="submit"]');
    await p.getByText("Wrong login or password.").waitFor();
    await p.fill('input[name="password"]', server.reviewerPassword);
    await Promise.all([p.waitForURL((u) => u.pathname === "/calls/call_x"), p.click('button[type="submit"]')]);
    await anonymous.close();
  });

  it("never follows a next= link off the site", async () => {
    const anonymous = await browser.newContext();
    const p = await anonymous.newPage();
    await p.goto(`${server.url}/login?next=${encodeURIComponent("//evil.example/")}`);
    await p.fill('input[name="password"]', server.reviewerPassword);
    await Promise.all([p.waitForURL((u) => u.origin === server.url && !u.pathname.startsWith("/login")), p.click('button[type="submit"]')]);
    expect(new URL(p.url()).pathname).toBe("/");
    await anonymous.close();
  });
});

describe("approvals inbox", () => {
  it("shows a waiting write live with its diff, approves it with the a key, and the agent's request returns", async () => {
    const before = [
      'import { defineConfig } from "./config";',
      "",
      "/** Limits of the gateway. */",
      "export default defineConfig({",
      "  readMaxChars: 12_000,",
      '  approvalExpiry: "24h",',
      "  hosts: [\"127.0.0.1\"],",
      "});",
      "",
    ].join("\n");
    const after = before.replace("  readMaxChars: 12_000,", "  readMaxChars: 24_000, // doubled\n  streaming: true,");
    fs.mkdirSync(path.join(server.workspace, "src"), { recursive: true });
    fs.writeFileSync(path.join(server.workspace, "src/limits.ts"), before);
    await signIn(page, server, "/approvals");
    await expect(page.locator('main [data-testid="empty-state"]').textContent()).resolves.toContain("Nothing waits for you");
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));

    const agentRequest = server.call("write_file", { path: "src/limits.ts", content: after }, { prefer: "wait=60" });
    await detail().waitFor({ timeout: 15_000 });
    // It arrived without a reload (same document), the title counts it, and a notification fired.
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    await waitFor(async () => (await page.title()).startsWith("(1) "), 5000, "the title count");
    const notifications = await page.evaluate(() => (window as unknown as { __notifications: { title: string }[] }).__notifications);
    expect(notifications.map((n) => n.title)).toContain("write_file waits for approval");

    // Unified (line by line) by default; side by side on request at this width.
    await page.locator(".d2h-file-diff").first().waitFor();
    expect(await page.locator(".d2h-ins").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("streaming: true,")]));
    expect(await page.locator(".d2h-code-line-ctn [class*='hljs-']").count()).toBeGreaterThan(0);
    expect(await detail().textContent()).toContain(`sha256 ${sha256(before)}`);
    await screenshot(page, "approvals-inbox-diff.png");

    await page.click('button:has-text("Side by side")');
    await page.locator(".d2h-file-side-diff").first().waitFor();
    await page.click('button:has-text("Unified")');
    await page.locator(".d2h-file-diff").first().waitFor();

    // A decision counts once the call has been on screen long enough (armed).
    await page.locator('main [data-testid="approval-detail"][data-armed="true"]').waitFor();
    await page.keyboard.press("a");
    const agent = await agentRequest;
    expect(agent.status).toBe(200);
    expect(agent.body.ok).toBe(true);
    expect(fs.readFileSync(path.join(server.workspace, "src/limits.ts"), "utf8")).toBe(after);
    await expect(page.locator('main [data-testid="decision-outcome"]').textContent()).resolves.toContain("Approved");
    await page.locator('main [data-testid="empty-state"]').waitFor();
    await waitFor(async () => !(await page.title()).startsWith("("), 5000, "the title count to clear");
  });

  it("warns when the file changed since the diff, and a rejection with a reason reaches the agent", async () => {
    fs.writeFileSync(path.join(server.workspace, "notes.txt"), "one\n");
    const callId = await queue("write_file", { path: "notes.txt", content: "one\ntwo\n" });
    fs.writeFileSync(path.join(server.workspace, "notes.txt"), "one, changed by someone else\n");
    await page.goto(`${server.url}/approvals?call=${callId}`);
    await page.locator('main [data-testid="changed-since"]').waitFor();
    await page.locator('main [data-testid="approval-detail"][data-armed="true"]').waitFor();
    expect(await page.locator('main [data-testid="changed-since"]').textContent()).toContain(sha256("one, changed by someone else\n"));

    await page.keyboard.press("r");
    await page.waitForFunction(() => document.activeElement?.getAttribute("name") === "reason");
    await page.keyboard.type("stale: read the file again");
    await page.keyboard.press("Enter");
    await expect(page.locator('main [data-testid="decision-outcome"]').textContent()).resolves.toContain("Rejected");
    const agent = await agentResult(callId);
    expect(agent.status).toBe(403);
    expect(agent.body.error.name).toBe("approval_rejected");
    expect(agent.body.error.detail.reason).toBe("stale: read the file again");
    expect(fs.readFileSync(path.join(server.workspace, "notes.txt"), "utf8")).toBe("one, changed by someone else\n");
  });

  it("moves through the queue with j and k, oldest first", async () => {
    const first = await queue("write_file", { path: "queue-1.txt", content: "1\n" });
    const second = await queue("write_file", { path: "queue-2.txt", content: "2\n" });
    await page.goto(`${server.url}/approvals`);
    await detail().waitFor();
    const selected = () => detail().getAttribute("data-call-id");
    expect(await selected()).toBe(first);
    await page.keyboard.press("j");
    await waitFor(async () => (await selected()) === second, 5000, "j to select the next call");
    expect(new URL(page.url()).searchParams.get("call")).toBe(second);
    await page.keyboard.press("k");
    await waitFor(async () => (await selected()) === first, 5000, "k to select the previous call");
    for (const id of [first, second]) await server.reviewer("POST", `/api/approvals/${id}/reject`, { reason: "cleanup" });
  });

  it("shows a command in full with its cwd, every parsed part with its decision and rule, and hidden characters made visible", async () => {
    fs.mkdirSync(path.join(server.workspace, "build"), { recursive: true });
    const command = "ls -la && rm -rf build/cache # \u202Eexe.txt";
    const callId = await queue("run_command", { command, cwd: "build" });
    await page.goto(`${server.url}/approvals?call=${callId}`);
    await detail().waitFor();
    const text = (await detail().textContent()) ?? "";
    expect(text).toContain("rm -rf build/cache");
    expect(text).toContain("cwd: build");
    expect(await detail().locator('[data-hidden-char="U+202E RLO"]').count()).toBeGreaterThan(0);
    const parts = detail().locator('[data-testid="command-parts"] tbody tr');
    expect(await parts.count()).toBeGreaterThanOrEqual(2);
    expect(await parts.nth(0).textContent()).toContain("ls -la");
    expect(await parts.nth(0).textContent()).toContain("allow");
    expect(await parts.nth(1).textContent()).toContain("rm -rf build/cache");
    await page.click('[data-testid="reject"]');
    await page.fill('input[name="reason"]', "no deletions today");
    await page.click('form button:has-text("Reject")');
    await expect(page.locator('main [data-testid="decision-outcome"]').textContent()).resolves.toContain("Rejected");
  });

  it("edit-then-approve writes the edited bytes, and the diff follows the typing", async () => {
    const agentRequest = server.call("write_file", { path: "draft.txt", content: "agent version\n" }, { prefer: "wait=60" });
    await page.goto(`${server.url}/approvals`);
    await detail().waitFor();
    await page.locator('main [data-testid="approval-detail"][data-armed="true"]').waitFor();
    await page.keyboard.press("e");
    const editor = page.locator('main [data-testid="content-editor"]');
    await editor.waitFor();
    await editor.fill("reviewer version\nsecond line with a tab\there\nan override \u202E hides in this line\n");
    await waitFor(async () => ((await page.locator('main [data-testid="edit-diff"]').textContent()) ?? "").includes("second line with a tab"), 10_000, "the edited diff");
    await waitFor(async () => (await page.locator('main [data-testid="edit-preview-state"]').textContent()) === "diff up to date", 10_000, "the preview");
    expect(await page.locator('main [data-testid="edit-diff"] .d2h-code-line-ctn mark[data-hidden-char="U+202E RLO"]').count()).toBeGreaterThan(0);
    await page.click('[data-testid="approve-edited"]');
    const agent = await agentRequest;
    expect(agent.body.ok).toBe(true);
    expect(fs.readFileSync(path.join(server.workspace, "draft.txt"))).toEqual(Buffer.from("reviewer version\nsecond line with a tab\there\nan override \u202E hides in this line\n"));
    const call = await server.reviewer("GET", `/api/calls/${agent.body.call_id}`);
    expect(call.body.call.reviewer).toBe("admin");
  });

  it("posts to the webhook with a link to the waiting call", async () => {
    const received: unknown[] = [];
    const hook = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push(JSON.parse(body));
        res.end("ok");
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    try {
      const hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/agent-reach`;
      await page.goto(`${server.url}/settings`);
      await page.fill('input[name="webhookUrl"]', hookUrl);
      await page.click('[data-testid="webhook-form"] button[type="submit"]');
      await page.locator('main [data-testid="webhook-form"] [role="status"]').waitFor();
      const callId = await queue("write_file", { path: "hooked.txt", content: "x\n" });
      await waitFor(() => received.length > 0, 10_000, "the webhook");
      expect(received[0]).toMatchObject({ event: "approval.pending", call_id: callId, tool: "write_file", url: `${server.url}/approvals?call=${callId}` });
      await server.reviewer("POST", `/api/approvals/${callId}/reject`, { reason: "cleanup" });
    } finally {
      hook.close();
    }
  });
});
