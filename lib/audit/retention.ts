import { getConfig } from "@/lib/config";
import { db } from "@/lib/db";
import { newId } from "@/lib/ids";
import { withLock } from "@/lib/mutex";
import { FINAL_STATUSES } from "@/lib/audit/calls";
import { signCheckpoint, type CheckpointBody } from "@/lib/audit/checkpoint";

/**
 * Retention: pruning old calls, events, backups and blobs without breaking the audit chain.
 *
 * Events are pruned as a prefix of the chain (every event up to seq S). What they proved is kept
 * in a signed Checkpoint row (lib/audit/checkpoint.ts): S, the hash of event S (the link the
 * first kept event points at), the counts pruned and the cutoff. So `verifyChain` can still prove
 * that the kept history continues the pruned one, and a forged or edited checkpoint is detected.
 */

export interface PruneResult {
  cutoff: string;
  prunedEvents: number;
  prunedCalls: number;
  prunedBackups: number;
  prunedBlobs: number;
  checkpointSeq: number | null;
}

/**
 * Deletes what is older than `cutoff`: finished calls (never pending or running ones), the events
 * up to the last one before the cutoff (leaving a signed checkpoint), backups, blobs no backup
 * points at any more, and sessions left without calls. Serialised with event appends.
 * @returns what was pruned.
 */
export async function pruneBefore(cutoff: Date): Promise<PruneResult> {
  return withLock("event-chain", async () => {
    const lastOld = await db().event.findFirst({
      where: { createdAt: { lt: cutoff } },
      orderBy: { seq: "desc" },
      select: { seq: true, hash: true },
    });
    let prunedEvents = 0;
    let checkpointSeq: number | null = null;
    const calls = await db().toolCall.deleteMany({
      where: { finishedAt: { lt: cutoff }, status: { in: [...FINAL_STATUSES] } },
    });
    if (lastOld) {
      const body: CheckpointBody = {
        upToSeq: lastOld.seq,
        hash: lastOld.hash,
        cutoff: cutoff.toISOString(),
        prunedEvents: await db().event.count({ where: { seq: { lte: lastOld.seq } } }),
        prunedCalls: calls.count,
        createdAt: new Date().toISOString(),
      };
      await db().$transaction([
        db().checkpoint.create({
          data: { id: newId("ckp"), ...body, cutoff, createdAt: new Date(body.createdAt), signature: signCheckpoint(body) },
        }),
        db().event.deleteMany({ where: { seq: { lte: lastOld.seq } } }),
      ]);
      prunedEvents = body.prunedEvents;
      checkpointSeq = lastOld.seq;
    }
    const backups = await db().backup.deleteMany({ where: { createdAt: { lt: cutoff } } });
    const referenced = new Set((await db().backup.findMany({ select: { blobSha: true }, distinct: ["blobSha"] })).map((b) => b.blobSha));
    const oldBlobs = await db().blob.findMany({ where: { createdAt: { lt: cutoff } }, select: { sha256: true } });
    const orphans = oldBlobs.map((b) => b.sha256).filter((sha) => !referenced.has(sha));
    let prunedBlobs = 0;
    for (let i = 0; i < orphans.length; i += 500) {
      prunedBlobs += (await db().blob.deleteMany({ where: { sha256: { in: orphans.slice(i, i + 500) } } })).count;
    }
    await db().session.deleteMany({ where: { lastCallAt: { lt: cutoff }, calls: { none: {} } } });
    return { cutoff: cutoff.toISOString(), prunedEvents, prunedCalls: calls.count, prunedBackups: backups.count, prunedBlobs, checkpointSeq };
  });
}

/**
 * Prunes by the configured retention (AGENT_REACH_RETENTION_DAYS; 0 keeps everything).
 * @returns the prune result, or null when retention is off.
 */
export async function applyRetention(now = new Date()): Promise<PruneResult | null> {
  const days = getConfig().retentionDays;
  if (days <= 0) return null;
  return pruneBefore(new Date(now.getTime() - days * 24 * 3600 * 1000));
}
