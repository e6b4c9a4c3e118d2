import type { CallChanges } from "@/lib/dashboard/effects";
import { formatBytes } from "@/lib/dashboard/format";
import { DiffView } from "../../../_components/diff-view";
import { Card, Mono } from "../../../_components/page-parts";
import { RevealedText } from "../../../_components/revealed-text";

const STATUS_TEXT: Record<string, string> = {
  applied: "applied to the workspace",
  held: "held for a reviewer: the workspace is unchanged until approved",
  applying: "being applied",
  discarded: "discarded: never applied",
};

/**
 * What a command (or a revert, or a rewind) changed in the workspace: counts, the list of paths,
 * generated trees summarised, and the combined diff drawn like a write's.
 */
export function FileChanges({ changes }: { changes: CallChanges }) {
  const s = changes.summary;
  return (
    <Card title="File changes">
      <div className="space-y-3" data-testid="file-changes">
        <p className="text-sm">
          <strong>{s.created}</strong> created, <strong>{s.modified}</strong> modified, <strong>{s.deleted}</strong> deleted, {formatBytes(s.bytes)} written —{" "}
          <span data-testid="changes-status">{STATUS_TEXT[changes.status] ?? changes.status}</span>
          {changes.recovery && <span className="text-amber-700 dark:text-amber-300"> ({changes.recovery === "rolled_forward" ? "finished after a restart" : "rolled back after a restart"})</span>}
        </p>
        {s.hold_reasons && s.hold_reasons.length > 0 && (
          <ul className="list-disc pl-5 text-sm text-amber-800 dark:text-amber-200">
            {s.hold_reasons.map((r, i) => (
              <li key={i}>held because it {r}</li>
            ))}
          </ul>
        )}
        {s.git && s.git.length > 0 && (
          <div className="text-sm" data-testid="git-state">
            <p className="text-zinc-600 dark:text-zinc-400">What it does to git&apos;s index and refs (not visible in the working tree):</p>
            <ul className="list-disc pl-5 font-mono text-xs">
              {s.git.map((line, i) => (
                <li key={i} className="break-all">
                  <RevealedText text={line} />
                </li>
              ))}
            </ul>
          </div>
        )}
        {s.bulky && (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Generated files applied without backups: {s.bulky.files} files, {formatBytes(s.bulky.bytes)} in <Mono>{s.bulky.dirs.join(", ")}</Mono>
          </p>
        )}
        {s.files.length > 0 && (
          <ul className="max-h-48 overflow-auto text-xs font-mono" data-testid="changed-files">
            {s.files.map((f) => (
              <li key={`${f.kind}:${f.path}`} className="flex gap-2">
                <span className="w-20 shrink-0 text-zinc-500">{f.kind.replace("_", " ")}</span>
                <span className="break-all">
                  <RevealedText text={f.path} />
                </span>
                {(f.additions !== undefined || f.deletions !== undefined) && (
                  <span>
                    <span className="text-emerald-700 dark:text-emerald-400">+{f.additions ?? 0}</span> <span className="text-red-700 dark:text-red-400">−{f.deletions ?? 0}</span>
                  </span>
                )}
              </li>
            ))}
            {s.files_truncated && <li className="text-zinc-500">… {s.total_files - s.files.length} more</li>}
          </ul>
        )}
        {changes.diff ? <DiffView diff={changes.diff} title={<span>combined diff of the change set</span>} /> : <p className="text-sm text-zinc-500">No line diff (no text file changed).</p>}
      </div>
    </Card>
  );
}
