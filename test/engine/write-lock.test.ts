import { describe, expect, it } from "vitest";
import { LockTimeoutError, WriteLock } from "../../src/engine/write-lock.js";

describe("the write lock", () => {
  it("hands the lock to waiters in arrival order", async () => {
    const lock = new WriteLock();
    const [a, b, c] = [{}, {}, {}];
    const order: string[] = [];
    await lock.acquire(a, 1000);
    const pb = lock.acquire(b, 1000).then(() => order.push("b"));
    const pc = lock.acquire(c, 1000).then(() => order.push("c"));
    lock.release(a);
    await pb;
    lock.release(b);
    await pc;
    expect(order).toEqual(["b", "c"]);
    lock.release(c);
    expect(lock.idle).toBe(true);
  });

  it("is re-entrant for its holder and ignores releases by others", async () => {
    const lock = new WriteLock();
    const a = {};
    await lock.acquire(a, 10);
    await lock.acquire(a, 10);
    lock.release({});
    expect(lock.idle).toBe(false);
    lock.release(a);
    expect(lock.idle).toBe(true);
  });

  it("gives up after the wait limit", async () => {
    const lock = new WriteLock();
    await lock.acquire({}, 10);
    await expect(lock.acquire({}, 30)).rejects.toBeInstanceOf(LockTimeoutError);
    expect(lock.contended).toBe(false);
  });

  it("tells the holder when someone starts waiting", async () => {
    const lock = new WriteLock();
    let told = 0;
    const a = {};
    await lock.acquire(a, 10, () => told++);
    expect(told).toBe(0);
    const waiting = lock.acquire({}, 1000);
    expect(told).toBe(1);
    lock.release(a);
    await waiting;
  });
});
