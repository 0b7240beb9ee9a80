import type { NodeAddress } from "../domain/cluster/holders.js";
import type { Placement, ReplicaPort, ReplicaRows } from "../domain/core/ports.js";
import type { DatabaseLocator, DatabaseLookup, DataPlaneDatabase } from "../domain/data-access/ports.js";
import type { DatabaseKey } from "../engine/encryption/keys.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { DIRECTORY_TTL_MS } from "../hosting/directory.js";
import { DirectoryCache, locatorKey } from "../hosting/directory-cache.js";
import type { DatabaseForDataPlane } from "../store/databases.js";
import type { Remote } from "./channel.js";
import type { LeaseView, PrimaryMethods } from "./protocol.js";

/**
 * The node's parts as a shard reaches them: through its primary process, which holds the store,
 * the replicas and the leases. What the data plane reads on every request (database records,
 * placement, leases) is kept here, so a request needs no round trip: records for as long as the
 * node's own directory keeps them, placement and leases as the primary sends them on.
 */

/** Database records, read by the primary from the store and cached here as the node's directory caches them. */
export class RemoteDirectory implements DatabaseLookup {
  private readonly cache: DirectoryCache;
  private readonly inFlight = new Map<string, Promise<DataPlaneDatabase | undefined>>();

  constructor(
    private readonly primary: Remote<PrimaryMethods>,
    ttlMs = DIRECTORY_TTL_MS,
    maxEntries = 50_000,
  ) {
    this.cache = new DirectoryCache(ttlMs, maxEntries);
  }

  peek(locator: DatabaseLocator, now = Date.now()): DataPlaneDatabase | undefined {
    return this.cache.peek(locator, now);
  }

  find(locator: DatabaseLocator): Promise<DataPlaneDatabase | undefined> {
    const hit = this.peek(locator);
    if (hit) return Promise.resolve(hit);
    const key = locatorKey(locator);
    let asked = this.inFlight.get(key);
    if (!asked) {
      // Requests arriving together for one database share one read.
      asked = this.ask(locator, false).then(
        (record) => {
          this.inFlight.delete(key);
          return record;
        },
        (e: unknown) => {
          this.inFlight.delete(key);
          throw e;
        },
      );
      this.inFlight.set(key, asked);
    }
    return asked;
  }

  /** A record read from the store now, whatever the node has cached. */
  reload(locator: DatabaseLocator): Promise<DataPlaneDatabase | undefined> {
    this.cache.drop(locator);
    return this.ask(locator, true);
  }

  /** Asks the node, and keeps the answer until its store read is a TTL old. */
  private async ask(locator: DatabaseLocator, fresh: boolean): Promise<DataPlaneDatabase | undefined> {
    const { record, at } = await this.primary.find(locator, fresh);
    this.cache.put(locator, record, at);
    return record;
  }

  pathOf(d: DatabaseForDataPlane, files: Pick<InstanceFiles, "path">): string {
    return this.cache.pathOf(d, files);
  }

  groupExists(groupId: string): Promise<boolean> {
    return this.primary.groupExists(groupId);
  }

  /** Forgets every record (the node changed databases, groups or tokens). */
  invalidate(): void {
    this.cache.clear();
  }
}

/** The locations this node holds, as the primary last said. */
export class PlacementMirror implements Placement {
  private held: Set<string>;

  constructor(
    readonly nodeId: string,
    held: readonly string[],
  ) {
    this.held = new Set(held);
  }

  holds(location: string): boolean {
    return this.held.has(location);
  }

  update(held: readonly string[]): void {
    this.held = new Set(held);
  }
}

/**
 * The leases of this node's primaries, as the primary process last renewed them: the write
 * fence of the data plane, read on every write. A lease ends here when its `until` passes, and
 * the primary only moves `until` forward after a renewal the store accepted, so this copy never
 * lets a write through that the primary process itself would refuse.
 */
export class LeaseMirror {
  private leases = new Map<string, LeaseView>();

  constructor(private readonly primary: Remote<PrimaryMethods>) {}

  update(leases: readonly LeaseView[]): void {
    this.leases = new Map(leases.map((l) => [l.groupId, l]));
  }

  mayWrite(groupId: string): boolean {
    const l = this.leases.get(groupId);
    const now = Date.now();
    return l !== undefined && now >= l.validFrom && now < l.until;
  }

  async acquire(groupId: string): Promise<boolean> {
    if (this.mayWrite(groupId)) return true;
    const l = await this.primary.leaseAcquire(groupId);
    if (l) this.leases.set(groupId, l);
    return this.mayWrite(groupId);
  }

  isolated(groupId: string): boolean {
    return this.leases.get(groupId)?.isolated ?? false;
  }

  confirms(groupId: string): boolean {
    return this.leases.get(groupId)?.confirms ?? false;
  }

  /** The primary process waits for the standbys (it hears their progress). */
  confirm(groupId: string, dbId: string, index: number): Promise<boolean> {
    return this.primary.standbyConfirm(groupId, dbId, index);
  }
}

/** Which node holds a location: asked of the primary, kept as long as its own cache keeps it. */
export class RemoteHolders {
  private readonly cache = new Map<string, { holder: NodeAddress | undefined; at: number }>();

  constructor(
    private readonly primary: Remote<PrimaryMethods>,
    private readonly ttlMs = DIRECTORY_TTL_MS,
  ) {}

  of(location: string): NodeAddress | undefined | Promise<NodeAddress | undefined> {
    const hit = this.cache.get(location);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.holder;
    const at = Date.now();
    return this.primary.holderOf(location).then((holder) => {
      this.cache.set(location, { holder, at });
      return holder;
    });
  }
}

/**
 * The replicas of the node's databases, which its primary process keeps: the data plane reads on
 * them and waits for them through it. What only the node itself does with replicas (building,
 * dropping) is never asked of a shard.
 */
export function remoteReplicas(
  primary: Remote<PrimaryMethods>,
  observed: (dbId: string, location: string, index: number) => void,
): ReplicaPort {
  const notHere = (what: string) => () => Promise.reject(new Error(`a shard doesn't ${what} replicas`));
  return {
    status: () => "up",
    waitCaughtUp: notHere("wait for"),
    ensure: notHere("build"),
    adopt: notHere("adopt"),
    catchUp: () => {},
    drop: notHere("drop"),
    observe: observed,
    waitFor: (dbId, location, index, timeoutMs) => primary.replicaWaitFor(dbId, location, index, timeoutMs),
    pullNow: (dbId, location) => primary.replicaPullNow(dbId, location),
    query: (dbId: string, location: string, sql: string, args: unknown, key?: DatabaseKey) =>
      primary.replicaQuery(dbId, location, sql, args, key) as Promise<ReplicaRows>,
  };
}
