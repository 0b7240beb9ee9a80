import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { EncryptionKeyError } from "../../../src/engine/encryption/errors.js";
import { KeyCache } from "../../../src/engine/encryption/key-cache.js";
import {
  enginePassphrase,
  keyCheck,
  newEncryption,
  unlockDatabase,
} from "../../../src/engine/encryption/keys.js";

const key = randomBytes(32);

describe("keys derived from a customer's key", () => {
  it("gives the engine a 32-character passphrase, different under each database's salt", () => {
    const a = newEncryption({ cipher: "aes256cbc", key });
    const b = newEncryption({ cipher: "aes256cbc", key });
    expect(a.key.passphrase).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(Buffer.byteLength(a.key.passphrase)).toBe(32);
    expect(a.params.salt).not.toBe(b.params.salt);
    expect(a.key.passphrase).not.toBe(b.key.passphrase);
    expect(a.params.check).not.toBe(b.params.check);
    // Nothing kept is, or contains, the key or the passphrase.
    const kept = JSON.stringify(a.params);
    for (const secret of [key.toString("base64"), key.toString("hex"), a.key.passphrase]) {
      expect(kept).not.toContain(secret);
    }
    expect(Buffer.from(a.params.check, "base64")).toHaveLength(16);
    expect(Buffer.from(a.params.salt, "base64")).toHaveLength(16);
  });

  it("unlocks with the same key under the stored parameters (a branch's inherited ones too)", () => {
    const { params, key: created } = newEncryption({ cipher: "aes256cbc", key });
    const inherited = { ...params };
    expect(unlockDatabase(inherited, Buffer.from(key))).toEqual(created);
  });

  it("says a different key is invalid, without naming either", () => {
    const { params } = newEncryption({ cipher: "aes256cbc", key });
    const other = randomBytes(32);
    let caught: unknown;
    try {
      unlockDatabase(params, other);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(EncryptionKeyError);
    expect(caught).toMatchObject({ problem: "invalid", code: "ENCRYPTION_KEY_INVALID", kind: "forbidden" });
    expect(String((caught as Error).message)).toBe("the encryption key doesn't open the database");
  });

  it("derives deterministically from key and salt, with independent passphrase and check", () => {
    const salt = randomBytes(16);
    expect(enginePassphrase(key, salt)).toBe(enginePassphrase(key, salt));
    expect(keyCheck(key, salt).equals(keyCheck(key, salt))).toBe(true);
    expect(keyCheck(key, salt).toString("base64url")).not.toContain(enginePassphrase(key, salt).slice(0, 16));
  });
});

describe("the key cache", () => {
  const setup = (idleMs: number) => {
    let now = 1_000;
    const forgotten: string[] = [];
    const cache = new KeyCache({ idleMs, now: () => now, onForget: (id) => forgotten.push(id) });
    const { params } = newEncryption({ cipher: "aes256cbc", key });
    return { cache, params, forgotten, advance: (ms: number) => (now += ms) };
  };
  const text = key.toString("base64");

  it("keeps a verified key while used and drops it after the idle limit, telling its owner", () => {
    const { cache, params, forgotten, advance } = setup(60_000);
    const first = cache.unlock("db1", params, text);
    advance(59_000);
    // A hit hands back the same object: no second derivation.
    expect(cache.unlock("db1", params, text)).toBe(first);
    advance(59_000);
    expect(cache.sweep()).toEqual([]);
    expect(cache.peek("db1")).toBe(first);
    advance(1_000);
    expect(cache.sweep()).toEqual(["db1"]);
    expect(forgotten).toEqual(["db1"]);
    expect(cache.peek("db1")).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.close();
  });

  it("answers a missing, malformed or wrong key precisely, and keeps serving the right one", () => {
    const { cache, params } = setup(60_000);
    const right = cache.unlock("db1", params, text);
    const problem = (k: string | undefined) => {
      try {
        cache.unlock("db1", params, k);
      } catch (e) {
        return (e as EncryptionKeyError).problem;
      }
      return "ok";
    };
    expect(problem(undefined)).toBe("required");
    expect(problem("")).toBe("required");
    expect(problem("not base64!")).toBe("malformed");
    expect(problem(randomBytes(16).toString("base64"))).toBe("malformed");
    expect(problem(randomBytes(32).toString("base64"))).toBe("invalid");
    expect(cache.unlock("db1", params, text)).toBe(right);
    cache.close();
  });

  it("keeps nothing with an idle limit of 0", () => {
    const { cache, params } = setup(0);
    const a = cache.unlock("db1", params, text);
    expect(cache.size).toBe(0);
    expect(cache.unlock("db1", params, text)).toEqual(a);
  });

  it("keeps keys per database, and forgets one on request", () => {
    const { cache, params, forgotten } = setup(60_000);
    const other = newEncryption({ cipher: "aes256cbc", key }).params;
    const a = cache.unlock("db1", params, text);
    const b = cache.unlock("db2", other, text);
    expect(a.passphrase).not.toBe(b.passphrase);
    cache.forget("db1");
    expect(forgotten).toEqual(["db1"]);
    expect(cache.peek("db2")).toBe(b);
    cache.close();
    expect(forgotten).toEqual(["db1", "db2"]);
  });
});
