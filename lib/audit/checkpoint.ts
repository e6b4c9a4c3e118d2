import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { canonicalJson } from "@/lib/canonical-json";
import { getConfig } from "@/lib/config";

/**
 * Signed checkpoints of the audit chain (see lib/audit/retention.ts). A checkpoint stands for a
 * pruned prefix of the event chain; its signature is HMAC-SHA256 (RFC 2104) over its canonical
 * JSON under the audit key: AGENT_REACH_AUDIT_KEY, or a key file in the data directory (created
 * 0600 on first use), kept apart from the database on purpose, so that whoever can rewrite the
 * database alone cannot re-sign a checkpoint. Several instances must share the key.
 */

export interface CheckpointBody {
  upToSeq: number;
  hash: string;
  cutoff: string;
  prunedEvents: number;
  prunedCalls: number;
  createdAt: string;
}

/** Keys read from key files, by path: the head is signed on every audit write. */
const keyFiles = new Map<string, Buffer>();

/** The HMAC key of checkpoints (bytes). A key file is read once per process and path. */
export function auditKey(): Buffer {
  const fromEnv = process.env.AGENT_REACH_AUDIT_KEY;
  if (fromEnv) return Buffer.from(fromEnv, "utf8");
  const file = path.join(getConfig().dataDir, "audit.key");
  const known = keyFiles.get(file);
  if (known) return known;
  const key = readOrCreateKey(file);
  keyFiles.set(file, key);
  return key;
}

function readOrCreateKey(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const key = crypto.randomBytes(32);
    try {
      fs.writeFileSync(file, key, { mode: 0o600, flag: "wx" });
      return key;
    } catch {
      return fs.readFileSync(file); // another process created it first
    }
  }
}

/** HMAC-SHA256 (hex) of a checkpoint's canonical JSON. */
export function signCheckpoint(body: CheckpointBody, key = auditKey()): string {
  return crypto.createHmac("sha256", key).update(canonicalJson(body)).digest("hex");
}

