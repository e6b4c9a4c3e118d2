import type { Metadata } from "next";
import { Suspense } from "react";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { formatDuration } from "@/lib/dashboard/format";
import { getSettings } from "@/lib/dashboard/settings";
import { ActionForm } from "../_components/action-form";
import { BUTTON, Card, Facts, INPUT, Mono, PageHeader } from "../_components/page-parts";
import { TextBlock } from "../_components/text-block";
import { PageSkeleton } from "../_components/states";
import { webhookRequest, type WebhookFormat } from "@/lib/notify/webhook";
import { saveWebhookAction, testWebhookAction } from "./actions";

export const metadata: Metadata = { title: "Settings" };

/** The body (and headers, for ntfy) a format sends, for an example call. */
function example(format: WebhookFormat, publicUrl: string): string {
  const request = webhookRequest(format, { event: "approval.pending", callId: "call_…", tool: "write_file", target: "src/app.ts", createdAt: new Date("2026-05-01T12:00:00.000Z") }, publicUrl);
  const headers = Object.entries(request.headers)
    .filter(([k]) => k !== "content-type")
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");
  const body = request.headers["content-type"].startsWith("application/json") ? JSON.stringify(JSON.parse(request.body), null, 2) : request.body;
  return headers ? `${headers}\n\n${body}` : body;
}

/** The approval webhook and the server's configuration (read-only; set by environment variables). */
export default async function SettingsPage() {
  await requireReviewerPage("/settings");
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Settings />
    </Suspense>
  );
}

async function Settings() {
  const s = await getSettings();
  return (
    <>
      <PageHeader title="Settings" />
      <div className="space-y-4">
        <Card title="Approval webhook">
          <p className="mb-3 text-sm text-zinc-600 dark:text-zinc-400">
            When a call starts waiting, Agent Reach POSTs to the URL with a link straight to the call: generic JSON (your own relay), a Slack-compatible message (Slack, Mattermost, Rocket.Chat incoming webhooks) or an ntfy push (the topic URL, e.g. https://ntfy.sh/your-topic). Leave the URL empty to turn it off.
          </p>
          <ActionForm action={saveWebhookAction} className="flex flex-col gap-2 sm:flex-row sm:flex-wrap sm:items-end" testId="webhook-form">
            <label className="flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-700 sm:flex-1 dark:text-zinc-300">
              Webhook URL
              <input name="webhookUrl" type="url" defaultValue={s.webhookUrl} placeholder="https://hooks.example.com/…" className={`${INPUT} font-mono`} />
            </label>
            <label className="flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">
              Format
              <select name="webhookFormat" defaultValue={s.webhookFormat} className={INPUT}>
                <option value="generic">generic JSON</option>
                <option value="slack">Slack-compatible</option>
                <option value="ntfy">ntfy</option>
              </select>
            </label>
            <button type="submit" className={BUTTON.primary}>
              Save
            </button>
          </ActionForm>
          <ActionForm action={testWebhookAction} className="mt-2 flex flex-wrap items-center gap-2" testId="webhook-test">
            <button type="submit" className={BUTTON.secondary} disabled={!s.webhookUrl}>
              Send a test message
            </button>
          </ActionForm>
          <div className="mt-3">
            <TextBlock label={`Sent when a call waits (${s.webhookFormat})`} text={example(s.webhookFormat, s.publicUrl)} />
          </div>
        </Card>
        <Card title="Server">
          <Facts
            items={[
              ["Workspace root", <Mono key="w">{s.workspaceRoot}</Mono>],
              ["Public URL (links)", <Mono key="u">{s.publicUrl}</Mono>],
              ["Agents wait for a decision", `${formatDuration(s.approvalWaitDefaultMs)} by default, at most ${formatDuration(s.approvalWaitMaxMs)}`],
              ["Undecided calls expire after", formatDuration(s.approvalExpiryMs)],
              ["JSONL log file", s.logFile ? <Mono key="l">{s.logFile}</Mono> : "off (AGENT_REACH_LOG)"],
            ]}
          />
          <p className="mt-3 text-xs text-zinc-500">These come from environment variables (see the README) and change on restart.</p>
        </Card>
      </div>
    </>
  );
}
