import type { HolderLookup } from "../dataplane/forward/node-choice.js";
import type { DataPlanePeers } from "../dataplane/replica-notify.js";
import type { ReplicaPort } from "../domain/core/ports.js";
import type { DatabaseLookup } from "../domain/data-access/ports.js";
import type { CommitEvent } from "../engine/hosted-databases.js";
import type { HeldPrimaryList } from "../hosting/backup-source.js";
import type { DatabaseDirectory } from "../hosting/directory.js";
import type { PrimaryLeases } from "../hosting/primary-leases.js";
import type { UploadInstaller } from "../hosting/upload-installer.js";
import type { PrimaryMethods, ShardEvents } from "./protocol.js";
import type { Supervisor } from "./supervisor.js";

/** The node's parts a shard reaches through its primary process. */
export interface PrimaryAnswerParts {
  directory: Pick<DatabaseLookup, "groupExists"> & Pick<DatabaseDirectory, "findRead" | "reloadRead">;
  holders: HolderLookup;
  peers: DataPlanePeers;
  replicas: ReplicaPort & {
    onCommit(e: CommitEvent): void;
    closeReaders(dbId: string): void;
  };
  leases: Pick<PrimaryLeases, "acquire" | "view" | "confirm">;
  uploads: Pick<UploadInstaller, "install">;
  heldPrimaries: Pick<HeldPrimaryList, "current">;
  schema: { propagate(parentId: string): void };
}

/** What the node answers its shards. */
export function primaryAnswers(parts: PrimaryAnswerParts): PrimaryMethods {
  return {
    // A shard asks when its own cache has no fresh record. Every shard asks for the databases it
    // serves or sends on, each second: they share the node's read, each keeping it only until
    // that read is a TTL old (a store read per shard and database, each second, held a 16-shard
    // node's primary process busy).
    find: (locator, fresh) =>
      fresh ? parts.directory.reloadRead(locator) : parts.directory.findRead(locator),
    groupExists: (groupId) => parts.directory.groupExists(groupId),
    holderOf: async (location) => parts.holders.of(location),
    peerUrl: (location) => parts.peers.urlOf(location),
    verifyPeer: (token) => parts.peers.verify(token),
    replicaWaitFor: (dbId, location, index, timeoutMs) =>
      parts.replicas.waitFor(dbId, location, index, timeoutMs),
    replicaPullNow: (dbId, location) => parts.replicas.pullNow(dbId, location),
    replicaQuery: (dbId, location, sql, args, key) => parts.replicas.query(dbId, location, sql, args, key),
    standbyConfirm: (groupId, dbId, index) => parts.leases.confirm(groupId, dbId, index),
    async leaseAcquire(groupId) {
      await parts.leases.acquire(groupId);
      return parts.leases.view(groupId);
    },
    installUpload: (target, file) => parts.uploads.install(target, file),
    heldPrimaries: (fresh) => parts.heldPrimaries.current(fresh),
  };
}

/** What the node does with its shards' news: commits to replicate, replicas' progress, schema changes. */
export function followShards(supervisor: Supervisor, parts: PrimaryAnswerParts): void {
  supervisor.on("commits", (list) => {
    for (const e of list as ShardEvents["commits"]) parts.replicas.onCommit(e);
  });
  supervisor.on("observe", (d) => {
    const o = d as ShardEvents["observe"];
    parts.replicas.observe(o.dbId, o.location, o.index);
  });
  supervisor.on("schema", (d) => parts.schema.propagate((d as ShardEvents["schema"]).parentId));
  supervisor.on("keyForgotten", (d) => parts.replicas.closeReaders(d as ShardEvents["keyForgotten"]));
}
