import type { Metadata } from "next";
import Form from "next/form";
import Link from "next/link";
import { Suspense } from "react";
import { pathWithQuery, requireReviewerPage } from "@/lib/dashboard/auth";
import { FILES_PAGE_SIZE, listBackedUpFiles, listVersions } from "@/lib/dashboard/backups";
import { formatBytes, formatTime } from "@/lib/dashboard/format";
import { StatusBadge } from "../_components/badges";
import { BUTTON, Card, EmptyState, INPUT, Mono, PageHeader, Pager } from "../_components/page-parts";
import { RevealedText } from "../_components/revealed-text";
import { PageSkeleton } from "../_components/states";

export const metadata: Metadata = { title: "Backups" };

/**
 * Backups by file: a searchable list of files with backups; `?path=` lists that file's versions
 * (time, size, the call that replaced them) with links to view, diff and restore each.
 */
export default async function BackupsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  await requireReviewerPage(pathWithQuery("/backups", params));
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Backups params={params} />
    </Suspense>
  );
}

async function Backups({ params }: { params: Record<string, string | string[] | undefined> }) {
  const q = typeof params.q === "string" ? params.q.trim() : "";
  const path = typeof params.path === "string" ? params.path : null;
  const page = Math.max(1, Number(params.page) || 1);
  const [files, versions] = await Promise.all([listBackedUpFiles(q, page), path ? listVersions(path) : Promise.resolve(null)]);
  return (
    <>
      <PageHeader title="Backups" description="Every write, edit and restore keeps the bytes it replaced. Pick a file to see its versions." />
      <div className="grid gap-4 lg:grid-cols-[minmax(0,22rem)_minmax(0,1fr)]">
        <Card title="Files">
          <Form action="/backups" className="mb-3 flex gap-2" role="search">
            <input name="q" defaultValue={q} placeholder="Search paths" aria-label="Search paths" className={INPUT} />
            <button type="submit" className={BUTTON.secondary}>
              Search
            </button>
          </Form>
          {files.items.length === 0 ? (
            <EmptyState title={q ? "No file matches" : "No backups yet"}>{q ? "Try another part of the path." : "A write that replaces a file keeps the old bytes here."}</EmptyState>
          ) : (
            <ul className="divide-y divide-zinc-100 text-sm dark:divide-zinc-800" data-testid="backup-files">
              {files.items.map((f) => (
                <li key={f.path}>
                  <Link
                    href={pathWithQuery("/backups", { q: q || undefined, path: f.path })}
                    aria-current={f.path === path ? "true" : undefined}
                    className={`block rounded px-2 py-1.5 hover:bg-zinc-100 dark:hover:bg-zinc-800 ${f.path === path ? "bg-zinc-100 dark:bg-zinc-800" : ""}`}
                  >
                    <span className="block break-all font-mono text-xs">
                      <RevealedText text={f.path} />
                    </span>
                    <span className="text-xs text-zinc-500">
                      {f.versions} version{f.versions === 1 ? "" : "s"} · latest {formatTime(f.latestAt)}
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
          )}
          <Pager page={page} pageSize={FILES_PAGE_SIZE} total={files.total} href={(p) => pathWithQuery("/backups", { q: q || undefined, page: String(p) })} />
        </Card>
        <Card title={path ? "Versions" : undefined}>
          {!path || versions === null ? (
            <EmptyState title="Pick a file">Its versions appear here, newest first.</EmptyState>
          ) : versions.length === 0 ? (
            <EmptyState title="No backups of this file" />
          ) : (
            <>
              <p className="mb-3 break-all font-mono text-sm">
                <RevealedText text={path} />
              </p>
              <div className="-mx-4 overflow-x-auto px-4">
                <table className="w-full min-w-[36rem] text-left text-sm" data-testid="backup-versions">
                  <thead className="text-xs text-zinc-500">
                    <tr>
                      <th className="py-2 pr-3 font-medium">Backed up (UTC)</th>
                      <th className="py-2 pr-3 font-medium">Size</th>
                      <th className="py-2 pr-3 font-medium">Replaced by</th>
                      <th className="py-2 font-medium">sha256</th>
                    </tr>
                  </thead>
                  <tbody>
                    {versions.map((v) => (
                      <tr key={v.id} className="border-t border-zinc-100 align-top dark:border-zinc-800">
                        <td className="whitespace-nowrap py-2 pr-3">
                          <Link className="font-mono text-xs underline" href={`/backups/${v.id}`}>
                            {formatTime(v.createdAt)}
                          </Link>
                        </td>
                        <td className="whitespace-nowrap py-2 pr-3 tabular-nums">{formatBytes(v.size)}</td>
                        <td className="py-2 pr-3">
                          {v.call ? (
                            <Link href={`/calls/${v.call.id}`} className="inline-flex flex-wrap items-center gap-1 hover:underline">
                              <span className="font-mono text-xs">{v.call.tool}</span>
                              <StatusBadge status={v.call.status} />
                            </Link>
                          ) : (
                            "—"
                          )}
                        </td>
                        <td className="py-2">
                          <Mono className="text-xs">{v.sha256.slice(0, 16)}…</Mono>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )}
        </Card>
      </div>
    </>
  );
}
