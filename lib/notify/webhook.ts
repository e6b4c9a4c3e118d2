import { z } from "zod";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { errorBody, type ErrorBody } from "@/lib/errors";
import { appendEvent } from "@/lib/audit/events";

/**
 * The approval webhook: when a call starts waiting, one POST to the configured URL with a link
 * to the call, in one of three formats (Setting "webhook_format"):
 * - `generic`: JSON `{event, call_id, tool, target, created_at, url, call_url}`;
 * - `slack`: a Slack-compatible incoming-webhook body `{text, blocks}` (also read by Mattermost,
 *   Rocket.Chat, Discord's /slack endpoint);
 * - `ntfy`: an ntfy publish, plain-text message with `Title`, `Click` (the link), `Tags` and
 *   `Priority` headers, posted to the topic URL.
 * Sending is best effort, bounded to 5 s, and never raises. The URL and format are kept in the
 * Setting table (keys "webhook_url" and "webhook_format"); this module is their only writer, and
 * each change is a `settings.changed` event.
 */

export const WEBHOOK_URL_KEY = "webhook_url";
export const WEBHOOK_FORMAT_KEY = "webhook_format";
export const WebhookFormat = z.enum(["generic", "slack", "ntfy"]);
export type WebhookFormat = z.infer<typeof WebhookFormat>;

/** What the webhook says about a call. */
export interface WebhookCall {
  event: "approval.pending" | "approval.test";
  callId: string;
  tool: string;
  target: string | null;
  createdAt: Date;
}

/** A prepared request: body and headers. */
export interface WebhookRequest {
  body: string;
  headers: Record<string, string>;
}

/** Header values must be visible ASCII: anything else becomes "?" (the body keeps the real text). */
function asciiHeader(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
}

/**
 * The request for `call` in `format`, with links built on `publicUrl`: `url` opens the call in
 * the approvals inbox, `call_url` its record.
 */
export function webhookRequest(format: WebhookFormat, call: WebhookCall, publicUrl: string): WebhookRequest {
  const url = `${publicUrl}/approvals?call=${encodeURIComponent(call.callId)}`;
  const callUrl = `${publicUrl}/calls/${encodeURIComponent(call.callId)}`;
  const target = (call.target ?? "").slice(0, 300);
  const headline = call.event === "approval.test" ? "Agent Reach test: the webhook works" : `${call.tool} waits for approval`;
  if (format === "slack") {
    const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    const text = `${escape(headline)}${target ? `: \`${escape(target)}\`` : ""} <${url}|Decide in the inbox>`;
    return {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        text,
        blocks: [{ type: "section", text: { type: "mrkdwn", text } }],
      }),
    };
  }
  if (format === "ntfy") {
    return {
      headers: {
        "content-type": "text/plain; charset=utf-8",
        Title: asciiHeader(`Agent Reach: ${headline}`),
        Click: url,
        Tags: call.event === "approval.test" ? "white_check_mark" : "warning",
        Priority: call.event === "approval.test" ? "low" : "high",
      },
      body: `${headline}${target ? `\n${target}` : ""}\n${url}`,
    };
  }
  return {
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ event: call.event, call_id: call.callId, tool: call.tool, target: call.target, created_at: call.createdAt, url, call_url: callUrl }),
  };
}

/** The configured webhook: URL ("" when off) and format. */
export async function webhookSettings(): Promise<{ url: string; format: WebhookFormat }> {
  const rows = await db().setting.findMany({ where: { key: { in: [WEBHOOK_URL_KEY, WEBHOOK_FORMAT_KEY] } } });
  const get = (key: string) => rows.find((r) => r.key === key)?.value ?? "";
  const format = WebhookFormat.safeParse(get(WEBHOOK_FORMAT_KEY));
  return { url: get(WEBHOOK_URL_KEY), format: format.success ? format.data : "generic" };
}

/** Result of one webhook POST. */
export type WebhookResult = { ok: true; status: number; ms: number } | { ok: false; status: number | null; message: string; ms: number };

/** POSTs `call` to `url` in `format`; never throws. Timeout 5 s. */
export async function sendWebhook(url: string, format: WebhookFormat, call: WebhookCall): Promise<WebhookResult> {
  const started = Date.now();
  const request = webhookRequest(format, call, getConfig().publicUrl);
  try {
    const res = await fetch(url, { method: "POST", headers: request.headers, body: request.body, signal: AbortSignal.timeout(5000), redirect: "manual" });
    await res.arrayBuffer().catch(() => undefined);
    const ms = Date.now() - started;
    return res.ok ? { ok: true, status: res.status, ms } : { ok: false, status: res.status, message: `the server answered HTTP ${res.status}`, ms };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why = e.name === "TimeoutError" ? "no answer within 5 s" : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { ok: false, status: null, message: why, ms: Date.now() - started };
  }
}

/** Tells the configured webhook that `callId` waits (nothing when none is set). Never throws. */
export async function notifyPendingWebhook(callId: string): Promise<void> {
  const { url, format } = await webhookSettings();
  if (!url) return;
  const row = await db().toolCall.findUnique({ where: { id: callId }, select: { tool: true, target: true, createdAt: true } });
  const result = await sendWebhook(url, format, { event: "approval.pending", callId, tool: row?.tool ?? "call", target: row?.target ?? null, createdAt: row?.createdAt ?? new Date() });
  if (!result.ok) console.warn(`[agent-reach] webhook for ${callId} failed: ${result.message}`);
}

/**
 * Sends a test message to the configured webhook (logged as a `settings.webhook_tested` event).
 * @returns what the server answered, or why it could not be reached
 */
export async function testWebhook(actor: string): Promise<WebhookResult | { ok: false; status: null; message: string; ms: 0 }> {
  const { url, format } = await webhookSettings();
  if (!url) return { ok: false, status: null, message: "no webhook URL is saved", ms: 0 };
  const result = await sendWebhook(url, format, { event: "approval.test", callId: "call_test", tool: "test", target: null, createdAt: new Date() });
  await appendEvent({ type: "settings.webhook_tested", actor: `reviewer:${actor}`, data: { format, ok: result.ok, status: result.status } });
  return result;
}

/** An http(s) URL, or "" to turn the webhook off. */
export const WebhookUrl = z.union([
  z.literal(""),
  z
    .string()
    .max(2000)
    .url("not a URL")
    .refine((u) => /^https?:\/\//i.test(u), "only http and https URLs can be called"),
]);

/**
 * Sets (or, with "", clears) the webhook URL; logged as a `settings.changed` event.
 * @returns ok, or `invalid_arguments` (not an http(s) URL; the message says why)
 */
export async function setWebhookUrl(value: string, actor: string): Promise<{ ok: true } | { ok: false; error: ErrorBody }> {
  const parsed = WebhookUrl.safeParse(value.trim());
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? "invalid URL";
    return { ok: false, error: errorBody("invalid_arguments", message, { issues: [{ path: "webhookUrl", message }] }) };
  }
  const url = parsed.data;
  if (url === "") await db().setting.deleteMany({ where: { key: WEBHOOK_URL_KEY } });
  else await db().setting.upsert({ where: { key: WEBHOOK_URL_KEY }, create: { key: WEBHOOK_URL_KEY, value: url }, update: { value: url } });
  await appendEvent({ type: "settings.changed", actor: `reviewer:${actor}`, data: { key: WEBHOOK_URL_KEY, set: url !== "" } });
  return { ok: true };
}

/** Saves the webhook format; logged as a `settings.changed` event. @returns ok, or `invalid_arguments` */
export async function setWebhookFormat(value: string, actor: string): Promise<{ ok: true } | { ok: false; error: ErrorBody }> {
  const parsed = WebhookFormat.safeParse(value);
  if (!parsed.success) return { ok: false, error: errorBody("invalid_arguments", "unknown format", { issues: [{ path: "webhookFormat", message: "unknown format" }] }) };
  await db().setting.upsert({ where: { key: WEBHOOK_FORMAT_KEY }, create: { key: WEBHOOK_FORMAT_KEY, value: parsed.data }, update: { value: parsed.data } });
  await appendEvent({ type: "settings.changed", actor: `reviewer:${actor}`, data: { key: WEBHOOK_FORMAT_KEY, value: parsed.data } });
  return { ok: true };
}
