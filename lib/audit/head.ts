import crypto from "node:crypto";
import { canonicalJson } from "@/lib/canonical-json";
import { auditKey } from "@/lib/audit/checkpoint";

/**
 * The signed head of the audit chain. The hash chain alone proves that history was not edited in
 * the middle, but not that its end is still there: deleting the newest events leaves a shorter
 * chain that verifies. So every append also rewrites one row (Setting "audit_head") holding the
 * last sequence number and hash, signed with HMAC-SHA256 (RFC 2104) under the audit key, in the
 * same transaction as the events. `verifyChain` requires the newest event to be exactly the one
 * the head names: fewer events is truncation, more is an unsigned tail, and a head that was
 * deleted or does not verify is reported too. Whoever can write the database but not read the
 * audit key cannot produce a head for a shortened chain.
 */

/** The Setting key of the signed head. */
export const HEAD_SETTING = "audit_head";

export interface AuditHead {
  /** Sequence number of the newest event (0 when the chain is empty). */
  seq: number;
  /** Hash of that event (the genesis hash when empty). */
  hash: string;
  /**
   * Sequence number at which a writer found the head missing while events existed (the row was
   * deleted), carried forward in every later head so the evidence does not vanish; null normally.
   */
  resetAt: number | null;
  /** HMAC-SHA256 (hex) over {seq, hash, resetAt} under the audit key. */
  signature: string;
}

/** HMAC-SHA256 (hex) of a head body. */
export function signHead(body: { seq: number; hash: string; resetAt: number | null }, key = auditKey()): string {
  return crypto.createHmac("sha256", key).update(`audit-head\n${canonicalJson({ seq: body.seq, hash: body.hash, resetAt: body.resetAt })}`).digest("hex");
}

/** A signed head for `seq`/`hash`. */
export function makeHead(seq: number, hash: string, resetAt: number | null): AuditHead {
  return { seq, hash, resetAt, signature: signHead({ seq, hash, resetAt }) };
}

/** Parses a stored head; null for anything that is not one (treated as missing or forged). */
export function parseHead(value: string | null | undefined): AuditHead | null {
  if (!value) return null;
  try {
    const v = JSON.parse(value) as Partial<AuditHead>;
    if (typeof v.seq !== "number" || typeof v.hash !== "string" || typeof v.signature !== "string") return null;
    return { seq: v.seq, hash: v.hash, resetAt: typeof v.resetAt === "number" ? v.resetAt : null, signature: v.signature };
  } catch {
    return null;
  }
}

/** True when the head's signature verifies under the audit key (constant-time compare). */
export function headSignatureOk(head: AuditHead): boolean {
  const expected = Buffer.from(signHead(head), "hex");
  const given = Buffer.from(head.signature, "hex");
  return expected.length === given.length && crypto.timingSafeEqual(expected, given);
}
