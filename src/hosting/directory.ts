import type { DataPlaneCache, StoreAccess } from "../domain/core/ports.js";
import type { DatabaseLocator, DatabaseLookup, DataPlaneDatabase } from "../domain/data-access/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { DatabaseForDataPlane } from "../store/databases.js";

/**
 * How long a cached database record is used. With several processes on one store this is the most
 * a change made through another process (a rotation, a block, a size limit) takes to apply here.
 */
export const DIRECTORY_TTL_MS = 1000;

interface Entry {
  record: DataPlaneDatabase;
  at: number;
}

/**
 * The data plane's view of databases, cached because every SQL request needs one. Only found
 * databases are cached (a database created a moment ago is never hidden by a stale "not found"),
 * entries live at most `ttlMs` (so a change made by another process shows within that bound), and
 * every local change clears the cache at once.
 */
export class DatabaseDirectory implements DatabaseLookup, DataPlaneCache {
  private readonly entries = new Map<string, Entry>();
  private readonly paths = new Map<string, string>();
  private readonly invalidated: Array<() => void> = [];

  constructor(
    private readonly store: StoreAccess,
    private readonly ttlMs = DIRECTORY_TTL_MS,
    private readonly maxEntries = 50_000,
  ) {}

  /** The cached record, if fresh; no store access (the data plane's synchronous fast path). */
  peek(locator: DatabaseLocator, now = Date.now()): DataPlaneDatabase | undefined {
    const hit = this.entries.get(keyOf(locator));
    return hit && now - hit.at < this.ttlMs ? hit.record : undefined;
  }

  async find(locator: DatabaseLocator, now = Date.now()): Promise<DataPlaneDatabase | undefined> {
    const key = keyOf(locator);
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.record;
    const record = await this.store.read(async (r) => {
      const found = await r.databases.findForDataPlane(locator);
      if (!found) return undefined;
      const [placed, revoked] = await Promise.all([
        r.groups.locationsOf([found.group_id]),
        r.revokedDbTokens.activeFor(found.id, found.group_id, Math.floor(now / 1000)),
      ]);
      return { ...found, locations: placed.get(found.group_id) ?? [], revokedTokens: new Set(revoked) };
    });
    if (!record) {
      this.entries.delete(key);
      return undefined;
    }
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { record, at: now });
    return record;
  }

  /** File of a database's primary instance, remembered (building it is a path join per request). */
  pathOf(d: DatabaseForDataPlane, files: Pick<InstanceFiles, "path">): string {
    const key = `${d.primary_location}/${d.id}`;
    let p = this.paths.get(key);
    if (p === undefined) {
      if (this.paths.size >= this.maxEntries) this.paths.clear();
      p = files.path(d.primary_location, d.id);
      this.paths.set(key, p);
    }
    return p;
  }

  async groupExists(groupId: string): Promise<boolean> {
    return (await this.store.read((r) => r.groups.findById(groupId))) !== undefined;
  }

  reload(locator: DatabaseLocator): Promise<DataPlaneDatabase | undefined> {
    this.entries.delete(keyOf(locator));
    return this.find(locator);
  }

  /** Forgets everything; called after any local change to databases, groups or tokens. */
  invalidate(): void {
    this.entries.clear();
    for (const fn of this.invalidated) fn();
  }

  /** Calls `fn` at every `invalidate` (the shards keep caches of their own). */
  onInvalidate(fn: () => void): void {
    this.invalidated.push(fn);
  }
}

function keyOf(l: DatabaseLocator): string {
  if ("label" in l) return `l:${l.label}`;
  if ("id" in l) return `i:${l.id}`;
  return `n:${l.orgSlug}/${l.name}`;
}
