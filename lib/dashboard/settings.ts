import { z } from "zod";
import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { errorBody, type ErrorBody } from "@/lib/errors";
import { appendEvent } from "@/lib/audit/events";

/**
 * Dashboard settings stored in the Setting table. `webhook_url` is read by notifyPending
 * (lib/approvals/queue.ts), which POSTs `{event: "approval.pending", call_id, tool, target,
 * created_at, url}` to it when a call starts waiting.
 */

export const WEBHOOK_KEY = "webhook_url";

/** Settings and the read-only configuration the settings page shows. */
export interface SettingsView {
  webhookUrl: string;
  publicUrl: string;
  approvalExpiryMs: number;
  approvalWaitDefaultMs: number;
  approvalWaitMaxMs: number;
  workspaceRoot: string;
  logFile: string | null;
}

/** Current settings. */
export async function getSettings(): Promise<SettingsView> {
  const config = getConfig();
  const webhook = await db().setting.findUnique({ where: { key: WEBHOOK_KEY } });
  return {
    webhookUrl: webhook?.value ?? "",
    publicUrl: config.publicUrl,
    approvalExpiryMs: config.approvalExpiryMs,
    approvalWaitDefaultMs: config.approvalWaitDefaultMs,
    approvalWaitMaxMs: config.approvalWaitMaxMs,
    workspaceRoot: config.workspaceRoot,
    logFile: config.logFile,
  };
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
  if (url === "") await db().setting.deleteMany({ where: { key: WEBHOOK_KEY } });
  else await db().setting.upsert({ where: { key: WEBHOOK_KEY }, create: { key: WEBHOOK_KEY, value: url }, update: { value: url } });
  await appendEvent({ type: "settings.changed", actor: `reviewer:${actor}`, data: { key: WEBHOOK_KEY, set: url !== "" } });
  return { ok: true };
}
