import type { Executor } from "./executor.js";
import type { PrimaryLeasesTable } from "./schema.js";

export type LeaseRow = PrimaryLeasesTable;

/** Finding leases, and the groups a node must lease or may take over. */
function leaseReads(ex: Executor) {
  const { db } = ex;
  return {
    find: (groupId: string) =>
      db.selectFrom("primary_leases").selectAll().where("group_id", "=", groupId).executeTakeFirst(),
    /**
     * Groups whose primary location is one of `locations`, with their lease if any: what a node
     * holding those locations must keep leased.
     */
    primariesIn: async (locations: readonly string[]) => {
      if (locations.length === 0) return [];
      return db
        .selectFrom("groups")
        .leftJoin("primary_leases", "primary_leases.group_id", "groups.id")
        .select([
          "groups.id as group_id",
          "groups.primary_location",
          "primary_leases.epoch",
          "primary_leases.location",
          "primary_leases.node_id",
          "primary_leases.valid_from",
          "primary_leases.expires_at",
          "primary_leases.standbys",
        ])
        .where("groups.primary_location", "in", [...locations])
        .execute();
    },
    /** Groups with a location among `locations` that isn't their primary: failover candidates. */
    replicaGroupsIn: async (locations: readonly string[]) => {
      if (locations.length === 0) return [];
      return db
        .selectFrom("group_locations")
        .innerJoin("groups", "groups.id", "group_locations.group_id")
        .leftJoin("primary_leases", "primary_leases.group_id", "groups.id")
        .select([
          "groups.id as group_id",
          "group_locations.location as candidate",
          "groups.primary_location",
          "primary_leases.expires_at",
          "primary_leases.standbys",
        ])
        .where("group_locations.location", "in", [...locations])
        .whereRef("group_locations.location", "<>", "groups.primary_location")
        .orderBy("group_locations.position")
        .execute();
    },
  };
}

/** Taking, renewing and moving leases. */
function leaseWrites(ex: Executor) {
  const { db } = ex;
  return {
    insert: (row: LeaseRow) =>
      db
        .insertInto("primary_leases")
        .values(row)
        .onConflict((c) => c.doNothing())
        .execute(),
    /** Extends a lease this node holds at `epoch`; false when the epoch moved on (another took over). */
    renew: async (groupId: string, epoch: number, nodeId: string, expiresAt: string) => {
      const r = await db
        .updateTable("primary_leases")
        .set({ expires_at: expiresAt })
        .where("group_id", "=", groupId)
        .where("epoch", "=", epoch)
        .where("node_id", "=", nodeId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    /**
     * Extends, in one statement, every lease `nodeId` holds for a location among `locations`;
     * returns the groups and epochs renewed (a lease another node took over is not among them).
     */
    renewAll: async (nodeId: string, locations: readonly string[], expiresAt: string) => {
      if (locations.length === 0) return [];
      return db
        .updateTable("primary_leases")
        .set({ expires_at: expiresAt })
        .where("node_id", "=", nodeId)
        .where("location", "in", [...locations])
        .returning(["group_id", "epoch", "valid_from"])
        .execute();
    },
    /** Replaces the lease with the next epoch's (the caller holds the group's row lock). */
    replace: (row: LeaseRow) =>
      db
        .updateTable("primary_leases")
        .set({
          epoch: row.epoch,
          location: row.location,
          node_id: row.node_id,
          valid_from: row.valid_from,
          expires_at: row.expires_at,
          promoted_from: row.promoted_from,
          standbys: row.standbys,
        })
        .where("group_id", "=", row.group_id)
        .execute(),
    /**
     * Sets the standbys of the lease `nodeId` holds at `epoch`; false when that lease is gone (a
     * failover moved the epoch on), in which case nothing changed.
     */
    setStandbys: async (groupId: string, epoch: number, nodeId: string, standbys: readonly string[]) => {
      const r = await db
        .updateTable("primary_leases")
        .set({ standbys: JSON.stringify([...standbys].sort()) })
        .where("group_id", "=", groupId)
        .where("epoch", "=", epoch)
        .where("node_id", "=", nodeId)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    setPrimaryLocation: (groupId: string, location: string) =>
      db.updateTable("groups").set({ primary_location: location }).where("id", "=", groupId).execute(),
  };
}

/** The leases of groups' primaries (migration 0012). Times are ISO strings, as everywhere. */
export function leasesRepo(ex: Executor) {
  return { ...leaseReads(ex), ...leaseWrites(ex) };
}

export type LeasesRepo = ReturnType<typeof leasesRepo>;
