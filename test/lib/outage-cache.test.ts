import { describe, expect, it } from "vitest";
import { MAX_STALE_MS, OutageTolerantCache, STORE_WAIT_MS } from "../../src/lib/outage-cache.js";

/**
 * The cache of store answers that rides out a store outage (ADR 0022): fresh answers for its TTL,
 * one read per miss however many callers, and the last answer once the store is slow or failing.
 */
const never = () => new Promise<string>(() => {});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a cache of store answers through an outage", () => {
  it("reads once per miss, however many ask, and answers from memory while fresh", async () => {
    const cache = new OutageTolerantCache<string>(1000);
    let reads = 0;
    const read = async () => {
      reads++;
      return "node-a";
    };
    expect(await Promise.all([cache.get("east", read), cache.get("east", read)])).toEqual([
      "node-a",
      "node-a",
    ]);
    expect(cache.get("east", read)).toBe("node-a");
    expect(reads).toBe(1);
  });

  it("answers the stale value after STORE_WAIT_MS when the store doesn't answer, then at once while the read hangs", async () => {
    const cache = new OutageTolerantCache<string>(10);
    await cache.get("east", async () => "node-a");
    await sleep(20);
    const started = performance.now();
    expect(await cache.get("east", never)).toBe("node-a");
    expect(performance.now() - started).toBeGreaterThanOrEqual(STORE_WAIT_MS - 5);
    // The hanging read is still pending: no one waits for it again.
    expect(await cache.get("east", never)).toBe("node-a");
  });

  it("answers the stale value when the read fails, and a fresh one once the store answers", async () => {
    const cache = new OutageTolerantCache<string>(10);
    await cache.get("east", async () => "node-a");
    await sleep(20);
    expect(await cache.get("east", () => Promise.reject(new Error("ECONNREFUSED")))).toBe("node-a");
    expect(await cache.get("east", async () => "node-b")).toBe("node-b");
  });

  it("fails as the store does when it has nothing, or only an answer older than MAX_STALE_MS", async () => {
    const cache = new OutageTolerantCache<string>(10);
    await expect(cache.get("east", () => Promise.reject(new Error("ECONNREFUSED")))).rejects.toThrow(
      "ECONNREFUSED",
    );
    await cache.get("east", async () => "node-a");
    const later = Date.now() + MAX_STALE_MS + 1;
    await expect(cache.get("east", () => Promise.reject(new Error("ECONNREFUSED")), later)).rejects.toThrow(
      "ECONNREFUSED",
    );
  });

  it("forgets an answer only once it is old enough", async () => {
    const cache = new OutageTolerantCache<string>(60_000);
    await cache.get("east", async () => "node-a");
    cache.forget("east", 60_000);
    expect(cache.fresh("east")?.value).toBe("node-a");
    cache.forget("east");
    expect(cache.fresh("east")).toBeUndefined();
  });
});
