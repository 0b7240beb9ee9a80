import type { DatabaseLocator, DataPlaneDatabase } from "../domain/data-access/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import type { DatabaseForDataPlane } from "../store/databases.js";

/**
 * One key per way of naming a database (the same database named two ways is cached twice).
 * Built anew each time: a request's locator is looked up once where it is read (see
 * shards/resolver.ts), so remembering keys by locator object (a WeakMap entry per request) cost
 * more than it saved.
 */
export function locatorKey(l: DatabaseLocator): string {
  return "label" in l ? `l:${l.label}` : "id" in l ? `i:${l.id}` : `n:${l.orgSlug}/${l.name}`;
}

/**
 * What a directory remembers between requests: database records, each used for `ttlMs` after it
 * was read, and primary instances' file paths. Both are bounded: past `maxEntries` they start
 * over, so a client naming databases without end can't grow memory.
 */
export class DirectoryCache {
  private readonly records = new Map<string, { record: DataPlaneDatabase; at: number }>();
  private readonly paths = new Map<string, { location: string; path: string }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The record, if read less than `ttlMs` before `now`. */
  peek(locator: DatabaseLocator, now = Date.now()): DataPlaneDatabase | undefined {
    const hit = this.records.get(locatorKey(locator));
    return hit && now - hit.at < this.ttlMs ? hit.record : undefined;
  }

  /** The record with when it was read, if read less than `ttlMs` before `now`. */
  entry(locator: DatabaseLocator, now = Date.now()): { record: DataPlaneDatabase; at: number } | undefined {
    const hit = this.records.get(locatorKey(locator));
    return hit && now - hit.at < this.ttlMs ? hit : undefined;
  }

  /** The record with when it was read, however old (see DatabaseDirectory's stale reads). */
  stale(locator: DatabaseLocator): { record: DataPlaneDatabase; at: number } | undefined {
    return this.records.get(locatorKey(locator));
  }

  /** Keeps what was read at `at`; a database not found is forgotten, never cached as missing. */
  put(locator: DatabaseLocator, record: DataPlaneDatabase | undefined, at: number): void {
    const key = locatorKey(locator);
    if (!record) {
      this.records.delete(key);
      return;
    }
    if (this.records.size >= this.maxEntries) this.records.clear();
    this.records.set(key, { record, at });
  }

  drop(locator: DatabaseLocator): void {
    this.records.delete(locatorKey(locator));
  }

  /** Forgets every record (paths stay: a database's primary file is named by its location and id). */
  clear(): void {
    this.records.clear();
  }

  /**
   * File of a database's primary instance, remembered (building it is a path join per request).
   * Found by the record's id, whose hash the engine keeps with the string (the record is cached),
   * where a key built per request would be hashed anew each time.
   */
  pathOf(d: DatabaseForDataPlane, files: Pick<InstanceFiles, "path">): string {
    const hit = this.paths.get(d.id);
    if (hit !== undefined && hit.location === d.primary_location) return hit.path;
    if (this.paths.size >= this.maxEntries) this.paths.clear();
    const path = files.path(d.primary_location, d.id);
    this.paths.set(d.id, { location: d.primary_location, path });
    return path;
  }
}
