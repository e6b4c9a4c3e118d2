import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import type { TestServer } from "@/tests/helpers/server";

/**
 * Helpers of the dashboard's browser tests: Debian's Chromium driven by playwright-core (never a
 * downloaded browser), signing in through the real login form, and seeding the test server's
 * SQLite file directly for bulk data.
 */

/** Debian's Chromium (`apt-get install -y chromium`). */
export const CHROMIUM = "/usr/bin/chromium";

/** Where the tests save screenshots for the README. */
export const SCREENSHOTS = path.resolve(__dirname, "../../docs/screenshots");

/**
 * Launches headless Chromium with the flags from STACK.md (no sandbox as root, no GPU, and no
 * background networking: the machine has no internet). playwright-core gives every launch a
 * fresh temporary profile (its own --user-data-dir), removed on close.
 */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A browser context for a reviewer: notifications allowed for the server's origin and every
 * `new Notification(...)` recorded in `window.__notifications` (headless Chromium shows none).
 */
export async function reviewerContext(browser: Browser, server: TestServer, viewport = { width: 1440, height: 960 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, colorScheme: "light", timezoneId: "UTC" });
  context.setDefaultTimeout(20_000);
  await context.grantPermissions(["notifications"], { origin: server.url });
  await context.addInitScript(() => {
    const seen: { title: string; body?: string }[] = [];
    (window as unknown as { __notifications: typeof seen }).__notifications = seen;
    const Real = window.Notification;
    class Recorded extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        seen.push({ title, body: options?.body });
      }
    }
    Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
    window.Notification = Recorded as typeof Notification;
  });
  return settlingPages(context);
}

/**
 * Waits until the page's streamed Suspense boundaries are revealed: no loading skeleton and no
 * hidden server segment (`div[hidden]#S:n`) left in <body>. React reveals server-rendered
 * boundaries in batches, a few hundred milliseconds after they arrive, and until then the
 * finished content sits hidden beside the skeleton, where locators would count it twice.
 */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => !document.querySelector('div[hidden][id^="S:"]') && !document.querySelector('[data-testid="loading"]'));
}

/**
 * Makes every page of `context` wait for `settled` after `goto` and `reload`, so a test reads the
 * page a reviewer sees, not one still streaming.
 */
export function settlingPages(context: BrowserContext): BrowserContext {
  const newPage = context.newPage.bind(context);
  context.newPage = async () => {
    const page = await newPage();
    const goto = page.goto.bind(page);
    const reload = page.reload.bind(page);
    page.goto = async (...args) => {
      const response = await goto(...args);
      await settled(page);
      return response;
    };
    page.reload = async (...args) => {
      const response = await reload(...args);
      await settled(page);
      return response;
    };
    return page;
  };
  return context;
}

/** Prints the page's uncaught errors and console errors to the test output (for failures). */
export function logPageErrors(page: Page): void {
  page.on("pageerror", (err) => console.error(`[page error] ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") console.error(`[console] ${msg.text()}`);
  });
}

/** Signs in through the login form and waits for the page it leads to. */
export async function signIn(page: Page, server: TestServer, next = "/"): Promise<void> {
  await page.goto(`${server.url}/login?next=${encodeURIComponent(next)}`);
  await page.fill('input[name="password"]', server.reviewerPassword);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/login")), page.click('button[type="submit"]')]);
}

/** Saves a screenshot under docs/screenshots/. */
export async function screenshot(page: Page, name: string, fullPage = false): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, name);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** A fresh data directory and a SQLite URL inside it (so the browser tests can seed the file). */
export function sqliteDataDir(): { dataDir: string; databaseUrl: string; file: string } {
  const dataDir = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), "ar-e2e-data-"));
  const file = path.join(dataDir, "agent-reach.db");
  return { dataDir, databaseUrl: `file:${file}`, file };
}

/** Prisma's SQLite DateTime text ("2026-05-01T12:00:00.000+00:00"). */
function sqliteTime(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "+00:00");
}

const TOOLS = ["read_file", "list_directory", "search_files", "edit_file", "write_file", "run_command"] as const;

/**
 * Writes a session of `count` calls straight into the server's SQLite file, as an agent working
 * for about two hours would leave them: mostly reads, some writes and commands, a few failures,
 * rejections and denials, and (with `lastPending`) the last one still waiting. Deterministic
 * (seeded PRNG).
 * @returns the session id
 */
export function seedSession(file: string, count: number, options: { seed?: number; lastPending?: boolean } = {}): string {
  const { seed = 42, lastPending = true } = options;
  const database = new Database(file);
  database.pragma("busy_timeout = 10000");
  try {
    const workspace = database.prepare("SELECT id FROM Workspace LIMIT 1").get() as { id: string };
    const agent = database.prepare("SELECT id FROM Agent WHERE revokedAt IS NULL LIMIT 1").get() as { id: string } | undefined;
    let state = seed;
    const random = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const sessionId = `ses_bench${crypto.randomBytes(8).toString("hex")}`;
    const start = Date.now() - 2 * 3600_000;
    const span = 2 * 3600_000 - 60_000;
    database
      .prepare("INSERT INTO Session (id, agentId, workspaceId, externalId, door, startedAt, lastCallAt) VALUES (?, ?, ?, ?, 'http', ?, ?)")
      .run(sessionId, agent?.id ?? null, workspace.id, `key:bench-${sessionId}`, sqliteTime(start), sqliteTime(start + span));
    const insert = database.prepare(
      `INSERT INTO ToolCall (id, sessionId, workspaceId, agentId, door, tool, argsJson, target, pathResolved, decision, status, errorName, errorCode, summary, hostId, createdAt, startedAt, finishedAt, durationMs)
       VALUES (?, ?, ?, ?, 'http', ?, ?, ?, ?, ?, ?, ?, ?, ?, 'bench', ?, ?, ?, ?)`,
    );
    database.transaction(() => {
      for (let i = 0; i < count; i++) {
        const r = random();
        const tool = r < 0.45 ? TOOLS[0] : r < 0.6 ? TOOLS[1] : r < 0.7 ? TOOLS[2] : r < 0.82 ? TOOLS[3] : r < 0.9 ? TOOLS[4] : TOOLS[5];
        const created = start + Math.floor((i / count) * span + random() * 300);
        const duration = tool === "run_command" ? Math.floor(200 + random() * 20_000) : Math.floor(2 + random() * 60);
        const path = `src/module-${Math.floor(random() * 200)}/file-${i % 97}.ts`;
        const target = tool === "run_command" ? `npm test -- --grep case-${i % 50}` : path;
        const failure = random();
        let status = "succeeded";
        let error: [string, number] | null = null;
        if (i === count - 1 && lastPending) status = "pending";
        else if (failure < 0.03) [status, error] = ["failed", ["not_found", 202]];
        else if (failure < 0.04 && tool !== "read_file") [status, error] = ["rejected", ["approval_rejected", 602]];
        else if (failure < 0.045 && tool === "run_command") [status, error] = ["denied", ["policy_denied", 604]];
        const decision = tool === "read_file" || tool === "list_directory" || tool === "search_files" ? "allow" : status === "denied" ? "deny" : "ask";
        const finished = status === "pending" ? null : created + duration;
        insert.run(
          `call_bench${String(i).padStart(8, "0")}${crypto.randomBytes(4).toString("hex")}`,
          sessionId,
          workspace.id,
          agent?.id ?? null,
          tool,
          JSON.stringify(tool === "run_command" ? { command: target } : { path }),
          target,
          tool === "run_command" ? null : `/workspace/${path}`,
          decision,
          status,
          error?.[0] ?? null,
          error?.[1] ?? null,
          tool === "run_command" ? target : path,
          sqliteTime(created),
          status === "pending" ? null : sqliteTime(created),
          finished === null ? null : sqliteTime(finished),
          status === "pending" ? null : duration,
        );
      }
    })();
    return sessionId;
  } finally {
    database.close();
  }
}

/** Waits until `predicate` is true (polling every 100 ms), up to `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
