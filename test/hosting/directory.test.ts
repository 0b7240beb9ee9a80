import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoreAccess } from "../../src/domain/core/ports.js";
import { DatabaseDirectory } from "../../src/hosting/directory.js";
import { RemoteDirectory } from "../../src/shards/shard-ports.js";
import { openSqliteStore } from "../../src/store/sqlite.js";
import type { Store } from "../../src/store/store.js";
import { seedGroup } from "../helpers/store-seed.js";

/**
 * The data plane's cached view of databases, on a real store: a change made here clears it, and a
 * read that was on its way while the change was made is not kept (a failover's demoted node would
 * otherwise go on seeing itself as the primary, and stop building its replica).
 */
let dir: string;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "shoal-directory-"));
  store = await openSqliteStore(path.join(dir, "store"));
  await seedGroup(store, "east", ["east", "west"]);
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Moves the group's primary to `location` in the store, as a failover does. */
const movePrimary = (location: string) => store.write((r) => r.leases.setPrimaryLocation("g1", location));

describe("the database directory", () => {
  it("serves a record from its cache until invalidated", async () => {
    const directory = new DatabaseDirectory(store, 60_000);
    expect((await directory.find({ id: "d1" }))?.primary_location).toBe("east");
    await movePrimary("west");
    expect((await directory.find({ id: "d1" }))?.primary_location).toBe("east");
    directory.invalidate();
    expect((await directory.find({ id: "d1" }))?.primary_location).toBe("west");
  });

  it("doesn't keep a record read while an invalidation happened: the next lookup reads again", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let reads = 0;
    // The first read gets its answer from the store, then is held: the change lands meanwhile.
    const slow: StoreAccess = {
      read: async (fn) => {
        const answer = await store.read(fn);
        if (reads++ === 0) await held;
        return answer;
      },
      write: (fn) => store.write(fn),
    };
    const directory = new DatabaseDirectory(slow, 60_000);
    const before = directory.find({ id: "d1" });
    await new Promise((r) => setTimeout(r, 20));
    await movePrimary("west");
    directory.invalidate();
    release();
    // The lookup that began before the change answers what it read ...
    expect((await before)?.primary_location).toBe("east");
    // ... but one that begins after it never sees that.
    expect((await directory.find({ id: "d1" }))?.primary_location).toBe("west");
    expect(reads).toBe(2);
  });

  it("gives its shards the time of the store read with a record, so no cache keeps it past the TTL", async () => {
    let reads = 0;
    const counting: StoreAccess = {
      read: (fn) => {
        reads++;
        return store.read(fn);
      },
      write: (fn) => store.write(fn),
    };
    const ttl = 200;
    const directory = new DatabaseDirectory(counting, ttl);
    const first = await directory.findRead({ id: "d1" });
    const readsAfterFirst = reads;
    // The node's read is shared: asked again within the TTL, no store read, and the first read's time.
    await new Promise((r) => setTimeout(r, 50));
    const again = await directory.findRead({ id: "d1" });
    expect(again.at).toBe(first.at);
    expect(reads).toBe(readsAfterFirst);
    // A shard keeps what it was given only until that read is a TTL old.
    const primary = {
      find: (locator: { id: string }, fresh: boolean) =>
        fresh ? directory.reloadRead(locator) : directory.findRead(locator),
    } as unknown as ConstructorParameters<typeof RemoteDirectory>[0];
    const shard = new RemoteDirectory(primary, ttl);
    expect((await shard.find({ id: "d1" }))?.id).toBe("d1");
    expect(shard.peek({ id: "d1" })).toBeDefined();
    expect(shard.peek({ id: "d1" }, first.at + ttl)).toBeUndefined();
    // A reload reads the store, whatever the node had cached.
    await movePrimary("west");
    expect((await shard.find({ id: "d1" }))?.primary_location).toBe("east");
    expect((await shard.reload({ id: "d1" }))?.primary_location).toBe("west");
  });
});
