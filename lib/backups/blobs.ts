import zlib from "node:zlib";
import { db } from "@/lib/db";
import { sha256Hex } from "@/lib/ids";

/**
 * Content-addressed blob storage in the database: the key is the sha256 (hex) of the raw bytes,
 * the row holds them gzip-compressed. Storing the same bytes twice stores one row, so a thousand
 * writes alternating between two versions keep two blobs.
 */

/** Stores `bytes` if not already stored. @returns its sha256 (hex). */
export async function putBlob(bytes: Buffer): Promise<string> {
  const sha256 = sha256Hex(bytes);
  const existing = await db().blob.findUnique({ where: { sha256 }, select: { sha256: true } });
  if (existing) return sha256;
  const data = zlib.gzipSync(bytes, { level: 6 });
  try {
    await db().blob.create({ data: { sha256, size: bytes.length, encoding: "gzip", data: new Uint8Array(data) } });
  } catch (err) {
    // Another writer stored the same bytes between our check and create: same content, fine.
    const again = await db().blob.findUnique({ where: { sha256 }, select: { sha256: true } });
    if (!again) throw err;
  }
  return sha256;
}

/** The raw bytes of a blob, or null when unknown. Verifies the hash on the way out. */
export async function getBlob(sha256: string): Promise<Buffer | null> {
  const row = await db().blob.findUnique({ where: { sha256 } });
  if (!row) return null;
  const bytes = zlib.gunzipSync(Buffer.from(row.data));
  if (sha256Hex(bytes) !== sha256) throw new Error(`blob ${sha256} is corrupt`);
  return bytes;
}
