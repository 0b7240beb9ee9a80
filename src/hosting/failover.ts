import { existsSync } from "node:fs";
import { coreErrors } from "../domain/core/errors.js";
import type { DataPlaneCache } from "../domain/core/ports.js";
import { groupErrors } from "../domain/groups/errors.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { promoteReplicaFile, type ReplicaPosition, unpromoteReplicaFile } from "../engine/promote-replica.js";
import type { Logger } from "../lib/logger.js";
import type { Store } from "../store/store.js";
import type { DatabaseRuntimes } from "./database-runtimes.js";
import { mayPromote, type PrimaryLeases } from "./primary-leases.js";

/** What a failover reaches on this node. */
export interface FailoverParts {
  store: Store;
  files: Pick<InstanceFiles, "path">;
  runtimes: Pick<DatabaseRuntimes, "position" | "remove">;
  replicas: {
    release(dbId: string, location: string): Promise<void>;
    ensure(dbId: string, location: string): Promise<void>;
    adopt(dbId: string, location: string): Promise<void>;
    rebuild(dbId: string, location: string): void;
    forgetProgress(dbId: string): void;
  };
  directory: DataPlaneCache;
  log: Logger;
  nodeId: string;
  holds(location: string): boolean;
  leaseMs: number;
  leases(): Pick<PrimaryLeases, "adopt" | "freshStandbys">;
}

/** What a failover did. */
export interface FailoverResult {
  epoch: number;
  /** When the new primary started accepting writes (the old lease's end). */
  validFrom: string;
  databases: number;
}

/**
 * Moving a group's primary to another of its locations, on the node holding that location, and
 * the old primary's side: its files become replicas of the new one.
 */
export class Failover {
  private readonly promoting = new Map<string, Promise<FailoverResult>>();

  constructor(private readonly parts: FailoverParts) {}

  /**
   * Makes `location` (held here) the primary of the group: takes the next epoch of the lease,
   * valid from the old lease's end, moves the group's primary location, turns this node's replicas
   * there into primaries, and resolves once writes are accepted.
   */
  async promote(
    groupId: string,
    location: string,
    reason: string,
    opts: { standbyOnly: boolean } = { standbyOnly: false },
  ): Promise<FailoverResult> {
    // One promotion of a group at a time on this node: an administrator's call and the automatic
    // failover may meet, and each turns the same files into a primary's.
    const before = this.promoting.get(groupId) ?? Promise.resolve();
    const run = before
      .catch(() => undefined)
      .then(() => this.promoteNow(groupId, location, reason, opts.standbyOnly));
    this.promoting.set(groupId, run);
    try {
      return await run;
    } finally {
      if (this.promoting.get(groupId) === run) this.promoting.delete(groupId);
    }
  }

  private async promoteNow(
    groupId: string,
    location: string,
    reason: string,
    standbyOnly: boolean,
  ): Promise<FailoverResult> {
    const { store, log } = this.parts;
    const sentAt = performance.now();
    const found = await store.read(async (r) => ({
      group: await r.groups.findById(groupId),
      dbIds: await r.databases.idsInGroup(groupId),
    }));
    if (!found.group) throw coreErrors.groupNotFound();
    const { name } = found.group;
    if (found.group.primary_location === location) throw groupErrors.alreadyPrimary(location, name);
    // The files become a primary's before the store names this location the primary. From that
    // moment this node's data plane may open them as the primary's (a read, or a write under the
    // lease it can then take), and a connection open while its WAL is replaced writes into a file
    // no one else sees: acknowledged writes lost.
    const positions: Record<string, ReplicaPosition | undefined> = {};
    let plan: Awaited<ReturnType<Failover["takeLease"]>>;
    try {
      for (const dbId of found.dbIds) positions[dbId] = await this.promoteFile(dbId, location);
      plan = await this.takeLease(groupId, location, positions, standbyOnly);
    } catch (e) {
      await this.unpromote(found.dbIds, positions, location);
      throw e;
    }
    // Deleted meanwhile (the files go with it), or made the primary here meanwhile (then the files
    // are rightly the primary's).
    if (plan === "gone") throw coreErrors.groupNotFound();
    if (plan === "already") throw groupErrors.alreadyPrimary(location, name);
    if (plan === "not-standby") throw groupErrors.notStandby(location, name);
    const { lease } = plan;
    this.parts.leases().adopt(groupId, lease.epoch, Date.parse(lease.valid_from), sentAt, lease.standbys);
    this.parts.directory.invalidate();
    // Other replicas this node keeps of the group followed the old primary's history.
    const others = (plan.locations.get(groupId) ?? []).filter((l) => l !== location && this.parts.holds(l));
    for (const dbId of found.dbIds) for (const l of others) this.parts.replicas.rebuild(dbId, l);
    const wait = Date.parse(lease.valid_from) - Date.now();
    log.warn(
      {
        group: groupId,
        from: plan.from,
        to: location,
        epoch: lease.epoch,
        reason,
        waitMs: Math.max(0, wait),
      },
      "failover: this node's location is now the group's primary; writes start when the old lease ends",
    );
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    return { epoch: lease.epoch, validFrom: lease.valid_from, databases: found.dbIds.length };
  }

  /**
   * The next epoch of the group's lease, for this node and `location`, valid from the old lease's
   * end; or why not. With `standbyOnly` (an automatic failover), only a location the old holder
   * listed as a standby is promoted, checked under the group's lock: the old holder may have
   * dropped it since the candidate was chosen.
   */
  private takeLease(
    groupId: string,
    location: string,
    positions: Record<string, ReplicaPosition | undefined>,
    standbyOnly: boolean,
  ) {
    const now = Date.now();
    return this.parts.store.write(async (r) => {
      await r.groups.lock(groupId);
      const group = await r.groups.findById(groupId);
      if (!group) return "gone" as const;
      if (group.primary_location === location) return "already" as const;
      const old = await r.leases.find(groupId);
      if (standbyOnly && !mayPromote(old?.standbys, location)) return "not-standby" as const;
      const validFrom = Math.max(now, old ? Date.parse(old.expires_at) : now);
      const lease = {
        group_id: groupId,
        epoch: (old?.epoch ?? 0) + 1,
        location,
        node_id: this.parts.nodeId,
        valid_from: new Date(validFrom).toISOString(),
        expires_at: new Date(validFrom + this.parts.leaseMs).toISOString(),
        promoted_from: JSON.stringify(positions),
        standbys: this.parts.leases().freshStandbys(),
      };
      if (old) await r.leases.replace(lease);
      else await r.leases.insert(lease);
      await r.leases.setPrimaryLocation(groupId, location);
      return { lease, from: group.primary_location, locations: await r.groups.locationsOf([groupId]) };
    });
  }

  /**
   * The promotion couldn't be finished (the store failed, or a file couldn't be converted): the
   * store still names the old primary, so the files go back to being its replicas. Each promoted
   * one goes on from where it stood, with the state it had (its WAL was only folded in); one that
   * never synced is copied again; one not reached yet is followed again as it is. Nothing is
   * deleted: the old primary may be down, and these files hold all the database has.
   */
  private async unpromote(
    dbIds: readonly string[],
    positions: Record<string, ReplicaPosition | undefined>,
    location: string,
  ): Promise<void> {
    const { files, replicas, log } = this.parts;
    for (const dbId of dbIds) {
      const path = files.path(location, dbId);
      const position = positions[dbId];
      if (dbId in positions && !position) {
        replicas.rebuild(dbId, location);
        continue;
      }
      if (position && existsSync(path)) unpromoteReplicaFile(path, position);
      await replicas
        .adopt(dbId, location)
        .catch((e: unknown) =>
          log.error({ err: e, dbId, location }, "failover: could not follow the old primary again"),
        );
    }
  }

  /**
   * The primary of a group moved away from this node (seen running, or at start): each of its
   * databases' primaries here is thrown away and built again as a replica of the new primary, after
   * saying in the log how far this node's history went past what the new primary took over.
   */
  async demote(groupId: string, replicasToo = true): Promise<void> {
    const { store, files, log } = this.parts;
    // Replicas built below must follow the new primary: no cached record may still name this node.
    this.parts.directory.invalidate();
    const found = await store.read(async (r) => ({
      dbIds: await r.databases.idsInGroup(groupId),
      locations: (await r.groups.locationsOf([groupId])).get(groupId) ?? [],
      group: await r.groups.findById(groupId),
      lease: await r.leases.find(groupId),
    }));
    if (!found.group) return;
    const promotedFrom = JSON.parse(found.lease?.promoted_from ?? "{}") as Record<
      string,
      ReplicaPosition | null
    >;
    for (const location of found.locations) {
      if (location === found.group.primary_location || !this.parts.holds(location)) continue;
      for (const dbId of found.dbIds) {
        const path = files.path(location, dbId);
        this.parts.replicas.forgetProgress(dbId);
        if (!existsSync(`${path}.log`)) {
          // A replica: it followed the old primary's history, so it starts again from the new one's.
          if (replicasToo) this.parts.replicas.rebuild(dbId, location);
          continue;
        }
        const mine = await this.parts.runtimes.position(location, dbId);
        const theirs = promotedFrom[dbId] ?? undefined;
        const same = theirs && theirs.generation === mine.generation && theirs.frame === mine.frame;
        log.warn(
          {
            dbId,
            location,
            newPrimary: found.group.primary_location,
            epoch: found.lease?.epoch,
            here: { generation: mine.generation, frame: mine.frame },
            promotedAt: theirs ?? "unknown",
          },
          same
            ? "failover: this former primary's history ends where the new primary took over; rebuilding it as a replica"
            : "failover: discarding this former primary's frames after the point the new primary took over (writes it acknowledged that never replicated); rebuilding it as a replica",
        );
        await this.parts.runtimes.remove(location, dbId);
        await this.parts.replicas
          .ensure(dbId, location)
          .catch((e: unknown) =>
            log.error({ err: e, dbId, location }, "could not rebuild a former primary as a replica"),
          );
      }
    }
    this.parts.directory.invalidate();
  }

  /**
   * At start, before anything is served: groups with a location held here whose primary is now
   * elsewhere but whose files here are still a primary's (the node was down during a failover).
   */
  async demoteFormerPrimaries(locations: readonly string[]): Promise<void> {
    const rows = await this.parts.store.read((r) => r.leases.replicaGroupsIn(locations));
    const groups = new Set(rows.map((r) => r.group_id));
    for (const groupId of groups) await this.demote(groupId, false);
  }

  /** Lets go of the replica of `dbId` in `location` and makes its file a primary's; where it stood. */
  private async promoteFile(dbId: string, location: string): Promise<ReplicaPosition | undefined> {
    const path = this.parts.files.path(location, dbId);
    await this.parts.replicas.release(dbId, location);
    this.parts.replicas.forgetProgress(dbId);
    if (!existsSync(path)) {
      this.parts.log.error(
        { dbId, location },
        "failover: no replica here to promote; the database has no primary file",
      );
      return undefined;
    }
    return promoteReplicaFile(path);
  }
}
