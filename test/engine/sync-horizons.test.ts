/**
 * A replica's sync ends where its primary stood when the sync began: the first request fixes
 * the horizon, later requests of the same sync keep it, and a pause or a "caught up" starts anew.
 */
import { describe, expect, it } from "vitest";
import { SyncHorizons } from "../../src/engine/sync-horizons.js";

function clocked(pauseMs = 1000) {
  let now = 0;
  const horizons = new SyncHorizons(pauseMs, () => now);
  return { horizons, advance: (ms: number) => (now += ms) };
}

describe("sync horizons", () => {
  it("keep one sync's horizon however far the primary moves, until the replica is told it is caught up", () => {
    const { horizons, advance } = clocked();
    expect(horizons.limit("db/west", 1, { generation: 1, frame: 10 })).toBe(10);
    advance(5);
    expect(horizons.limit("db/west", 1, { generation: 1, frame: 30 })).toBe(10);
    horizons.end("db/west");
    expect(horizons.limit("db/west", 1, { generation: 1, frame: 30 })).toBe(30);
  });

  it("start a new sync after a pause longer than pauseMs, and keep one per replica", () => {
    const { horizons, advance } = clocked(1000);
    expect(horizons.limit("db/west", 1, { generation: 1, frame: 10 })).toBe(10);
    expect(horizons.limit("db/east", 1, { generation: 1, frame: 12 })).toBe(12);
    // Requests at most pauseMs apart are one sync, however long it runs.
    for (let i = 0; i < 5; i++) {
      advance(900);
      expect(horizons.limit("db/west", 1, { generation: 1, frame: 50 + i })).toBe(10);
    }
    advance(1001);
    expect(horizons.limit("db/west", 1, { generation: 1, frame: 80 })).toBe(80);
  });

  it("set no limit on a past generation, and a new horizon in a new one", () => {
    const { horizons } = clocked();
    expect(horizons.limit("db/west", 1, { generation: 1, frame: 10 })).toBe(10);
    // The primary moved to generation 2 while the replica reads the rest of generation 1.
    expect(horizons.limit("db/west", 1, { generation: 2, frame: 3 })).toBeUndefined();
    expect(horizons.limit("db/west", 2, { generation: 2, frame: 7 })).toBe(7);
    expect(horizons.limit("db/west", 2, { generation: 2, frame: 9 })).toBe(7);
  });

  it("forget the horizons of syncs that broke off once there are many", () => {
    const { horizons, advance } = clocked(1000);
    for (let i = 0; i < 1024; i++) horizons.limit(`db${i}/west`, 1, { generation: 1, frame: i });
    advance(1001);
    horizons.limit("fresh/west", 1, { generation: 1, frame: 1 });
    expect(horizons.size).toBe(1);
  });
});
