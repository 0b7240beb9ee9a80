import type { Executor } from "./executor.js";
import type { NodesTable } from "./schema.js";

/** A node with the locations it holds. */
export interface NodeWithLocations extends NodesTable {
  locations: string[];
}

/** Finding nodes and who holds a location. */
function nodeReads(ex: Executor) {
  const { db } = ex;
  return {
    find: (id: string) => db.selectFrom("nodes").selectAll().where("id", "=", id).executeTakeFirst(),
    /** The node holding a location, if any. */
    holderOf: async (location: string) =>
      db
        .selectFrom("node_locations")
        .innerJoin("nodes", "nodes.id", "node_locations.node_id")
        .select(["nodes.id", "nodes.url"])
        .where("node_locations.location", "=", location)
        .executeTakeFirst(),
    /** Locations a node holds, by code. */
    locationsOf: async (nodeId: string) =>
      (
        await db
          .selectFrom("node_locations")
          .select("location")
          .where("node_id", "=", nodeId)
          .orderBy("location")
          .execute()
      ).map((r) => r.location),
    /** Every node with the locations it holds, oldest first. */
    list: async (): Promise<NodeWithLocations[]> => {
      const [nodes, held] = await Promise.all([
        db.selectFrom("nodes").selectAll().orderBy("started_at").orderBy("id").execute(),
        db.selectFrom("node_locations").select(["location", "node_id"]).orderBy("location").execute(),
      ]);
      return nodes.map((n) => ({
        ...n,
        locations: held.filter((h) => h.node_id === n.id).map((h) => h.location),
      }));
    },
  };
}

/** Registering nodes, heartbeats, claiming locations and the shared key. */
function nodeWrites(ex: Executor) {
  const { db } = ex;
  return {
    /** Records a start: a new node, or a known one starting again (its locations stay with it). */
    register: (row: Omit<NodesTable, "stopped_at">) =>
      db
        .insertInto("nodes")
        .values({ ...row, stopped_at: null })
        .onConflict((oc) =>
          oc.column("id").doUpdateSet({
            url: row.url,
            version: row.version,
            started_at: row.started_at,
            heartbeat_at: row.heartbeat_at,
            stopped_at: null,
          }),
        )
        .execute(),
    /**
     * Refreshes this start's heartbeat. False when the row no longer belongs to this start (the
     * node was forgotten, or another process started with the same node id).
     */
    heartbeat: async (id: string, startedAt: string, at: string) => {
      const r = await db
        .updateTable("nodes")
        .set({ heartbeat_at: at })
        .where("id", "=", id)
        .where("started_at", "=", startedAt)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    markStopped: (id: string, startedAt: string, at: string) =>
      db
        .updateTable("nodes")
        .set({ stopped_at: at })
        .where("id", "=", id)
        .where("started_at", "=", startedAt)
        .execute(),
    /** Removes a node; the locations it held become free (cascade). */
    delete: async (id: string) => {
      const r = await db.deleteFrom("nodes").where("id", "=", id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
    /**
     * Takes each location no node holds. One row per location makes this safe under concurrency:
     * of two nodes inserting the same location, exactly one insert lands, the other does nothing.
     */
    claim: async (nodeId: string, locations: readonly string[], at: string) => {
      if (locations.length === 0) return;
      await db
        .insertInto("node_locations")
        // In one order everywhere: two claims locking rows in opposite orders could deadlock.
        .values([...locations].sort().map((location) => ({ location, node_id: nodeId, claimed_at: at })))
        .onConflict((oc) => oc.column("location").doNothing())
        .execute();
    },
    /** The fingerprint recorded for a key's purpose, recording `fingerprint` if there is none yet. */
    recordKey: async (purpose: string, fingerprint: string, at: string) => {
      await db
        .insertInto("cluster_keys")
        .values({ purpose, fingerprint, recorded_at: at })
        .onConflict((oc) => oc.column("purpose").doNothing())
        .execute();
      const row = await db
        .selectFrom("cluster_keys")
        .select("fingerprint")
        .where("purpose", "=", purpose)
        .executeTakeFirstOrThrow();
      return row.fingerprint;
    },
  };
}

export function nodesRepo(ex: Executor) {
  return { ...nodeReads(ex), ...nodeWrites(ex) };
}

export type NodesRepo = ReturnType<typeof nodesRepo>;
