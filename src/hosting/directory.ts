import type { DataPlaneCache, StoreAccess } from "../domain/core/ports.js";
import type { DatabaseLocator, DatabaseLookup, DataPlaneDatabase } from "../domain/data-access/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { DatabaseForDataPlane } from "../store/databases.js";
import { DirectoryCache } from "./directory-cache.js";

/**
 * How long a cached database record is used. With several processes on one store this is the most
 * a change made through another process (a rotation, a block, a size limit) takes to apply here.
 */
export const DIRECTORY_TTL_MS = 1000;

/**
 * The data plane's view of databases, cached because every SQL request needs one. Only found
 * databases are cached (a database created a moment ago is never hidden by a stale "not found"),
 * entries live at most `ttlMs` (so a change made by another process shows within that bound), and
 * every local change clears the cache at once.
 */
export class DatabaseDirectory implements DatabaseLookup, DataPlaneCache {
  private readonly cache: DirectoryCache;
  private readonly invalidated: Array<() => void> = [];
  /** Counts `invalidate` calls: a read begun before one must not be kept after it. */
  private generation = 0;

  constructor(
    private readonly store: StoreAccess,
    ttlMs = DIRECTORY_TTL_MS,
    maxEntries = 50_000,
  ) {
    this.cache = new DirectoryCache(ttlMs, maxEntries);
  }

  /** The cached record, if fresh; no store access (the data plane's synchronous fast path). */
  peek(locator: DatabaseLocator, now = Date.now()): DataPlaneDatabase | undefined {
    return this.cache.peek(locator, now);
  }

  async find(locator: DatabaseLocator, now = Date.now()): Promise<DataPlaneDatabase | undefined> {
    return (await this.findRead(locator, now)).record;
  }

  /**
   * The record and when it was read from the store: another process caching it keeps it until
   * that read is `ttlMs` old, not longer, so a change made elsewhere still shows within `ttlMs`
   * however many caches it passed through (the shards share the node's reads this way).
   */
  async findRead(
    locator: DatabaseLocator,
    now = Date.now(),
  ): Promise<{ record: DataPlaneDatabase | undefined; at: number }> {
    const hit = this.cache.entry(locator, now);
    if (hit) return hit;
    const generation = this.generation;
    const record = await this.store.read(async (r) => {
      const found = await r.databases.findForDataPlane(locator);
      if (!found) return undefined;
      const [placed, revoked] = await Promise.all([
        r.groups.locationsOf([found.group_id]),
        r.revokedDbTokens.activeFor(found.id, found.group_id, Math.floor(now / 1000)),
      ]);
      return { ...found, locations: placed.get(found.group_id) ?? [], revokedTokens: new Set(revoked) };
    });
    // A change made here while the store was read (a failover naming another primary, say) may
    // be missing from this record: its caller began before the change and may use it, but the
    // cache must not hand it to those who come after (a demoted primary's replica build would
    // otherwise still see itself as the primary for up to the TTL, and stop).
    if (generation === this.generation) this.cache.put(locator, record, now);
    return { record, at: now };
  }

  /** File of a database's primary instance, remembered (building it is a path join per request). */
  pathOf(d: DatabaseForDataPlane, files: Pick<InstanceFiles, "path">): string {
    return this.cache.pathOf(d, files);
  }

  async groupExists(groupId: string): Promise<boolean> {
    return (await this.store.read((r) => r.groups.findById(groupId))) !== undefined;
  }

  reload(locator: DatabaseLocator): Promise<DataPlaneDatabase | undefined> {
    this.cache.drop(locator);
    return this.find(locator);
  }

  /** `findRead`, from the store whatever is cached. */
  reloadRead(locator: DatabaseLocator): Promise<{ record: DataPlaneDatabase | undefined; at: number }> {
    this.cache.drop(locator);
    return this.findRead(locator);
  }

  /** Forgets everything; called after any local change to databases, groups or tokens. */
  invalidate(): void {
    this.generation++;
    this.cache.clear();
    for (const fn of this.invalidated) fn();
  }

  /** Calls `fn` at every `invalidate` (the shards keep caches of their own). */
  onInvalidate(fn: () => void): void {
    this.invalidated.push(fn);
  }
}
