import type { Logger } from "../lib/logger.js";
import type { ReplicaPeers } from "./replication-parts.js";

/** What polling the replicas of other nodes' primaries reaches of the replication manager. */
export interface RemotePollParts {
  peers: ReplicaPeers;
  log: Logger;
  /** Replicas here whose primary is on another node, by `dbId/location`, and where they follow from. */
  followers: ReadonlyMap<string, { url: string; primary: string | undefined }>;
  elsewhere(location: string): boolean;
  rebuild(dbId: string, location: string): void;
  adopt(dbId: string, location: string): Promise<void>;
  pull(dbId: string, location: string): void;
}

/**
 * Each replica following another node's primary pulls; one whose primary moved (the node came
 * back at another address, or another location took over) is pointed at where it is now first.
 */
export function pollRemoteFollowers(p: RemotePollParts): void {
  for (const [k, was] of p.followers) {
    const [dbId, location] = k.split("/") as [string, string];
    Promise.all([p.peers.primaryUrl(dbId), p.peers.primaryLocation(dbId)])
      .then(async ([url, primary]) => {
        // Let go of meanwhile (its file is becoming the primary's) or set up again: not this poll's.
        if (p.followers.get(k) !== was) return;
        // Its own location is now the primary: this node's failover is turning the file into
        // the primary's (one database after another); rebuilding it would delete what it had
        // applied before the promotion reaches it.
        if (primary === location) return;
        if (primary !== was.primary) {
          // Another location took over: its history isn't the one this replica followed.
          p.log.info({ dbId, location, primary }, "the primary moved; building the replica again from it");
          return p.rebuild(dbId, location);
        }
        // Its node is down (no holder): keep the address known, not this node's; look again next poll.
        if (url === undefined && primary !== undefined && p.elsewhere(primary)) return;
        if (url !== was.url) await p.adopt(dbId, location);
        p.pull(dbId, location);
      })
      .catch((e: unknown) => p.log.debug({ err: e, dbId, location }, "could not find a primary"));
  }
}
