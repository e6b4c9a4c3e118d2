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
  return `${prefix}_${head}${randomTail()}`;
}

const idPool = Buffer.alloc(4096);
let idPoolOffset = idPool.length;

/**
 * 16 random base32 characters for an id, from a 4 KiB pool refilled from the system's CSPRNG
 * when used up: one `getrandom` per 256 ids instead of one per id (about 3.5 µs each). Secrets
 * (`newSecret`) never come from this pool.
 */
function randomTail(): string {
  if (idPoolOffset + 16 > idPool.length) {
    crypto.randomFillSync(idPool);
    idPoolOffset = 0;
  }
  let tail = "";
  for (let i = idPoolOffset; i < idPoolOffset + 16; i++) tail += ALPHABET[idPool[i] % 32];
  idPoolOffset += 16;
  return tail;
}

/** sha256 of bytes or UTF-8 text, lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return crypto.hash("sha256", data, "hex");
}

/** A random secret token `<prefix>_<43 base64url chars>` (256 bits). */
export function newSecret(prefix: string): string {
  return `${prefix}_${crypto.randomBytes(32).toString("base64url")}`;
}
