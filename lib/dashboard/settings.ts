import { getConfig } from "@/lib/config";
import { webhookSettings, type WebhookFormat } from "@/lib/notify/webhook";

/**
 * The settings page's read model: the approval webhook as lib/notify/webhook.ts keeps it (the
 * module that sends it and owns its stored settings) and the server's read-only configuration.
 */

/** Settings and the read-only configuration the settings page shows. */
export interface SettingsView {
  /** The webhook URL, "" when off. */
  webhookUrl: string;
  webhookFormat: WebhookFormat;
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
  const webhook = await webhookSettings();
  return {
    webhookUrl: webhook.url,
    webhookFormat: webhook.format,
    publicUrl: config.publicUrl,
    approvalExpiryMs: config.approvalExpiryMs,
    approvalWaitDefaultMs: config.approvalWaitDefaultMs,
    approvalWaitMaxMs: config.approvalWaitMaxMs,
    workspaceRoot: config.workspaceRoot,
    logFile: config.logFile,
  };
}
