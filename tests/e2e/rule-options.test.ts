import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "@/tests/helpers/server";
import { sql } from "@/tests/helpers/sql";
import { launchChromium, logPageErrors, reviewerContext, signIn, sqliteDataDir } from "@/tests/e2e/browser";

/**
 * Rule options and revealing masked values in a real browser: a reviewer sets a rule's
 * limits and masking as JSON in the policy page (invalid JSON is refused with the problem named),
 * and reveals the masked secret of an agent's read_file on the call page once a rule has
 * `{"redact": false}` for that path; the reveal is logged and the value is never stored.
 */

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const { dataDir, databaseUrl } = sqliteDataDir();
  server = await startTestServer({ dataDir, databaseUrl });
  browser = await launchChromium();
  const context = await reviewerContext(browser, server);
  page = await context.newPage();
  logPageErrors(page);
  page.on("dialog", (dialog) => void dialog.accept());
  await signIn(page, server, "/policy");
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Adds a rule through the policy page's "Add a rule" form; returns the form's message. */
async function addRule(rule: { tool: string; pathGlob?: string; command?: string; decision: string; options: string }): Promise<string> {
  await page.goto(`${server.url}/policy`);
  const add = page.locator('main [data-testid="add-rule"]');
  await add.locator('select[name="tool"]').selectOption(rule.tool);
  if (rule.pathGlob) await add.locator('input[name="pathGlob"]').fill(rule.pathGlob);
  if (rule.command) await add.locator('input[name="command"]').fill(rule.command);
  await add.locator('select[name="decision"]').selectOption(rule.decision);
  await add.locator('textarea[name="options"]').fill(rule.options);
  await add.locator('button[type="submit"]').click();
  const message = add.locator('[role="alert"], [role="status"]');
  await message.waitFor();
  return (await message.textContent()) ?? "";
}

async function storedOptions(ruleId: string): Promise<string | null> {
  const [row] = await sql<{ optionsJson: string | null }>(server.databaseUrl, 'SELECT "optionsJson" FROM "PolicyRule" WHERE id = $1', [ruleId]);
  return row.optionsJson;
}

describe("rule options", () => {
  it("sets a rule's limits and masking as JSON, shows them in the list, and refuses invalid options", async () => {
    expect(await addRule({ tool: "run_command", command: "make bench *", decision: "ask", options: '{"limits": {"memory_mb": 8}}' })).toBe(
      "options.limits.memory_mb: memory_mb must be 0 (no limit) or at least 16",
    );
    expect(await page.locator('main [data-testid="rule"]', { hasText: "make bench *" }).count()).toBe(0);

    const example = '{"limits":{"memory_mb":4096,"processes":256,"cpu_seconds":0,"timeout_ms":300000},"redact":false}';
    expect(await addRule({ tool: "run_command", command: "make bench *", decision: "ask", options: example })).toBe("Rule added at the end.");
    const rule = page.locator('main [data-testid="rule"]', { hasText: "make bench *" });
    const chips = rule.locator('[data-testid="rule-options"] li');
    await chips.first().waitFor();
    expect(await chips.allTextContents()).toEqual(["memory 4,096 MiB", "processes 256", "CPU time no limit", "timeout ≤ 300,000 ms", "secrets unmasked"]);
    const ruleId = (await rule.getAttribute("data-rule-id"))!;
    expect(JSON.parse((await storedOptions(ruleId))!)).toEqual(JSON.parse(example));

    await rule.locator('button:has-text("Edit")').click();
    const options = rule.locator('textarea[name="options"]');
    expect(JSON.parse(await options.inputValue())).toEqual(JSON.parse(example));
    await options.fill('{"limits": {"processes": 64}');
    await rule.locator('button:has-text("Save")').click();
    expect(await rule.locator('[role="alert"]').textContent()).toMatch(/^options: not valid JSON \(.+\)$/);

    await options.fill('{"limits": {"processes": 64}}');
    await rule.locator('button:has-text("Save")').click();
    await rule.locator('[role="status"]', { hasText: "Saved." }).waitFor();
    await rule.locator('[data-testid="rule-options"] li', { hasText: "processes 64" }).waitFor();
    expect(await rule.locator('[data-testid="rule-options"] li').allTextContents()).toEqual(["processes 64"]);
    expect(await storedOptions(ruleId)).toBe('{"limits":{"processes":64}}');

    await options.fill("");
    await rule.locator('button:has-text("Save")').click();
    await rule.locator('[data-testid="rule-options"]').waitFor({ state: "detached" });
    expect(await storedOptions(ruleId)).toBeNull();
  });
});

describe("revealing masked values", () => {
  it("reveals the secret of a read_file call once a rule unmasks its path, logs it, and stores nothing", async () => {
    fs.writeFileSync(path.join(server.workspace, "service.conf"), "DB_HOST=db.internal\nDB_PASSWORD=hunter2hunter2\nGREETING=hel\u200Blo\n");
    const read = await server.call("read_file", { path: "service.conf" });
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain("hunter2hunter2");
    const callId = read.body.call_id as string;

    await page.goto(`${server.url}/calls/${callId}`);
    const stored = page.locator('main [data-testid="stored-output"]');
    expect(await stored.textContent()).toContain("[REDACTED:");
    const reveal = page.locator('main [data-testid="reveal-output"]');
    await reveal.click();
    expect(await page.locator('main [data-testid="reveal-error"]').textContent()).toContain("No policy rule relaxes masking for service.conf");
    expect(await stored.textContent()).not.toContain("hunter2hunter2");

    expect(await addRule({ tool: "read_file", pathGlob: "service.conf", decision: "allow", options: '{"redact": false}' })).toBe("Rule added at the end.");
    await page.goto(`${server.url}/calls/${callId}`);
    await page.locator('main [data-testid="reveal-output"]').click();
    const revealed = page.locator('main [data-testid="revealed-output"]');
    await revealed.waitFor();
    expect(await revealed.textContent()).toContain("DB_PASSWORD=hunter2hunter2");
    expect(await revealed.locator('mark[data-hidden-char="U+200B ZWSP"]').count()).toBe(1);
    expect(await stored.count()).toBe(0);
    expect(page.url()).not.toContain("hunter2");
    // The page refreshed its event log with the reveal, and the revealed output stayed.
    await page.locator('main [data-testid="call-events"] li', { hasText: "secret.revealed" }).waitFor();
    expect(await revealed.textContent()).toContain("hunter2hunter2");

    const events = await sql<{ actor: string; dataJson: string }>(server.databaseUrl, 'SELECT actor, "dataJson" FROM "Event" WHERE type = $1 AND "callId" = $2', ["secret.revealed", callId]);
    expect(events).toHaveLength(1);
    expect(events[0].actor).toMatch(/^reviewer:/);
    expect(events[0].dataJson).not.toContain("hunter2");
    const [call] = await sql<{ resultJson: string }>(server.databaseUrl, 'SELECT "resultJson" FROM "ToolCall" WHERE id = $1', [callId]);
    expect(call.resultJson).toContain("[REDACTED:");
    expect(call.resultJson).not.toContain("hunter2hunter2");

    await page.locator('main button:has-text("Hide")').click();
    await stored.waitFor();
    expect(await page.locator("main").textContent()).not.toContain("hunter2hunter2");
  });
});
