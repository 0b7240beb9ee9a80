import type { DataPlaneCache, StoreAccess } from "../domain/core/ports.js";
import type { DatabaseLocator, DatabaseLookup, DataPlaneDatabase } from "../domain/data-access/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { DatabaseForDataPlane } from "../store/databases.js";
import { DirectoryCache, locatorKey } from "./directory-cache.js";

/**
 * How long a cached database record is used. With several processes on one store this is the most
 * a change made through another process (a rotation, a block, a size limit) takes to apply here.
 */
export const DIRECTORY_TTL_MS = 1000;

// A record cached but out of date is used once the store takes STORE_WAIT_MS to answer, so reads
// go on through an outage (writes still need the primary's lease, which the store grants).
import { MAX_STALE_MS, STORE_WAIT_MS } from "../lib/outage-cache.js";

/**
 * The data plane's view of databases, cached because every SQL request needs one. Only found
 * databases are cached (a database created a moment ago is never hidden by a stale "not found"),
 * entries live at most `ttlMs` (so a change made by another process shows within that bound), and
 * every local change clears the cache at once. While the store is out of reach, the last record
 * read (up to MAX_STALE_MS old) is used instead of waiting: see STORE_WAIT_MS.
 */
export class DatabaseDirectory implements DatabaseLookup, DataPlaneCache {
  private readonly cache: DirectoryCache;
  private readonly invalidated: Array<() => void> = [];
  /** Counts `invalidate` calls: a read begun before one must not be kept after it. */
  private generation = 0;
  /** Store reads under way for records that are cached but out of date, by locator. */
  private readonly pending = new Map<
    string,
    { read: Promise<{ record: DataPlaneDatabase | undefined; at: number }>; since: number }
  >();

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
    const stale = this.cache.stale(locator);
    if (!stale || now - stale.at > MAX_STALE_MS) return this.readStore(locator, now);
    return this.readOrStale(locator, now, stale);
  }

  /**
   * A fresh read when the store answers in time; otherwise the record last read, handed out at once
   * to every request while a read is still pending (only the first waits), and when the read fails.
   */
  private async readOrStale(
    locator: DatabaseLocator,
    now: number,
    stale: { record: DataPlaneDatabase; at: number },
  ): Promise<{ record: DataPlaneDatabase | undefined; at: number }> {
    const key = locatorKey(locator);
    let pending = this.pending.get(key);
    if (pending && now - pending.since > STORE_WAIT_MS) return stale;
    if (!pending) {
      const read = this.readStore(locator, now).finally(() => this.pending.delete(key));
      read.catch(() => {});
      pending = { read, since: now };
      this.pending.set(key, pending);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), STORE_WAIT_MS);
    });
    try {
      const got = await Promise.race([pending.read, late]);
      return got === "late" ? stale : got;
    } catch {
      return stale;
    } finally {
      clearTimeout(timer);
    }
  }

  private async readStore(
    locator: DatabaseLocator,
    now: number,
  ): Promise<{ record: DataPlaneDatabase | undefined; at: number }> {
    const generation = this.generation;
    const record = await this.store.read(async (r) => {
      const found = await r.databases.findForDataPlane(locator);
      if (!found) return undefined;
      const [placed, revoked, jwks] = await Promise.all([
        r.groups.locationsOf([found.group_id]),
        r.revokedDbTokens.activeFor(found.id, found.group_id, Math.floor(now / 1000)),
        r.orgJwks.list(found.org_id),
      ]);
      return {
        ...found,
        locations: placed.get(found.group_id) ?? [],
        revokedTokens: new Set(revoked),
        jwks: jwks.map(({ name, url, issuer, audience }) => ({ name, url, issuer, audience })),
      };
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
