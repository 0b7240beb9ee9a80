import { createHash, randomBytes, randomUUID } from "node:crypto";

/**
 * A random UUID for resources. The turso CLI labels a database "Turso" rather than "SQLite" when
 * byte 5 of its id is 0x10, so ids with that byte are drawn again.
 */
export function newUuid(): string {
  for (;;) {
    const id = randomUUID();
    if (id.slice(10, 12) !== "10") return id;
  }
}

/** 22-character base64url id of 16 random bytes, the format of Turso's API token ids. */
export function newTokenId(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * A stable UUID derived from a name (SHA-256 based, version bits set to 8, "custom"), used for
 * objects that are functions of others, such as a database's instance in a location.
 */
export function derivedUuid(...parts: string[]): string {
  const b = createHash("sha256").update(parts.join("\u0000")).digest().subarray(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x80;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
