import { describe, expect, it } from "vitest";
import { EncryptionKeyError } from "../../../src/engine/encryption/errors.js";
import {
  KeyAttempts,
  WRONG_KEY_WINDOW_MS,
  WRONG_KEYS_PER_WINDOW,
} from "../../../src/engine/encryption/key-attempts.js";

const refused = (fn: () => void) => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof EncryptionKeyError ? e : undefined;
  }
};

describe("wrong encryption keys per database and address", () => {
  it("allows the limit, refuses past it until the window ends, per database and per address", () => {
    let now = 1_000_000;
    const a = new KeyAttempts(() => now);
    for (let i = 0; i < WRONG_KEYS_PER_WINDOW; i++) {
      expect(refused(() => a.check("db1", "10.0.0.1"))).toBeUndefined();
      a.wrong("db1", "10.0.0.1");
    }
    const e = refused(() => a.check("db1", "10.0.0.1"));
    expect(e?.code).toBe("ENCRYPTION_KEY_ATTEMPTS");
    expect(e?.kind).toBe("limit_exceeded");
    expect(e?.message).toMatch(/try again in 60 s/);
    // Another address, another database: their own counts.
    expect(refused(() => a.check("db1", "10.0.0.2"))).toBeUndefined();
    expect(refused(() => a.check("db2", "10.0.0.1"))).toBeUndefined();
    now += WRONG_KEY_WINDOW_MS - 1000;
    expect(refused(() => a.check("db1", "10.0.0.1"))?.message).toMatch(/try again in 1 s/);
    now += 1000;
    expect(refused(() => a.check("db1", "10.0.0.1"))).toBeUndefined();
  });
});
