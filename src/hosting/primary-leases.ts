import type { Logger } from "../lib/logger.js";
import { Throttle } from "../lib/throttle.js";
import type { Store } from "../store/store.js";
import type { GroupStandbyState, SyncStandbys } from "./standbys.js";

/**
 * How long a write waits for a lease round when this node holds no valid lease (at most a lease):
 * past it the write is refused with PRIMARY_NOT_LEASED rather than held while the store is out of
 * reach.
 */
const ACQUIRE_WAIT_MS = 2000;

/** A lease this node holds: its epoch, when writes may start (wall clock), until when (monotonic). */
interface Held {
  epoch: number;
  validFrom: number;
  until: number;
}

/** A lease as another process of the node mirrors it (src/shards): `until` in wall-clock ms. */
export interface LeaseView {
  groupId: string;
  validFrom: number;
  until: number;
  /** Writes wait for standbys before they are answered (hosting/standbys.ts). */
  confirms: boolean;
  /** The group's primaries here serve nothing until a standby's drop is recorded. */
  isolated: boolean;
}

export interface LeaseParts {
  store: Store;
  log: Logger;
  nodeId: string;
  /** Locations this node holds. */
  locations(): ReadonlySet<string>;
  /** How long a lease lasts without renewal (`SHOAL_PRIMARY_LEASE_MS`). */
  leaseMs: number;
  /** Fail over a group whose lease ran out this long ago (`SHOAL_FAILOVER_AFTER_MS`; 0: never). */
  failoverAfterMs: number;
  /** The primary of a group moved away from this node: its files here become replicas. */
  lost(groupId: string): Promise<void>;
  /** Makes `location` (held here) the group's primary; see hosting/failover.ts. */
  failover(
    groupId: string,
    location: string,
    reason: string,
    opts: { standbyOnly: boolean },
  ): Promise<unknown>;
}

/**
 * The leases of the primaries this node serves, kept in the store with a fencing epoch. A node
 * writes to a group's primary only while it holds the group's lease at the epoch in the store and
 * its own clock says the lease hasn't run out: it measures the lease from before the renewal was
 * sent, so it stops writing no later than the store's `expires_at` (clocks may drift apart by less
 * than the lease's length; keep them synchronised). A failover moves the epoch on and sets the new
 * lease's `valid_from` to the old one's expiry, so the two never overlap.
 */
export class PrimaryLeases {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private asked: Promise<void> | undefined;
  /** When the round `asked` began (performance.now()). */
  private askedAt = 0;
  private readonly watchers: Array<(views: LeaseView[]) => void> = [];
  private told: NodeJS.Immediate | undefined;
  private standbys: SyncStandbys | undefined;
  /** One warning per group a minute while its failover waits for a standby. */
  private readonly unpromotable = new Throttle(60_000);

  constructor(private readonly parts: LeaseParts) {}

  /** Writes wait for these standbys (`SHOAL_STANDBY_CONFIRM_MS` above 0); new leases list theirs. */
  useStandbys(standbys: SyncStandbys): void {
    this.standbys = standbys;
  }

  /** Calls `fn` with every lease held, after each change (a renewal round, a failover, a loss). */
  onChange(fn: (views: LeaseView[]) => void): void {
    this.watchers.push(fn);
  }

  /** The leases held now; `until` converted from this process's monotonic clock to the wall clock. */
  views(): LeaseView[] {
    const offset = Date.now() - performance.now();
    return [...this.held].map(([groupId, l]) => ({
      groupId,
      validFrom: l.validFrom,
      until: l.until + offset,
      confirms: this.standbys?.confirms(groupId) ?? false,
      isolated: this.standbys?.isIsolated(groupId) ?? false,
    }));
  }

  /** The groups whose leases this node holds, and the epoch of one. */
  heldGroups(): Iterable<string> {
    return this.held.keys();
  }

  epochOf(groupId: string): number | undefined {
    return this.held.get(groupId)?.epoch;
  }

  /** Whether the group's primaries here answer nothing now (see hosting/standbys.ts). */
  isolated(groupId: string): boolean {
    return this.standbys?.isIsolated(groupId) ?? false;
  }

  /** The standbys of every group held here (none when writes don't wait for standbys). */
  standbyList(): GroupStandbyState[] {
    return this.standbys?.list() ?? [];
  }

  /** Whether writes to the group's primaries wait for standbys. */
  confirms(groupId: string): boolean {
    return this.standbys?.confirms(groupId) ?? false;
  }

  /** Resolves true once the group's standbys have `dbId` up to `index`; false: outcome unknown. */
  confirm(groupId: string, dbId: string, index: number): Promise<boolean> {
    return this.standbys?.confirm(groupId, dbId, index) ?? Promise.resolve(true);
  }

  /**
   * Tells the watchers now rather than on the next turn: a standby that writes start waiting for
   * must reach the shards before they are asked where their databases stand.
   */
  announce(): void {
    if (this.told) clearImmediate(this.told);
    this.told = undefined;
    const views = this.views();
    for (const fn of this.watchers) fn(views);
  }

  /** The lease of one group as held now, if any. */
  view(groupId: string): LeaseView | undefined {
    return this.views().find((v) => v.groupId === groupId);
  }

  private changed(): void {
    if (this.watchers.length === 0 || this.told) return;
    this.told = setImmediate(() => {
      this.told = undefined;
      const views = this.views();
      for (const fn of this.watchers) fn(views);
    });
  }

  /** Whether this node may write to the primaries of group `groupId` now. */
  mayWrite(groupId: string): boolean {
    const l = this.held.get(groupId);
    return l !== undefined && Date.now() >= l.validFrom && performance.now() < l.until;
  }

  /**
   * Whether this node may write to the group's primaries, renewing the leases first when it holds
   * none for the group (a group created since the last round). Rounds asked for at once share one.
   */
  async acquire(groupId: string): Promise<boolean> {
    if (this.mayWrite(groupId)) return true;
    const wait = Math.min(this.parts.leaseMs, ACQUIRE_WAIT_MS);
    // A round already stuck that long: the store is out of reach, refuse at once.
    if (this.asked && performance.now() - this.askedAt > wait) return false;
    if (!this.asked) {
      this.askedAt = performance.now();
      this.asked = this.running
        .then(() => this.tick())
        .finally(() => {
          this.asked = undefined;
        });
      this.running = this.asked;
    }
    // A store that doesn't answer (a partition) must not hold the write: past a bound it is
    // refused, nothing written, while the round goes on for the next one.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, wait);
    });
    try {
      await Promise.race([this.asked, bound]);
    } finally {
      clearTimeout(timer);
    }
    return this.mayWrite(groupId);
  }

  /** When this node's lease of the group lets writes start (ms since the epoch), if it holds one. */
  validFrom(groupId: string): number | undefined {
    return this.held.get(groupId)?.validFrom;
  }

  /** Holds a lease (renewed, taken, or just written by a failover on this node) with its standbys. */
  adopt(groupId: string, epoch: number, validFrom: number, sentAt: number, standbys: string | null): void {
    this.held.set(groupId, { epoch, validFrom, until: sentAt + this.parts.leaseMs });
    this.standbys?.adopt(groupId, epoch, standbys);
    this.changed();
  }

  /** What a new lease lists as its standbys: none yet, or NULL when writes don't wait for any. */
  freshStandbys(): string | null {
    return this.standbys ? "[]" : null;
  }

  private letGo(groupId: string): boolean {
    if (!this.held.delete(groupId)) return false;
    this.standbys?.forget(groupId);
    this.changed();
    return true;
  }

  /** Takes and renews leases now, then every third of a lease; standbys are checked each second. */
  async start(): Promise<void> {
    await this.tick();
    this.standbys?.start(Math.min(1000, Math.max(100, Math.floor(this.parts.leaseMs / 3))));
    this.timer = setInterval(
      () => {
        this.running = this.running.then(() => this.tick());
      },
      Math.max(100, Math.floor(this.parts.leaseMs / 3)),
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.standbys?.stop();
    await this.running;
  }

  /** One round: renew or take the leases of this node's primaries, drop the others, fail over. */
  async tick(): Promise<void> {
    try {
      await this.renew();
      if (this.parts.failoverAfterMs > 0) await this.failoverExpired();
    } catch (e) {
      this.parts.log.warn({ err: e }, "could not renew the primaries' leases; will retry");
    }
  }

  private async renew(): Promise<void> {
    const { store, nodeId, leaseMs } = this.parts;
    const sentAt = performance.now();
    const now = Date.now();
    const expires = new Date(now + leaseMs).toISOString();
    const locations = [...this.parts.locations()];
    const heldBefore = new Set(this.held.keys());
    const rows = await store.read((r) => r.leases.primariesIn(locations));
    // One statement renews every lease this node holds, however many groups it serves.
    const renewed = await store.write((r) => r.leases.renewAll(nodeId, locations, expires));
    const ours = new Map(renewed.map((l) => [l.group_id, l]));
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.group_id);
      const mine = ours.get(row.group_id);
      if (mine && row.location === row.primary_location) {
        this.adopt(row.group_id, mine.epoch, Date.parse(mine.valid_from), sentAt, row.standbys);
        continue;
      }
      this.letGo(row.group_id);
      // No lease yet, or another's that ran out (the location changed hands): take the next epoch.
      if (row.epoch === null || Date.parse(row.expires_at!) < now) {
        await this.take(row.group_id, row.epoch, row.primary_location, now, sentAt);
      }
    }
    for (const groupId of [...this.held.keys()]) {
      if (seen.has(groupId)) continue;
      this.letGo(groupId);
    }
    // Every lease this round let go of is lost, however it went: its group left this node's
    // locations, or the renewal found another node's epoch (a failover committed between the two
    // reads above, so the group still looked like ours). The demotion reads the store afresh and
    // turns only files whose primary is elsewhere now into replicas.
    for (const groupId of heldBefore) {
      if (this.held.has(groupId)) continue;
      this.parts.log.warn(
        { group: groupId },
        "this node no longer holds a group's primary; its files here become replicas",
      );
      await this.parts.lost(groupId);
    }
  }

  /** Takes the next epoch of a group's lease (none yet, or the last one ran out). */
  private async take(groupId: string, epoch: number | null, location: string, now: number, sentAt: number) {
    const lease = {
      group_id: groupId,
      epoch: (epoch ?? 0) + 1,
      location,
      node_id: this.parts.nodeId,
      valid_from: new Date(now).toISOString(),
      expires_at: new Date(now + this.parts.leaseMs).toISOString(),
      promoted_from: null,
      standbys: this.freshStandbys(),
    };
    const took = await this.parts.store.write(async (r) => {
      await r.groups.lock(groupId);
      const current = await r.leases.find(groupId);
      if (!current) await r.leases.insert(lease);
      else if (current.epoch === epoch) await r.leases.replace(lease);
      else return false;
      return true;
    });
    if (took) this.adopt(groupId, lease.epoch, now, sentAt, lease.standbys);
  }

  /**
   * Automatic failover: a group whose primary's lease ran out long enough ago moves here, to a
   * location its last holder listed as a standby (one holding every write it acknowledged), or to
   * any of its locations when that holder kept no list (`SHOAL_STANDBY_CONFIRM_MS=0`).
   */
  private async failoverExpired(): Promise<void> {
    const now = Date.now();
    const rows = await this.parts.store.read((r) => r.leases.replicaGroupsIn([...this.parts.locations()]));
    const tried = new Set<string>();
    for (const row of rows) {
      if (tried.has(row.group_id) || row.expires_at === null) continue;
      const expiredFor = now - Date.parse(row.expires_at);
      if (expiredFor < this.parts.failoverAfterMs) continue;
      if (!mayPromote(row.standbys, row.candidate)) {
        if (this.unpromotable.due(row.group_id))
          this.parts.log.warn(
            { group: row.group_id, location: row.candidate, standbys: row.standbys },
            "automatic failover: the primary's lease ran out, but this location isn't a standby (it may lack acknowledged writes); not promoting it",
          );
        continue;
      }
      tried.add(row.group_id);
      const reason = `the primary's lease ran out ${Math.round(expiredFor / 1000)} s ago`;
      await this.parts
        .failover(row.group_id, row.candidate, reason, { standbyOnly: true })
        .catch((e: unknown) =>
          this.parts.log.error({ err: e, group: row.group_id }, "automatic failover failed"),
        );
    }
  }
}

/** Whether a failover that must lose nothing may promote `location`, given the lease's standbys. */
export function mayPromote(standbys: string | null | undefined, location: string): boolean {
  if (standbys === null || standbys === undefined) return true;
  return (JSON.parse(standbys) as string[]).includes(location);
}
