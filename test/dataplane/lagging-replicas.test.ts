import { describe, expect, it } from "vitest";
import { LaggingReplicas } from "../../src/dataplane/lagging-replicas.js";
import { createLogger } from "../../src/lib/logger.js";

/**
 * A replica location whose forwarded write the primary's node answered before the replica had it
 * reads at the primary until a pull begun after that write has finished: one begun before it
 * doesn't count, and a pull that fails is tried again.
 */
function pulls() {
  const started: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const lag = new LaggingReplicas(
    () =>
      new Promise<void>((resolve, reject) => {
        started.push({ resolve, reject });
      }),
    createLogger("silent"),
  );
  return { lag, started };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("replicas lagging behind a write sent on from their location", () => {
  it("reads at the primary until a pull begun after the write has finished", async () => {
    const { lag, started } = pulls();
    expect(lag.isLagging("d1", "west")).toBe(false);
    lag.mark("d1", "west");
    expect(lag.isLagging("d1", "west")).toBe(true);
    expect(lag.isLagging("d1", "east")).toBe(false);
    expect(started).toHaveLength(1);
    // A second write while that pull runs: the pull may have begun before it, so another follows.
    lag.mark("d1", "west");
    started[0]!.resolve();
    await tick();
    expect(lag.isLagging("d1", "west")).toBe(true);
    expect(started).toHaveLength(2);
    started[1]!.resolve();
    await tick();
    expect(lag.isLagging("d1", "west")).toBe(false);
  });

  it("tries a failed pull again, and stays lagging meanwhile", async () => {
    const { lag, started } = pulls();
    lag.mark("d1", "west");
    started[0]!.reject(new Error("PRIMARY_UNREACHABLE"));
    await new Promise((r) => setTimeout(r, 1100));
    expect(lag.isLagging("d1", "west")).toBe(true);
    expect(started).toHaveLength(2);
    started[1]!.resolve();
    await tick();
    expect(lag.isLagging("d1", "west")).toBe(false);
  });
});
