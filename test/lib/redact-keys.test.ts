import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/logger.js";
import { scrubSecrets, withoutEncryptionKeys } from "../../src/lib/redact-keys.js";

const key = randomBytes(32).toString("base64");

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, stream };
}

describe("keeping encryption keys out of logs and stored bodies", () => {
  it("keeps a key out of the log wherever it travels: the header, a body, remote_encryption", () => {
    const { lines, stream } = capture();
    const log = createLogger("info", stream);
    log.info({ req: { headers: { "x-turso-encryption-key": key, host: "db" } } }, "request");
    log.info({ headers: { "x-turso-encryption-key": key } }, "headers");
    log.info({
      body: { name: "enc", remote_encryption: { encryption_key: key, encryption_cipher: "aes256cbc" } },
    });
    log.info({ remote_encryption: { encryption_key: key } });
    log.info({ opts: { remoteEncryptionKey: key } });
    expect(lines).toHaveLength(5);
    for (const line of lines) {
      expect(line).not.toContain(key);
      expect(line).toContain("[redacted]");
    }
    expect(lines[2]).toContain("aes256cbc");
  });

  it("copies a body with every key field replaced, at any depth, leaving the rest", () => {
    const body = {
      name: "enc",
      remote_encryption: { encryption_key: key, encryption_cipher: "aes256cbc" },
      deep: [{ x: { "X-Turso-Encryption-Key": key, remoteEncryptionKey: key } }],
      encryption_key: null,
    };
    const clean = withoutEncryptionKeys(body);
    expect(JSON.stringify(clean)).not.toContain(key);
    expect(clean.remote_encryption).toEqual({ encryption_key: "[redacted]", encryption_cipher: "aes256cbc" });
    expect(clean.encryption_key).toBeNull();
    expect(body.remote_encryption.encryption_key).toBe(key); // the original is untouched
  });

  it("scrubs a key quoted in a message", () => {
    expect(scrubSecrets(`bad key ${key} in ${key}`, [key, undefined, "ab"])).toBe(
      "bad key [redacted] in [redacted]",
    );
  });
});
