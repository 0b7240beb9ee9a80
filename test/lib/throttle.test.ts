import { describe, expect, it } from "vitest";
import { Throttle } from "../../src/lib/throttle.js";

describe("Throttle", () => {
  it("lets each key through once per window, keys independent of each other", () => {
    const t = new Throttle(1000);
    expect(t.due("a", 0)).toBe(true);
    expect(t.due("a", 999)).toBe(false);
    expect(t.due("b", 999)).toBe(true);
    expect(t.due("a", 1000)).toBe(true);
    expect(t.due("a", 1500)).toBe(false);
  });

  it("keeps holding back keys still inside their window when it sweeps old ones", () => {
    const t = new Throttle(10);
    for (let i = 0; i < 1024; i++) t.due(`old${i}`, 0);
    expect(t.due("live", 5)).toBe(true);
    // This call sweeps (1025 remembered): the old keys go, "live" (5 ms old) must stay held back.
    expect(t.due("other", 10)).toBe(true);
    expect(t.due("live", 12)).toBe(false);
    expect(t.due("old1", 12)).toBe(true);
  });
});
