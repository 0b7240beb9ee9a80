import { signJwt, verifyJwt } from "../lib/jwt.js";
import type { Logger } from "../lib/logger.js";
import { OutageTolerantCache } from "../lib/outage-cache.js";
import type { SigningKey } from "../lib/signing-keys.js";
import type { Clock } from "../lib/time.js";
import type { Store } from "../store/store.js";

/** How long a node-to-node token is accepted: it is minted for each call, so a minute is plenty. */
const NODE_TOKEN_TTL_S = 60;
/** How long a location's holder is remembered before the store is asked again. */
const HOLDER_TTL_MS = 2_000;
/** The least time between two store reads of a holder that stopped answering. */
const RECHECK_AFTER_MS = 500;
/** Path of the call a primary's node makes to have another node's replica pull now. */
export const NOTIFY_PATH = "/notify";

/** The database and location part of the data plane's view a peer needs. */
interface DatabaseView {
  primary_location: string;
  locations: readonly string[];
}

export interface NodePeerParts {
  store: Pick<Store, "read">;
  /** The cluster's shared signing key (the db-tokens key every node must have; see shared-key.ts). */
  key: SigningKey;
  clock: Clock;
  log: Logger;
  nodeId: string;
  holds(location: string): boolean;
  /** The cached record of a database, if any (no store access). */
  peek(dbId: string): DatabaseView | undefined;
  find(dbId: string): Promise<DatabaseView | undefined>;
}

/**
 * This node's view of the other nodes holding locations: where a location's files are served
 * (for replicas following a primary there, and writes forwarded to it), and the node-to-node
 * call that tells a replica on another node to pull now. Node-to-node calls carry a short-lived
 * token signed with the cluster's shared key, never a tenant's token.
 */
export class NodePeers {
  /** Each location's holder's URL; while the store is out of reach, the last one read (ADR 0022). */
  private readonly holders = new OutageTolerantCache<string | undefined>(HOLDER_TTL_MS);

  get nodeId(): string {
    return this.parts.nodeId;
  }

  /** Notifications in flight per replica, and whether another is due after it. */
  private readonly inFlight = new Map<string, boolean>();
  /** The last record seen of each database that committed here (its group's locations). */
  private readonly views = new Map<string, DatabaseView>();

  constructor(private readonly parts: NodePeerParts) {}

  holds(location: string): boolean {
    return this.parts.holds(location);
  }

  /** Base URL of the node holding `location` (undefined: this node, or no node). */
  async urlOf(location: string): Promise<string | undefined> {
    if (this.parts.holds(location)) return undefined;
    return this.holders.get(location, async () => {
      const holder = await this.parts.store.read((r) => r.nodes.holderOf(location));
      return holder?.url.replace(/\/+$/, "");
    });
  }

  /**
   * Drops the remembered holder of `location` so the next lookup reads the store: its node stopped
   * answering, and may be back at another address. Not more than once per half second, however
   * many replicas of it fail at once.
   */
  recheck(location: string): void {
    this.holders.forget(location, RECHECK_AFTER_MS);
  }

  async primaryLocation(dbId: string): Promise<string | undefined> {
    return (await this.parts.find(dbId))?.primary_location;
  }

  /** Base URL of the node serving a database's primary (undefined: this node). */
  async primaryUrl(dbId: string): Promise<string | undefined> {
    const db = await this.parts.find(dbId);
    if (!db) return undefined;
    return this.urlOf(db.primary_location);
  }

  /**
   * Locations of a database's group held by other nodes, without waiting: from the data plane's
   * cached record, or the last one seen here (refreshed in the background when the cache is cold).
   */
  remoteLocations(dbId: string): string[] {
    let db = this.parts.peek(dbId);
    if (db) this.views.set(dbId, db);
    else {
      db = this.views.get(dbId);
      void this.parts.find(dbId).then(
        (fresh) => {
          if (!fresh) return void this.views.delete(dbId);
          const first = !this.views.has(dbId);
          this.views.set(dbId, fresh);
          // Not known before: this commit's replicas weren't told, so tell them now.
          if (first) for (const l of this.elsewhere(fresh)) this.notify(dbId, l);
        },
        () => undefined,
      );
    }
    return db ? this.elsewhere(db) : [];
  }

  private elsewhere(db: DatabaseView): string[] {
    return db.locations.filter((l) => l !== db.primary_location && !this.parts.holds(l));
  }

  /**
   * Tells the node holding `location` that the database's primary committed: its replica pulls
   * now. Calls for one replica don't pile up: while one is in flight, one more follows it.
   * Failures are logged only; the replica's periodic pull catches up anyway.
   */
  notify(dbId: string, location: string): void {
    const k = `${dbId}/${location}`;
    if (this.inFlight.has(k)) {
      this.inFlight.set(k, true);
      return;
    }
    this.inFlight.set(k, false);
    void this.send(dbId, location)
      .catch((e: unknown) =>
        this.parts.log.debug({ err: e, dbId, location }, "could not tell a replica's node to pull"),
      )
      .finally(() => {
        const again = this.inFlight.get(k);
        this.inFlight.delete(k);
        if (again) this.notify(dbId, location);
      });
  }

  /** A token for one call to another node. */
  token(): Promise<string> {
    const now = Math.floor(this.parts.clock().getTime() / 1000);
    return signJwt(this.parts.key, { node: this.parts.nodeId, iat: now, exp: now + NODE_TOKEN_TTL_S });
  }

  /** The calling node's id when `token` is a valid node-to-node token; undefined otherwise. */
  async verify(token: string | undefined): Promise<string | undefined> {
    if (!token) return undefined;
    try {
      const claims = await verifyJwt(this.parts.key, token);
      return typeof claims.node === "string" && claims.exp !== undefined ? claims.node : undefined;
    } catch {
      return undefined;
    }
  }

  private async send(dbId: string, location: string): Promise<void> {
    const url = await this.urlOf(location);
    if (!url) return;
    const res = await fetch(`${url}/replication/${dbId}${NOTIFY_PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${await this.token()}`, "content-type": "application/json" },
      body: JSON.stringify({ location }),
      signal: AbortSignal.timeout(5_000),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`node at ${url} answered ${res.status}`);
  }
}
