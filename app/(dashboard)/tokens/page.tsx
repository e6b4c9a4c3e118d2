import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { formatTime } from "@/lib/dashboard/format";
import { listAgents, listWorkspaces } from "@/lib/dashboard/tokens";
import { ActionForm } from "../_components/action-form";
import { BUTTON, Card, EmptyState, INPUT, Mono, PageHeader } from "../_components/page-parts";
import { PageSkeleton } from "../_components/states";
import { revokeTokenAction, setTokenPresetAction } from "./actions";
import { CreateToken } from "./_components/create-token";
import { PresetSelect } from "../_components/preset-select";

export const metadata: Metadata = { title: "Agent tokens" };

/** Agent tokens: create (shown once), name, scope, revoke. */
export default async function TokensPage() {
  await requireReviewerPage("/tokens");
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Tokens />
    </Suspense>
  );
}

async function Tokens() {
  const [agents, workspaces] = await Promise.all([listAgents(), listWorkspaces()]);
  return (
    <>
      <PageHeader title="Agent tokens" description="Each agent calls tools with its own token. Only a hash is stored; a revoked token stops working at once." />
      <div className="space-y-4">
        <Card title="New token">
          <CreateToken workspaces={workspaces} />
        </Card>
        <Card title={`Tokens (${agents.length})`}>
          {agents.length === 0 ? (
            <EmptyState title="No agent tokens">Create one above; the first start of the server also prints one.</EmptyState>
          ) : (
            <ul className="divide-y divide-zinc-100 dark:divide-zinc-800" data-testid="tokens">
              {agents.map((a) => (
                <li key={a.id} className="flex flex-wrap items-center justify-between gap-2 py-2.5" data-agent-id={a.id}>
                  <div className="min-w-0 text-sm">
                    <div className="flex flex-wrap items-center gap-2">
                      <span className="font-medium">{a.name}</span>
                      {a.revokedAt ? (
                        <span className="rounded bg-zinc-200 px-1.5 text-xs dark:bg-zinc-700">revoked {formatTime(a.revokedAt)}</span>
                      ) : (
                        <span className="rounded bg-emerald-100 px-1.5 text-xs text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100">active</span>
                      )}
                    </div>
                    <div className="text-xs text-zinc-500">
                      <Mono>{a.tokenPrefix}…</Mono> · preset <span data-testid="token-preset-name">{a.preset ?? "the workspace's"}</span> · scope {a.workspaceRoot ? <Mono>{a.workspaceRoot}</Mono> : "any workspace"} · created {formatTime(a.createdAt)} · last used {formatTime(a.lastUsedAt)} ·{" "}
                      <Link className="underline" href={`/sessions?agent=${a.id}`}>
                        {a.sessions} session{a.sessions === 1 ? "" : "s"}
                      </Link>
                    </div>
                  </div>
                  {!a.revokedAt && (
                    <ActionForm action={setTokenPresetAction} className="flex items-center gap-2" testId={`preset-${a.id}`}>
                      <input type="hidden" name="agentId" value={a.id} />
                      <label className="text-xs text-zinc-600 dark:text-zinc-400">
                        preset{" "}
                        <PresetSelect defaultValue={a.preset ?? ""} inherit className={INPUT} label={`Supervision preset of ${a.name}`} />
                      </label>
                      <button type="submit" className={BUTTON.secondary}>
                        Set
                      </button>
                    </ActionForm>
                  )}
                  {!a.revokedAt && (
                    <ActionForm action={revokeTokenAction} confirm={`Revoke the token of “${a.name}”? Its next call will be refused.`}>
                      <input type="hidden" name="agentId" value={a.id} />
                      <button type="submit" className={BUTTON.danger}>
                        Revoke
                      </button>
                    </ActionForm>
                  )}
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
    </>
  );
}
