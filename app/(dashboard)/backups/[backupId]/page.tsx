import type { Metadata } from "next";
import Form from "next/form";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { diffVersion, getVersion, listVersions, showContent, versionBytes, type DiffTarget } from "@/lib/dashboard/backups";
import { formatBytes, formatTime } from "@/lib/dashboard/format";
import { StatusBadge } from "../../_components/badges";
import { DiffView } from "../../_components/diff-view";
import { BUTTON, Card, EmptyState, Facts, INPUT, Mono, PageHeader } from "../../_components/page-parts";
import { RevealedText } from "../../_components/revealed-text";
import { PageSkeleton } from "../../_components/states";
import { TextBlock } from "../../_components/text-block";
import { RestoreButton } from "../_components/restore-button";

export const metadata: Metadata = { title: "Backup" };

type Params = { params: Promise<{ backupId: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

/**
 * One backed-up version: its facts, a diff against the current file (what a restore would
 * change) or another version, its content, and the restore button.
 */
export default async function BackupPage({ params, searchParams }: Params) {
  const [{ backupId }, query] = await Promise.all([params, searchParams]);
  await requireReviewerPage(pathWithQuery(`/backups/${backupId}`, query));
  if (!(await getVersion(backupId))) notFound();
  return (
    <Suspense key={`${backupId}?${JSON.stringify(query)}`} fallback={<PageSkeleton />}>
      <Backup backupId={backupId} query={query} />
    </Suspense>
  );
}

async function Backup({ backupId, query }: { backupId: string; query: Record<string, string | string[] | undefined> }) {
  const loaded = await versionBytes(backupId);
  if (!loaded) notFound();
  const { version, bytes } = loaded;
  const view = query.view === "content" ? "content" : "diff";
  const against: DiffTarget = typeof query.against === "string" && query.against !== "current" ? { kind: "version", backupId: query.against } : { kind: "current" };
  const [siblings, diff, currentDiff] = await Promise.all([
    listVersions(version.path),
    view === "diff" ? diffVersion(backupId, against) : Promise.resolve(null),
    view === "diff" && against.kind === "current" ? Promise.resolve(null) : diffVersion(backupId, { kind: "current" }),
  ]);
  // The restore carries the current file's sha256 from the very diff the reviewer sees.
  const againstCurrent = view === "diff" && against.kind === "current" ? diff : currentDiff;
  const others = siblings.filter((s) => s.id !== version.id);
  const content = view === "content" ? showContent(bytes) : null;
  const tab = (active: boolean) => `rounded-md px-3 py-1.5 text-sm ${active ? "bg-zinc-900 text-white dark:bg-zinc-100 dark:text-zinc-900" : "border border-zinc-300 dark:border-zinc-700"}`;
  return (
    <>
      <PageHeader title={<span className="break-all font-mono"><RevealedText text={version.path} /></span>} description={<>Version backed up {formatTime(version.createdAt)}</>}>
        <Link href={pathWithQuery("/backups", { path: version.path })} className="text-sm underline">
          All versions of this file
        </Link>
      </PageHeader>
      <div className="grid gap-4 xl:grid-cols-[minmax(0,1fr)_22rem]">
        <div className="order-2 min-w-0 space-y-4 xl:order-1">
          <div className="flex flex-wrap gap-2">
            <Link className={tab(view === "diff")} href={pathWithQuery(`/backups/${backupId}`, { against: query.against })}>
              Diff
            </Link>
            <Link className={tab(view === "content")} href={`/backups/${backupId}?view=content`}>
              Content
            </Link>
            <a className={tab(false)} href={`/backups/${backupId}/raw`} download>
              Download bytes
            </a>
          </div>
          {view === "diff" && (
            <Card>
              <Form action={`/backups/${backupId}`} className="mb-3 flex flex-wrap items-end gap-2 text-sm">
                <label className="flex min-w-0 flex-col gap-1 text-xs font-medium text-zinc-600 dark:text-zinc-400">
                  Compare with
                  <select name="against" defaultValue={against.kind === "current" ? "current" : against.backupId} className={INPUT}>
                    <option value="current">the current file (what restoring would change)</option>
                    {others.map((o) => (
                      <option key={o.id} value={o.id}>
                        version of {formatTime(o.createdAt)} ({formatBytes(o.size)})
                      </option>
                    ))}
                  </select>
                </label>
                <button type="submit" className={BUTTON.secondary}>
                  Compare
                </button>
              </Form>
              {diff === null ? (
                <EmptyState title="That version is not a backup of this file" />
              ) : diff.error ? (
                <p role="alert" className="text-sm text-red-700 dark:text-red-300">
                  The current file cannot be read: {diff.error}
                </p>
              ) : (
                <>
                  {diff.notes.length > 0 && (
                    <ul className="mb-2 list-disc pl-5 text-sm text-amber-800 dark:text-amber-200">
                      {diff.notes.map((n, i) => (
                        <li key={i}>{n}</li>
                      ))}
                    </ul>
                  )}
                  <DiffView
                    diff={diff.diff}
                    testId="backup-diff"
                    title={
                      <span className="text-xs">
                        <span className="text-red-700 dark:text-red-400">− {diff.oldLabel}</span>
                        <br />
                        <span className="text-emerald-700 dark:text-emerald-400">+ {diff.newLabel}</span>
                      </span>
                    }
                  />
                </>
              )}
            </Card>
          )}
          {content && (
            <Card>
              {content.kind === "binary" ? (
                <EmptyState title="Binary content">
                  {formatBytes(content.size)} of binary data; use “Download bytes” to inspect it.
                </EmptyState>
              ) : (
                <>
                  <p className="mb-2 text-xs text-zinc-500">
                    {content.encoding}
                    {content.bom ? " with BOM" : ""} · line endings {content.eol}
                  </p>
                  <TextBlock text={content.text} tall />
                </>
              )}
            </Card>
          )}
        </div>
        <div className="order-1 space-y-4 xl:order-2">
          <Card title="This version">
            <Facts
              items={[
                ["Backup", <Mono key="b">{version.id}</Mono>],
                ["Backed up", formatTime(version.createdAt)],
                ["Size", formatBytes(version.size)],
                ["Mode", <Mono key="m">{version.mode}</Mono>],
                ["sha256", <Mono key="s">{version.sha256}</Mono>],
                [
                  "Replaced by",
                  version.call ? (
                    <Link key="c" href={`/calls/${version.call.id}`} className="inline-flex flex-wrap items-center gap-1 underline">
                      <span className="font-mono text-xs">{version.call.tool}</span> <StatusBadge status={version.call.status} />
                      {version.call.reviewer && <span className="text-xs">approved by {version.call.reviewer}</span>}
                    </Link>
                  ) : (
                    "—"
                  ),
                ],
              ]}
            />
          </Card>
          <Card title="Restore">
            <p className="mb-3 text-sm text-zinc-600 dark:text-zinc-400">Writes these bytes and mode back to the file, as an audited call made by you. The current bytes are backed up first.</p>
            {againstCurrent && !againstCurrent.error ? (
              <>
                <p className="mb-2 text-xs text-zinc-700 dark:text-zinc-300" data-testid="restore-seen">
                  The current file {againstCurrent.currentSha256 ? <>has sha256 <Mono>{againstCurrent.currentSha256}</Mono></> : "does not exist"}; the restore happens only if it still does.
                </p>
                <RestoreButton key={version.id} backupId={version.id} path={version.path} seenSha256={againstCurrent.currentSha256 ?? null} />
              </>
            ) : (
              <p role="alert" className="text-sm text-red-800 dark:text-red-300">The current file cannot be read ({againstCurrent?.error ?? "unknown backup"}), so it cannot be restored from here.</p>
            )}
          </Card>
        </div>
      </div>
    </>
  );
}
