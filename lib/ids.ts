import crypto from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/**
 * A new identifier `<prefix>_<26 chars>`: 10 chars of millisecond time then 16 random chars
 * (ULID layout), so ids sort by creation time and are unguessable.
 * @param prefix short type tag, e.g. "call", "ses", "bak".
 */
export function newId(prefix: string): string {
  let time = Date.now();
  let head = "";
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const bytes = crypto.randomBytes(16);
  let tail = "";
  for (const b of bytes) tail += ALPHABET[b % 32];
  return `${prefix}_${head}${tail}`;
}

/** sha256 of bytes or UTF-8 text, lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return crypto.createHash("sha256").update(data).digest("hex");
}

/** A random secret token `<prefix>_<43 base64url chars>` (256 bits). */
export function newSecret(prefix: string): string {
  return `${prefix}_${crypto.randomBytes(32).toString("base64url")}`;
}
