import { existsSync } from "node:fs";
import { type ReplicaPort, ReplicaUnavailableError } from "../domain/core/ports.js";
import { mintReplicationToken } from "../domain/data-access/db-tokens.js";
import type { DatabaseKey } from "../engine/encryption/keys.js";
import { frameLogFolder } from "../engine/frame-log-meta.js";
import type { CommitEvent } from "../engine/hosted-databases.js";
import { dbIdOfPath } from "../engine/instance-files.js";
import { isSqliteFailure } from "../engine/sqlite-errors.js";
import { Throttle } from "../lib/throttle.js";
import { EncryptedReplicas } from "./encrypted-replicas.js";
import { LocationWorker, type ReplicaRows, type ReplicaSpec } from "./location-worker-client.js";
import { ReplicaProgress } from "./progress.js";
import { ReleasedReplicas, ReplicaAtPrimaryError, ReplicationClosedError } from "./released.js";
import { pollRemoteFollowers, type RemotePollParts } from "./remote-poll.js";
import type { ReplicationParts } from "./replication-parts.js";
import { ReplicaSeeding } from "./seeding.js";
import { syncFailureAction } from "./sync-failure.js";

export type { ReplicaPeers, ReplicationParts } from "./replication-parts.js";

const key = (dbId: string, location: string) => `${dbId}/${location}`;
/** How long after a replica is built its primary's writers may still not know it exists (the data plane's record cache, and a little more). */
const CACHE_SETTLE_MS = 1500;

/**
 * Replicas of every database in every non-primary location of its group. Each location's
 * replicas live in that location's worker; each replica follows its primary through the sync
 * protocol at a URL (on one node, this process's own), so a location on another machine later is
 * the same path. The primary tells replicas to pull after each commit; a replica's progress is
 * what it asks the primary for next, which gives both "caught up" and the lag.
 */
export class ReplicationManager implements ReplicaPort {
  private readonly workers = new Map<string, LocationWorker>();
  /** Replica locations of each database, as far as this node knows them. */
  private readonly placements = new Map<string, Set<string>>();
  private readonly progress = new ReplicaProgress();
  /** Locations whose replicas are paused: they report down and don't pull until resumed. */
  private readonly paused = new Set<string>();
  /** Replicas here whose primary is on another node: nobody here tells them about commits. */
  private readonly remoteFollowers = new Map<string, { url: string; primary: string | undefined }>();
  private poller: NodeJS.Timeout | undefined;
  /** Set by `close`: work still on its way (a rebuild, a build) must not start a worker again. */
  private closed = false;
  readonly lag = this.progress.lag;
  /** Replicas of encrypted databases: followed without the key, on this thread. */
  private readonly encrypted = new EncryptedReplicas();
  /** One warning per replica per minute while its reads fall back to the primary. */
  private readonly unavailableLog = new Throttle(60_000);
  /** Replicas of other nodes' primaries started from the backup bucket instead of a full copy. */
  private readonly seeding: ReplicaSeeding;
  /** Replicas whose files became primaries here: work on them begun before stops. */
  private readonly released: ReleasedReplicas;

  constructor(
    private readonly deps: ReplicationParts,
    /**
     * Base URL replicas sync from (known once the server listens): of the process serving the
     * database `dbId` when given (replicas of this node's primaries go straight there), else of
     * this node.
     */
    private readonly sourceUrl: (dbId?: string) => string,
  ) {
    this.seeding = new ReplicaSeeding(deps.seeder, deps.log);
    this.released = new ReleasedReplicas(deps.directory, deps.log, () => this.closed);
    if (deps.peers) {
      // Catches up after a broken link or a missed notification (the primary's node was down).
      const poll: RemotePollParts = {
        peers: deps.peers,
        log: deps.log,
        followers: this.remoteFollowers,
        elsewhere: (l) => this.elsewhere(l),
        rebuild: (dbId, l) => this.rebuild(dbId, l),
        adopt: (dbId, l) => this.adopt(dbId, l),
        pull: (dbId, l) => this.pull(dbId, l),
      };
      this.poller = setInterval(() => pollRemoteFollowers(poll), deps.remotePollMs ?? 1000);
      this.poller.unref();
    }
  }

  /** Replica reads: a read statement on the replica of `dbId` in `location` (`dbKey` if encrypted). */
  query(
    dbId: string,
    location: string,
    sql: string,
    args: unknown,
    dbKey?: DatabaseKey,
  ): Promise<ReplicaRows> {
    const k = key(dbId, location);
    const read = this.encrypted.has(k)
      ? new Promise<ReplicaRows>((resolve) => resolve(this.encrypted.query(k, sql, args, dbKey)))
      : this.worker(location).query(k, sql, args);
    return read.catch((e: unknown) => {
      // The statement's own failures reach the client; the replica's are the primary's to cover.
      if (isSqliteFailure(e) || (e as { code?: string }).code === "REPLICA_READ_ONLY") throw e;
      const reason = e instanceof Error ? e.message : String(e);
      if (this.unavailableLog.due(k))
        this.deps.log.warn({ dbId, location, reason }, "replica can't answer reads; reading at the primary");
      throw new ReplicaUnavailableError(location, reason);
    });
  }

  async ensure(dbId: string, location: string): Promise<void> {
    // Another node keeps that location's replicas: it builds this one when told.
    if (this.elsewhere(location)) {
      this.deps.peers?.notify(dbId, location);
      return;
    }
    await this.released.run(dbId, location, (since) => this.build(dbId, location, since));
  }

  private async build(dbId: string, location: string, since: number): Promise<void> {
    // A primary's file still (this node hasn't seen its lease go): its demotion makes it a replica.
    if (existsSync(frameLogFolder(this.deps.files.path(location, dbId))))
      throw new ReplicaAtPrimaryError(dbId, location);
    const { spec, encrypted } = await this.spec(dbId, location);
    const k = key(dbId, location);
    this.released.check(dbId, location, since);
    if (await this.seeding.seed(k, dbId, spec, { encrypted, remote: this.remoteFollowers.has(k) })) {
      this.released.check(dbId, location, since);
      await this.register(k, location, spec, encrypted);
      this.place(dbId, location);
      // Only the frames after the seed come from the primary; one out of reach is caught up later.
      await this.follow(dbId, location).catch((e: unknown) => this.syncFailed(dbId, location, e));
      return;
    }
    if (encrypted) await this.encrypted.ensure(k, spec);
    else await this.worker(location).open(k, spec);
    this.place(dbId, location);
    this.pullAgainSoon(dbId, location);
  }

  /**
   * A primary's writers learn that its group has a new location from their cached record (up to
   * a second old): a commit made meanwhile told no replica. A new replica pulls once more after
   * that second, so it never waits for the next commit to get it.
   */
  private pullAgainSoon(dbId: string, location: string): void {
    const timer = setTimeout(() => {
      if (this.placements.get(dbId)?.has(location)) this.pull(dbId, location);
    }, CACHE_SETTLE_MS);
    timer.unref();
  }

  /** Closes the replica readers opened with a database's key (the key left memory). */
  closeReaders(dbId: string): void {
    this.encrypted.closeReaders(dbId);
  }

  /**
   * Hands a replica that exists on disk (from an earlier run) to its location's worker without
   * contacting the primary: the worker opens it on first use. `catchUp` then has it pull.
   */
  async adopt(dbId: string, location: string): Promise<void> {
    await this.released.run(dbId, location, async (since) => {
      const { spec, encrypted } = await this.spec(dbId, location);
      this.released.check(dbId, location, since);
      await this.register(key(dbId, location), location, spec, encrypted);
      this.place(dbId, location);
    });
  }

  private async register(k: string, location: string, spec: ReplicaSpec, encrypted: boolean): Promise<void> {
    if (encrypted) this.encrypted.adopt(k, spec);
    else await this.worker(location).register(k, spec);
  }

  /** A replica pulls what its primary committed while it wasn't following (a stop, a crash). */
  catchUp(dbId: string, location: string): void {
    if (this.placements.get(dbId)?.has(location)) {
      this.pull(dbId, location);
      return;
    }
    // Told by another node about a database it made after this node's location joined the group.
    this.ensure(dbId, location).catch((e: unknown) =>
      this.deps.log.warn({ err: e, dbId, location }, "could not build a replica of another node's primary"),
    );
  }

  async drop(dbId: string, location: string): Promise<void> {
    // Told, the other node finds the database or the location gone and drops its replica.
    if (this.elsewhere(location)) {
      this.deps.peers?.notify(dbId, location);
      return;
    }
    this.placements.get(dbId)?.delete(location);
    this.remoteFollowers.delete(key(dbId, location));
    this.progress.forget(dbId, location);
    // A pull stuck on a hung primary would hold the drop behind it.
    this.deps.relay?.cut(dbId, location);
    this.seeding.forget(key(dbId, location));
    if (this.encrypted.has(key(dbId, location))) await this.encrypted.drop(key(dbId, location));
    else await this.worker(location).drop(key(dbId, location), this.deps.files.path(location, dbId));
  }

  /** Lets go of a replica whose file becomes a primary (a failover here): closed, files kept. */
  async release(dbId: string, location: string): Promise<void> {
    const k = key(dbId, location);
    this.released.release(dbId, location);
    // A promotion never waits on a pull from the old primary (its machine may hang).
    this.deps.relay?.cut(dbId, location);
    this.placements.get(dbId)?.delete(location);
    this.progress.forget(dbId, location);
    this.remoteFollowers.delete(k);
    if (this.encrypted.has(k)) await this.encrypted.release(k);
    await this.worker(location).release(k);
  }

  /** Forgets what replicas of `dbId` reported, when its primary moved (indexes start again). */
  forgetProgress(dbId: string): void {
    this.progress.forgetDatabase(dbId);
  }

  /** `up` while the location serves: not paused, its worker healthy, and knowing every replica placed. */
  status(location: string): "up" | "down" {
    if (this.paused.has(location)) return "down";
    const w = this.workers.get(location);
    if (w && !w.up) return "down";
    for (const [dbId, locations] of this.placements) {
      const k = key(dbId, location);
      if (locations.has(location) && !w?.knows(k) && !this.encrypted.has(k)) return "down";
    }
    return "up";
  }

  /** The primary served frames after `index` to a replica: it has everything up to `index`. */
  observe(dbId: string, location: string, index: number): void {
    this.progress.observe(dbId, location, index);
  }

  /** Resolves true once the replica has everything up to `index`, false after `timeoutMs`. */
  waitFor(dbId: string, location: string, index: number, timeoutMs: number): Promise<boolean> {
    if (this.progress.has(dbId, location, index)) return Promise.resolve(true);
    const waiting = this.progress.wait(dbId, location, index, timeoutMs);
    this.pull(dbId, location);
    return waiting;
  }

  /** Has a replica here pull now; resolves once a pull begun after this call has finished. */
  pullNow(dbId: string, location: string): Promise<void> {
    return this.follow(dbId, location);
  }

  /** Waits until every replica of `dbIds` in `location` has what their primaries have committed now. */
  async waitCaughtUp(dbIds: readonly string[], location: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (const dbId of dbIds) {
      const target = await this.primaryIndex(dbId);
      if (target === undefined) continue;
      if (!(await this.waitFor(dbId, location, target, Math.max(1, deadline - Date.now())))) return false;
    }
    return true;
  }

  /**
   * Every replica this node places, with the time of the oldest commit of its primary it lacks
   * (undefined: it has them all). Only commits made while this node tracked it count.
   */
  *behind(): Generator<{ dbId: string; location: string; since: number | undefined }> {
    for (const [dbId, locations] of this.placements)
      for (const location of locations)
        yield { dbId, location, since: this.progress.oldestMissing(dbId, location) };
  }

  /** After a commit on a primary: every replica of it pulls now. */
  onCommit(e: CommitEvent): void {
    const dbId = dbIdOfPath(e.path);
    const here = this.placements.get(dbId) ?? new Set<string>();
    const locations = [...here, ...(this.deps.peers?.remoteLocations(dbId) ?? [])];
    if (locations.length === 0) return;
    this.progress.committed(dbId, e.index, e.at, locations.length);
    for (const location of locations) this.pull(dbId, location);
  }

  /** Stops one location's replicas, as if the location went away (maintenance, tests). */
  async pauseLocation(location: string): Promise<void> {
    this.paused.add(location);
    await this.workers.get(location)?.stop();
  }

  /** Brings a paused location back: each of its replicas pulls what it missed. */
  resumeLocation(location: string): void {
    if (!this.paused.delete(location)) return;
    for (const [dbId, locations] of this.placements) if (locations.has(location)) this.pull(dbId, location);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
    this.encrypted.close();
    this.progress.close();
  }

  private pull(dbId: string, location: string): void {
    if (this.paused.has(location)) return;
    if (this.elsewhere(location)) {
      // Another node keeps this replica: tell it; its sync requests to us report its progress.
      this.deps.peers?.notify(dbId, location);
      return;
    }
    this.follow(dbId, location).catch((e: unknown) => this.syncFailed(dbId, location, e));
  }

  private syncFailed(dbId: string, location: string, e: unknown): void {
    const k = key(dbId, location);
    const action = syncFailureAction(e, this.encrypted.has(k));
    if (action === "rebuild") {
      this.deps.log.warn({ dbId, location }, "replica fell behind the kept history; rebuilding it");
      this.rebuild(dbId, location);
      return;
    }
    const primary = this.remoteFollowers.get(k)?.primary;
    if (action === "recheck" && primary) this.deps.peers?.recheck(primary);
    if (action !== "none")
      this.deps.log[action === "quiet" ? "debug" : "warn"](
        { err: e, dbId, location },
        "replica could not sync",
      );
  }

  /**
   * Pulls what the primary has; a replica seeded while its primary was out of reach is checked
   * first, against where the primary is now, which the follower is then given too (`adopt`).
   */
  private async follow(dbId: string, location: string): Promise<void> {
    const k = key(dbId, location);
    const spec = async () => {
      await this.adopt(dbId, location);
      return (await this.spec(dbId, location)).spec;
    };
    if (!(await this.seeding.mayPull(k, spec, () => this.rebuild(dbId, location)))) return;
    if (this.encrypted.has(k)) await this.encrypted.pull(k);
    else await this.worker(location).sync(k);
  }

  /** Drops a replica and builds it again from its primary (one that follows another history). */
  rebuild(dbId: string, location: string): void {
    this.seeding.skipNext(key(dbId, location));
    // Asked before a promotion here (a pull that failed, a poll), it must not delete the primary's files.
    this.released
      .run(dbId, location, async (since) => {
        await this.released.stillReplica(dbId, location, since);
        await this.drop(dbId, location);
        if (this.elsewhere(location)) return;
        await this.build(dbId, location, since);
      })
      .catch((e: unknown) => this.deps.log.error({ err: e, dbId, location }, "could not rebuild a replica"));
  }

  private elsewhere(location: string): boolean {
    return this.deps.peers !== undefined && !this.deps.peers.holds(location);
  }

  /** Where a replica lives and follows from; `encrypted` replicas are kept by keyless followers. */
  private async spec(dbId: string, location: string): Promise<{ spec: ReplicaSpec; encrypted: boolean }> {
    const remote = await this.deps.peers?.primaryUrl(dbId);
    if (remote) {
      const primary = await this.deps.peers?.primaryLocation(dbId);
      this.remoteFollowers.set(key(dbId, location), { url: remote, primary });
    } else this.remoteFollowers.delete(key(dbId, location));
    const db = await this.deps.directory.find({ id: dbId });
    if (db?.primary_location === location) throw new ReplicaAtPrimaryError(dbId, location);
    // Another node's primary is reached through this node's relay, which limits how long a pull may hang.
    const relayed = remote && this.deps.relay?.register(dbId, location, `${remote}/replication/${dbId}`);
    const spec = {
      path: this.deps.files.path(location, dbId),
      syncUrl: relayed
        ? `${this.sourceUrl()}${relayed}`
        : `${remote ?? this.sourceUrl(dbId)}/replication/${dbId}`,
      token: await mintReplicationToken(this.deps, dbId, location),
    };
    return { spec, encrypted: (db?.encryption_cipher ?? null) !== null };
  }

  private place(dbId: string, location: string): void {
    let set = this.placements.get(dbId);
    if (!set) {
      set = new Set();
      this.placements.set(dbId, set);
    }
    set.add(location);
  }

  private async primaryIndex(dbId: string): Promise<number | undefined> {
    const db = await this.deps.directory.find({ id: dbId });
    if (!db) return undefined;
    return (await this.deps.primaries.position(db.primary_location, dbId)).index;
  }

  private worker(location: string): LocationWorker {
    if (this.closed) throw new ReplicationClosedError();
    let w = this.workers.get(location);
    if (!w) {
      w = new LocationWorker(location, this.deps.log);
      this.workers.set(location, w);
    }
    return w;
  }
}
