import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { EncryptionKeyError, UnsupportedCipherError } from "../../../src/engine/encryption/errors.js";
import {
  parseCipher,
  parseKey,
  parseRemoteEncryption,
  TURSO_CIPHERS,
} from "../../../src/engine/encryption/key-input.js";

const key32 = randomBytes(32);
const b64 = key32.toString("base64");

function failure(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a failure");
}

describe("remote_encryption input", () => {
  it("accepts the engine's cipher with a 32-byte base64 key, and defaults to it when none is named", () => {
    expect(parseRemoteEncryption({ encryption_key: b64, encryption_cipher: "aes256cbc" })).toEqual({
      cipher: "aes256cbc",
      key: key32,
    });
    expect(parseRemoteEncryption({ encryption_key: b64 }).cipher).toBe("aes256cbc");
    expect(parseRemoteEncryption({ encryption_key: b64, encryption_cipher: null }).cipher).toBe("aes256cbc");
  });

  it("refuses every one of Turso's ciphers by name, saying which are supported", () => {
    expect(TURSO_CIPHERS).toHaveLength(9);
    for (const name of TURSO_CIPHERS) {
      const e = failure(() => parseRemoteEncryption({ encryption_key: b64, encryption_cipher: name }));
      expect(e).toBeInstanceOf(UnsupportedCipherError);
      expect(e.message).toContain(`remote_encryption.encryption_cipher ${name} is not supported`);
      expect(e.message).toContain("supported: aes256cbc");
      expect((e as UnsupportedCipherError).kind).toBe("invalid");
    }
  });

  it("refuses an unknown cipher, quoting its name safely", () => {
    const e = failure(() => parseCipher("rot13\n{evil}", "c"));
    expect(e.message).toBe('c "rot13?{evil}" is unknown; supported: aes256cbc');
    expect(failure(() => parseCipher("AES256CBC", "c")).message).toContain("is unknown");
    expect(failure(() => parseCipher(5, "c")).message).toBe("c must be a string");
  });

  it("names the field and the decoded length of a key of the wrong size, never the key", () => {
    const short = randomBytes(16).toString("base64");
    const e = failure(() => parseRemoteEncryption({ encryption_key: short, encryption_cipher: "aes256cbc" }));
    expect(e).toBeInstanceOf(EncryptionKeyError);
    expect(e.message).toBe(
      "remote_encryption.encryption_key must decode to 32 bytes for aes256cbc; it decodes to 16",
    );
    expect(e.message).not.toContain(short);
    expect((e as EncryptionKeyError).code).toBe("ENCRYPTION_KEY_MALFORMED");
  });

  it("accepts only standard padded base64", () => {
    const bad = [
      b64.replace(/=$/, ""), // unpadded
      b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/[A-Z]/, "-"), // url-safe
      ` ${b64}`,
      `${b64.slice(0, 20)}\n${b64.slice(20)}`,
      "!!!!",
    ];
    for (const text of bad) {
      const e = failure(() => parseKey(text, "x-turso-encryption-key", "aes256cbc"));
      expect(e.message).toMatch(/^x-turso-encryption-key is not standard base64/);
      expect(e.message).not.toContain(text.trim());
    }
  });

  it("requires a key, and an object around it", () => {
    const missing = failure(() => parseRemoteEncryption({ encryption_cipher: "aes256cbc" }));
    expect(missing.message).toBe("remote_encryption.encryption_key is required");
    expect(missing).toMatchObject({ problem: "malformed", kind: "invalid" }); // a 400 in a body
    for (const body of [null, "k", [b64], 7]) {
      expect(failure(() => parseRemoteEncryption(body)).message).toBe(
        "remote_encryption must be an object with encryption_key",
      );
    }
    expect(failure(() => parseKey(42, "f", "aes256cbc")).message).toBe("f must be a string");
  });

  it("lets a branch inherit its source's cipher", () => {
    expect(parseRemoteEncryption({ encryption_key: b64 }, "aes256cbc").cipher).toBe("aes256cbc");
  });
});
