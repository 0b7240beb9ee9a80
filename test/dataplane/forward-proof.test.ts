/** The signed client address one node hands another with a forwarded data-plane request. */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ClientProof } from "../../src/dataplane/forward/proof.js";

const secret = randomBytes(32);

describe("ClientProof", () => {
  it("gives back the address a node signed, and no address for a client it couldn't tell", () => {
    const p = new ClientProof(secret);
    expect(p.check(p.sign("203.0.113.7", "node-b"))).toBe("203.0.113.7");
    expect(p.check(p.sign("2001:db8::1", "node-b"))).toBe("2001:db8::1");
    expect(p.check(p.sign(undefined, "node-b"))).toBeNull();
  });

  it("ignores a proof that was altered, signed with another secret, malformed or absent", () => {
    const p = new ClientProof(secret);
    const signed = p.sign("203.0.113.7", "node-b");
    expect(p.check(signed.replace("203.0.113.7", "203.0.113.8"))).toBeUndefined();
    expect(new ClientProof(randomBytes(32)).check(signed)).toBeUndefined();
    expect(p.check("203.0.113.7")).toBeUndefined();
    expect(p.check(`${signed} extra`)).toBeUndefined();
    expect(p.check(undefined)).toBeUndefined();
    expect(p.check([signed, signed])).toBeUndefined();
  });

  it("ignores a proof more than a minute old or ahead, so one overheard can't be used for long", () => {
    let now = 1_000_000;
    const p = new ClientProof(secret, () => now);
    const signed = p.sign("203.0.113.7", "node-b");
    now += 59_000;
    expect(p.check(signed)).toBe("203.0.113.7");
    now += 2_000;
    expect(p.check(signed)).toBeUndefined();
    now = 1_000_000 - 61_000;
    expect(p.check(signed)).toBeUndefined();
  });
});
