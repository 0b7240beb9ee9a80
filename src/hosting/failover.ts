import { existsSync } from "node:fs";
import type { DataPlaneCache } from "../domain/core/ports.js";
import type { InstanceFiles } from "../engine/instance-files.js";
import { promoteReplicaFile, type ReplicaPosition, replicaPosition } from "../engine/promote-replica.js";
import type { Logger } from "../lib/logger.js";
import type { Store } from "../store/store.js";
import type { DatabaseRuntimes } from "./database-runtimes.js";
import type { PrimaryLeases } from "./primary-leases.js";

/** What a failover reaches on this node. */
export interface FailoverParts {
  store: Store;
  files: Pick<InstanceFiles, "path">;
  runtimes: Pick<DatabaseRuntimes, "position" | "remove">;
  replicas: {
    release(dbId: string, location: string): Promise<void>;
    ensure(dbId: string, location: string): Promise<void>;
    rebuild(dbId: string, location: string): void;
    forgetProgress(dbId: string): void;
  };
  directory: DataPlaneCache;
  log: Logger;
  nodeId: string;
  holds(location: string): boolean;
  leaseMs: number;
  leases(): PrimaryLeases;
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
  constructor(private readonly parts: FailoverParts) {}

  /**
   * Makes `location` (held here) the primary of the group: takes the next epoch of the lease,
   * valid from the old lease's end, moves the group's primary location, turns this node's replicas
   * there into primaries, and resolves once writes are accepted.
   */
  async promote(groupId: string, location: string, reason: string): Promise<FailoverResult> {
    const { store, log, leaseMs } = this.parts;
    const sentAt = performance.now();
    const now = Date.now();
    const dbIds = await store.read((r) => r.databases.idsInGroup(groupId));
    const positions: Record<string, ReplicaPosition | undefined> = {};
    const plan = await store.write(async (r) => {
      await r.groups.lock(groupId);
      const group = await r.groups.findById(groupId);
      if (!group || group.primary_location === location) return undefined;
      const old = await r.leases.find(groupId);
      const validFrom = Math.max(now, old ? Date.parse(old.expires_at) : now);
      const lease = {
        group_id: groupId,
        epoch: (old?.epoch ?? 0) + 1,
        location,
        node_id: this.parts.nodeId,
        valid_from: new Date(validFrom).toISOString(),
        expires_at: new Date(validFrom + leaseMs).toISOString(),
        promoted_from: null as string | null,
      };
      for (const dbId of dbIds) positions[dbId] = replicaPosition(this.parts.files.path(location, dbId));
      lease.promoted_from = JSON.stringify(positions);
      if (old) await r.leases.replace(lease);
      else await r.leases.insert(lease);
      await r.leases.setPrimaryLocation(groupId, location);
      return { lease, from: group.primary_location, locations: await r.groups.locationsOf([groupId]) };
    });
    if (!plan) throw new Error(`location ${location} is already the group's primary`);
    const { lease } = plan;
    this.parts.leases().adopt(groupId, lease.epoch, Date.parse(lease.valid_from), sentAt);
    this.parts.directory.invalidate();
    for (const dbId of dbIds) await this.promoteFile(dbId, location);
    // Other replicas this node keeps of the group followed the old primary's history.
    const others = (plan.locations.get(groupId) ?? []).filter((l) => l !== location && this.parts.holds(l));
    for (const dbId of dbIds) for (const l of others) this.parts.replicas.rebuild(dbId, l);
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
    return { epoch: lease.epoch, validFrom: lease.valid_from, databases: dbIds.length };
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

  private async promoteFile(dbId: string, location: string): Promise<void> {
    const path = this.parts.files.path(location, dbId);
    await this.parts.replicas.release(dbId, location);
    this.parts.replicas.forgetProgress(dbId);
    if (!existsSync(path)) {
      this.parts.log.error(
        { dbId, location },
        "failover: no replica here to promote; the database has no primary file",
      );
      return;
    }
    promoteReplicaFile(path);
  }
}
