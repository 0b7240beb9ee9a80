import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { createClient as createApiClient } from "@tursodatabase/api";
import { mintToken } from "../helpers/dataplane.js";
import type { TestUser } from "../helpers/factories.js";
import type { TestShoal } from "../helpers/shoal.js";

/** A fresh 32-byte key in the base64 Turso's clients send. */
export const newKey = () => randomBytes(32).toString("base64");

/** Text no file or answer could hold by chance. */
export const marker = (what: string) => `${what}-${randomBytes(12).toString("hex")}`;

/** Every line a Shoal process logged, kept for "no log line holds the key". */
export function logSink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}

/**
 * Creates an encrypted database through `@tursodatabase/api` (the cipher is Shoal's, outside the
 * client's type) and mints a token for it.
 */
export async function createEncrypted(
  h: TestShoal,
  u: TestUser,
  name: string,
  group: string,
  key: string,
  seed?: { type: "database"; name: string; timestamp?: string },
): Promise<{ id: string; token: string; url: string }> {
  const turso = createApiClient({ org: u.username, token: u.token, baseUrl: h.apiBase });
  const created = await turso.databases.create(name, {
    group,
    ...(seed ? { seed: seed as never } : {}),
    remote_encryption: { encryption_key: key, encryption_cipher: "aes256cbc" as never },
  });
  const token = await mintToken(u, u.username, name);
  return { id: created.id, token, url: `${h.url}/db/${u.username}/${name}/` };
}
