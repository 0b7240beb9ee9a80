import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrimaryLeases } from "../../src/hosting/primary-leases.js";
import { createLogger } from "../../src/lib/logger.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { seedGroup } from "../helpers/store-seed.js";

/**
 * A node's leases of its primaries, on a real store: a lease the node stops holding, however that
 * shows, hands the group to the demotion that turns its files into replicas.
 */
const now = () => new Date().toISOString();
const LEASE_MS = 2000;
let dir: string;
let store: Store;
let lost: string[];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-leases-"));
  store = await openSqliteStore(path.join(dir, "store"));
  lost = [];
  await seedGroup(store, "west", ["east", "west"], false);
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Node A's failover: the next epoch, at east, and east named the primary (as hosting/failover.ts writes them). */
const failoverToEast = () =>
  store.write(async (r) => {
    const old = await r.leases.find("g1");
    await r.leases.replace({
      ...{ group_id: "g1", epoch: (old?.epoch ?? 0) + 1, location: "east", node_id: "node-a" },
      ...{
        valid_from: now(),
        expires_at: new Date(Date.now() + LEASE_MS).toISOString(),
        promoted_from: "{}",
        standbys: null,
      },
    });
    await r.leases.setPrimaryLocation("g1", "east");
  });

/** Node B's leases (it holds west), on `on`; each loss recorded. */
function leasesOfB(on: Store): PrimaryLeases {
  return new PrimaryLeases({
    store: on,
    log: createLogger("silent"),
    nodeId: "node-b",
    locations: () => new Set(["west"]),
    leaseMs: LEASE_MS,
    failoverAfterMs: 0,
    lost: async (groupId) => {
      lost.push(groupId);
    },
    failover: () => Promise.reject(new Error("unused")),
  });
}

describe("a node's primary leases", () => {
  it("takes the lease of its primary, and loses it once a failover moved the primary away", async () => {
    const leases = leasesOfB(store);
    await leases.tick();
    expect(leases.mayWrite("g1")).toBe(true);
    await failoverToEast();
    await leases.tick();
    expect(leases.mayWrite("g1")).toBe(false);
    expect(lost).toEqual(["g1"]);
  });

  it("loses it too when the failover commits between the round's read and its renewal", async () => {
    let armed = false;
    // The round reads which primaries are B's, then, before it renews, A's failover lands.
    const racing = {
      write: (fn: Parameters<Store["write"]>[0]) => store.write(fn),
      read: async <T>(fn: Parameters<Store["read"]>[0]) => {
        const answer = (await store.read(fn)) as T;
        if (armed) {
          armed = false;
          await failoverToEast();
        }
        return answer;
      },
    } as unknown as Store;
    const leases = leasesOfB(racing);
    await leases.tick();
    expect(leases.mayWrite("g1")).toBe(true);
    armed = true;
    await leases.tick();
    expect(leases.mayWrite("g1")).toBe(false);
    expect(lost).toEqual(["g1"]);
    // Later rounds don't see the group as B's at all: nothing is lost twice.
    await leases.tick();
    expect(lost).toEqual(["g1"]);
  });
});
