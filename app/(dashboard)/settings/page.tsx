import type { Metadata } from "next";
import { Suspense } from "react";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { formatDuration } from "@/lib/dashboard/format";
import { getSettings } from "@/lib/dashboard/settings";
import { ActionForm } from "../_components/action-form";
import { BUTTON, Card, Facts, INPUT, Mono, PageHeader } from "../_components/page-parts";
import { TextBlock } from "../_components/text-block";
import { PageSkeleton } from "../_components/states";
import { saveWebhookAction } from "./actions";

export const metadata: Metadata = { title: "Settings" };

const EXAMPLE = JSON.stringify(
  { event: "approval.pending", call_id: "call_…", tool: "write_file", target: "src/app.ts", created_at: "2026-05-01T12:00:00.000Z", url: "http://127.0.0.1:3000/approvals?call=call_…" },
  null,
  2,
);

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
            When a call starts waiting, Agent Reach POSTs this JSON to the URL (a chat or phone push service&apos;s incoming webhook, or your own relay), with a link straight to the call. Leave empty to turn it off.
          </p>
          <ActionForm action={saveWebhookAction} className="flex flex-col gap-2 sm:flex-row sm:items-start" testId="webhook-form">
            <input name="webhookUrl" type="url" defaultValue={s.webhookUrl} placeholder="https://hooks.example.com/…" aria-label="Webhook URL" className={`${INPUT} font-mono sm:flex-1`} />
            <button type="submit" className={BUTTON.primary}>
              Save
            </button>
          </ActionForm>
          <div className="mt-3">
            <TextBlock label="Body sent" text={EXAMPLE} />
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
