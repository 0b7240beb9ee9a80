import type { Logger } from "../lib/logger.js";
import type { Store } from "../store/store.js";

/**
 * How long recording a standby's drop may take before the writes waiting on it are answered
 * "unconfirmed" (the store is out of reach); the drop is retried on each round after that.
 */
const DROP_WAIT_MS = 2000;
/** How long a replica joining as a standby may take to catch up before the try is given up. */
const JOIN_WAIT_MS = 30_000;

/** What happened to a group's standbys, for the metric. */
export type StandbyEvent = "joined" | "dropped" | "unconfirmed";

export interface StandbyParts {
  store: Store;
  log: Logger;
  nodeId: string;
  /** How long a write's answer waits for each standby (`SHOAL_STANDBY_CONFIRM_MS`, above 0). */
  confirmMs: number;
  /**
   * A replica dropped (or that failed a write while joining) isn't brought in again for this long,
   * so one that keeps falling behind doesn't stall writes at every round (10 s when unset).
   */
  rejoinAfterMs?: number;
  replicas: {
    waitFor(dbId: string, location: string, index: number, timeoutMs: number): Promise<boolean>;
    waitCaughtUp(dbIds: readonly string[], location: string, timeoutMs: number): Promise<boolean>;
  };
  /** The group's locations held by other nodes, and its databases. */
  group(groupId: string): Promise<{ remote: string[]; dbIds: string[] }>;
  /** The epoch of the group's lease this node holds now, if any. */
  epochOf(groupId: string): number | undefined;
  /** The groups whose leases this node holds now. */
  heldGroups(): Iterable<string>;
  /** Membership or isolation changed: the leases' views (shards mirror them) go out at once. */
  announce(): void;
  counted?(event: StandbyEvent): void;
}

/** A group's standbys as the node's status shows them. */
export interface GroupStandbyState {
  groupId: string;
  standbys: string[];
  joining: string[];
  isolated: boolean;
}

/** One group's standbys as the lease holder keeps them. */
interface GroupStandbys {
  epoch: number;
  /**
   * Waited for by every write: what the store lists, and what is about to be listed. A standby
   * leaves only once a store write without it succeeded, so this always includes the store's list.
   */
  members: Set<string>;
  /** Catching up, not recorded: writes wait for them too, but a write they fail drops them freely. */
  joining: Set<string>;
  /** Members to leave the list at the next store write. */
  dropping: Set<string>;
  /** When each location dropped lately may join again (ms since the epoch). */
  notBefore: Map<string, number>;
  /** The last store write didn't succeed: the next round writes the list again. */
  dirty: boolean;
  /** Store writes of the list, one at a time, so the last one written is the newest list. */
  writing: Promise<unknown>;
  /** A write queued behind `writing` that hasn't started: later callers share it. */
  queued: Promise<boolean> | undefined;
}

/**
 * Synchronous standbys: a write at a primary is acknowledged only once every standby location
 * (a replica on another node) has it, so the replica an automatic failover promotes holds every
 * acknowledged write. The store lists the standbys on the lease (only those may be promoted,
 * see failover.ts); only the holder changes that list, and what it waits for in memory always
 * includes what the store lists:
 * - a replica joins once it has caught up while writes already waited for it, and only then is it
 *   recorded;
 * - a standby that doesn't confirm a write within `confirmMs` is dropped: recorded first, then no
 *   longer waited for. Should the store be out of reach too, the write is answered "unconfirmed"
 *   (outcome unknown: a failover to that standby would discard it) and the group is isolated here:
 *   it serves nothing until the drop is recorded, so no client reads what may vanish.
 */
export class SyncStandbys {
  private readonly groups = new Map<string, GroupStandbys>();
  private readonly isolated = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();
  /** Joins under way (each replica catching up), which rounds don't wait for. */
  private readonly joins = new Set<Promise<void>>();

  constructor(private readonly parts: StandbyParts) {}

  /**
   * The lease of `groupId` held at `epoch`, with the standbys the store lists (read at the
   * renewal). A new epoch starts from the store's list; within one epoch this node's list rules.
   */
  adopt(groupId: string, epoch: number, stored: string | null): void {
    if (this.groups.get(groupId)?.epoch === epoch) return;
    const members = new Set<string>(stored ? (JSON.parse(stored) as string[]) : []);
    this.groups.set(groupId, {
      epoch,
      members,
      joining: new Set(),
      dropping: new Set(),
      notBefore: new Map(),
      dirty: false,
      writing: Promise.resolve(),
      queued: undefined,
    });
    this.isolated.delete(groupId);
    this.parts.announce();
  }

  /** The lease of `groupId` is no longer held here. */
  forget(groupId: string): void {
    if (!this.groups.delete(groupId)) return;
    this.isolated.delete(groupId);
    this.parts.announce();
  }

  /** Whether writes to the group's primaries wait for standbys. */
  confirms(groupId: string): boolean {
    const g = this.groups.get(groupId);
    return g !== undefined && g.members.size + g.joining.size > 0;
  }

  /** Whether the group's primaries serve nothing here until a standby's drop is recorded. */
  isIsolated(groupId: string): boolean {
    return this.isolated.has(groupId);
  }

  /** Each group's standbys, those catching up, and whether it is isolated (for the node's status). */
  list(): GroupStandbyState[] {
    return [...this.groups].map(([groupId, g]) => ({
      groupId,
      standbys: [...g.members].sort(),
      joining: [...g.joining].sort(),
      isolated: this.isolated.has(groupId),
    }));
  }

  /**
   * Resolves true once every standby of the group has the database `dbId` up to `index` (a commit
   * just made), false when one didn't and its drop couldn't be recorded: the write's outcome is
   * then unknown.
   */
  async confirm(groupId: string, dbId: string, index: number): Promise<boolean> {
    const g = this.groups.get(groupId);
    // The lease went after the commit was made (a failover took it over): whether the new primary
    // has this write, no one here can say.
    if (!g) return false;
    const waits = [...g.members, ...g.joining].map(async (location) => {
      if (!g.dropping.has(location)) {
        if (await this.parts.replicas.waitFor(dbId, location, index, this.parts.confirmMs)) return true;
        if (g.joining.delete(location)) {
          this.holdOff(g, location);
          this.parts.announce();
          return true;
        }
        if (!g.members.has(location)) return true;
      }
      return this.dropMember(groupId, g, location);
    });
    const ok = (await Promise.all(waits)).every(Boolean);
    if (!ok) this.parts.counted?.("unconfirmed");
    return ok && !this.isolated.has(groupId);
  }

  /** Records that `location` is no longer a standby; until that succeeds the group is isolated. */
  private async dropMember(groupId: string, g: GroupStandbys, location: string): Promise<boolean> {
    g.dropping.add(location);
    const recorded = await withinMs(this.record(groupId, g), DROP_WAIT_MS);
    if (recorded || !g.dropping.has(location)) return true;
    if (!this.isolated.has(groupId) && this.groups.get(groupId) === g) {
      this.isolated.add(groupId);
      this.parts.log.error(
        { group: groupId, standbys: [...g.dropping] },
        "a standby didn't confirm writes and the store can't be reached to drop it: the group's primaries here serve nothing until it can",
      );
      this.parts.announce();
    }
    return false;
  }

  /** Writes the group's list (members, less those dropping) to its lease, after earlier writes. */
  private record(groupId: string, g: GroupStandbys): Promise<boolean> {
    if (g.queued) return g.queued;
    const run = g.writing.then(async () => {
      g.queued = undefined;
      const dropping = [...g.dropping];
      const list = [...g.members].filter((l) => !g.dropping.has(l));
      const { store, nodeId } = this.parts;
      const ok = await store
        .write((r) => r.leases.setStandbys(groupId, g.epoch, nodeId, list))
        .catch(() => false);
      g.dirty = !ok;
      if (ok) this.recorded(groupId, g, dropping);
      return ok;
    });
    g.queued = run;
    g.writing = run.catch(() => undefined);
    return run;
  }

  private recorded(groupId: string, g: GroupStandbys, dropped: string[]): void {
    for (const l of dropped) {
      g.members.delete(l);
      g.dropping.delete(l);
      this.holdOff(g, l);
      this.parts.counted?.("dropped");
    }
    if (dropped.length > 0)
      this.parts.log.warn(
        { group: groupId, dropped, standbys: [...g.members] },
        "standby dropped: it didn't confirm a write in time (or left the group); automatic failover won't promote it until it catches up",
      );
    if (g.dropping.size === 0 && this.isolated.delete(groupId))
      this.parts.log.warn(
        { group: groupId },
        "standby drop recorded: the group's primaries here serve again",
      );
    this.parts.announce();
  }

  private holdOff(g: GroupStandbys, location: string): void {
    g.notBefore.set(location, Date.now() + (this.parts.rejoinAfterMs ?? 10_000));
  }

  /** Checks membership every `everyMs`; a round stuck on the store isn't joined by more. */
  start(everyMs: number): void {
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.round = this.tick().finally(() => {
        busy = false;
      });
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.round;
  }

  /** Resolves once the joins begun so far have ended, joined or not. */
  async joinsSettled(): Promise<void> {
    await Promise.allSettled([...this.joins]);
  }

  /**
   * One round over the groups held here: a list not recorded yet is written again, locations gone
   * from a group are let go, and remote replicas that aren't standbys are brought in.
   */
  async tick(): Promise<void> {
    for (const groupId of this.parts.heldGroups()) {
      const g = this.groups.get(groupId);
      if (!g || this.parts.epochOf(groupId) !== g.epoch) continue;
      try {
        if (g.dirty || g.dropping.size > 0) {
          await withinMs(this.record(groupId, g), DROP_WAIT_MS);
          continue;
        }
        await this.reconcile(groupId, g);
      } catch (e) {
        this.parts.log.warn({ err: e, group: groupId }, "could not check a group's standbys; will retry");
      }
    }
  }

  private async reconcile(groupId: string, g: GroupStandbys): Promise<void> {
    const { remote, dbIds } = await this.parts.group(groupId);
    const gone = [...g.members].filter((l) => !remote.includes(l));
    if (gone.length > 0) {
      for (const l of gone) g.dropping.add(l);
      await withinMs(this.record(groupId, g), DROP_WAIT_MS);
    }
    const now = Date.now();
    for (const location of remote) {
      if (g.members.has(location) || g.joining.has(location)) continue;
      if ((g.notBefore.get(location) ?? 0) > now) continue;
      g.notBefore.delete(location);
      // Not waited for here: one replica catching up mustn't hold the other groups' rounds.
      const joining = this.join(groupId, g, location, dbIds).catch((e: unknown) => {
        this.parts.announce();
        this.parts.log.warn(
          { err: e, group: groupId, location },
          "a replica could not join as a standby; will retry",
        );
      });
      this.joins.add(joining);
      void joining.finally(() => this.joins.delete(joining));
    }
  }

  /**
   * Writes wait for `location` from now on; once it has every commit made before that, it becomes
   * a member and is recorded. A write it fails before that takes it out again, unrecorded.
   */
  private async join(groupId: string, g: GroupStandbys, location: string, dbIds: string[]): Promise<void> {
    g.joining.add(location);
    // Shards learn of it before they are asked where their databases stand: a commit they
    // answer after that waits for it, one made before is in the position they answer.
    this.parts.announce();
    let caughtUp = false;
    try {
      caughtUp = await this.parts.replicas.waitCaughtUp(dbIds, location, JOIN_WAIT_MS);
    } finally {
      // Still joining unless a write it failed took it out meanwhile.
      if (!g.joining.delete(location)) caughtUp = false;
    }
    if (!caughtUp || this.groups.get(groupId) !== g) {
      this.parts.announce();
      return;
    }
    g.members.add(location);
    if (await withinMs(this.record(groupId, g), DROP_WAIT_MS)) {
      this.parts.counted?.("joined");
      this.parts.log.info({ group: groupId, location }, "standby joined: it has every acknowledged write");
    }
  }
}

/** `p`'s value, or false once `ms` have passed (the promise goes on). */
function withinMs(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
