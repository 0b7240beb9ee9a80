import { chooseNode, HERE, type NodeChoice, type NodeChoiceParts } from "../dataplane/forward/node-choice.js";
import { FORWARDED_BY } from "../dataplane/forward/proof.js";
import type { ResolvedRoute } from "../dataplane/resolved-route.js";
import type { DataRoute } from "../dataplane/routing.js";
import type { DatabaseLocator, DatabaseLookup, DataPlaneDatabase } from "../domain/data-access/ports.js";
import { ownerOf } from "./ownership.js";
import type { Target } from "./router.js";

const PRIMARY: Target = { kind: "primary" };

/**
 * Where a data-plane request goes, decided once in the first process that reads it: the
 * database's record, the node serving it, this node's process serving it, and whose turn it
 * takes there (its database's id, or what names it while it can't be found).
 */
export interface Resolution extends ResolvedRoute {
  process: Target;
  turn: string;
}

export interface ResolverParts extends NodeChoiceParts {
  directory: Pick<DatabaseLookup, "peek" | "find">;
  /** The node's shards. */
  count: number;
}

/** What of a request the resolver reads: its method, and the node that sent it on, if one did. */
export interface RequestFacts {
  method?: string | undefined;
  headers?: Record<string, string | string[] | undefined>;
}

/**
 * Node-to-node replication traffic the primary process serves itself: another node telling a
 * replica here to pull, and this node's replicas pulling from another node's primary through the
 * relay. Everything else about a database is served by the shard owning it.
 */
export function servedByPrimary(route: DataRoute, method = "POST"): boolean {
  if (!("id" in route.locator)) return false;
  return (route.path === "/notify" && method === "POST") || route.path.startsWith("/relay/");
}

/** A stable key for a locator, to place requests for databases that don't exist consistently. */
function locatorKey(l: DatabaseLocator): string {
  if ("id" in l) return l.id;
  if ("label" in l) return `label:${l.label}`;
  return `name:${l.orgSlug}/${l.name}`;
}

/**
 * A resolution, built field by field: an object spread of the route cost 4% of a shard's time
 * under single-row inserts (V8 copies spread properties one by one through a slow path), and one
 * shape for every request keeps the data plane's reads of it monomorphic.
 */
function resolution(
  route: DataRoute,
  record: DataPlaneDatabase | undefined,
  node: NodeChoice,
  process: Target,
  turn: string,
): Resolution {
  return {
    locator: route.locator,
    viaHost: route.viaHost,
    path: route.path,
    location: route.location,
    record,
    node,
    process,
    turn,
  };
}

/**
 * The one place a data-plane request's way is decided, in every process of the node: the public
 * port's router (for a new connection), the primary process and the shards (for each request).
 * Synchronous when the record and the location's holder are cached, as they are for a busy database.
 */
export class Resolver {
  constructor(private readonly parts: ResolverParts) {}

  /** The whole way of a request: record, node, process and turn. */
  resolve(route: DataRoute, facts: RequestFacts = {}): Resolution | Promise<Resolution> {
    const l = route.locator;
    if ("id" in l)
      return { ...route, record: undefined, node: HERE, process: this.byId(route, facts), turn: l.id };
    const record = this.recordOf(l);
    return record instanceof Promise
      ? record.then((d) => this.placed(route, d, facts))
      : this.placed(route, record, facts);
  }

  /**
   * Only the process of this node that serves a request: what the public port needs to hand a new
   * connection on. The node is left to that process, which reads the request's headers (and may
   * have to ask the store who holds a location: the connection isn't held meanwhile).
   */
  process(route: DataRoute, method?: string): Target | Promise<Target> {
    const l = route.locator;
    if ("id" in l) return this.byId(route, { method });
    const record = this.recordOf(l);
    const of = (d: DataPlaneDatabase | undefined): Target => this.shardOf(d, l);
    return record instanceof Promise ? record.then(of) : of(record);
  }

  private byId(route: DataRoute, facts: RequestFacts): Target {
    if (servedByPrimary(route, facts.method)) return PRIMARY;
    return { kind: "shard", index: ownerOf((route.locator as { id: string }).id, this.parts.count) };
  }

  /**
   * The record, cached or looked up; undefined when there is none or the lookup failed (the
   * local data plane answers it then: 404, 503).
   */
  private recordOf(
    l: DatabaseLocator,
  ): DataPlaneDatabase | undefined | Promise<DataPlaneDatabase | undefined> {
    const cached = this.parts.directory.peek(l);
    if (cached) return cached;
    return this.parts.directory.find(l).then(
      (d) => d,
      () => undefined,
    );
  }

  /** The shard serving a database: its id's owner, or, while it can't be found, its name's. */
  private shardOf(d: DataPlaneDatabase | undefined, l: DatabaseLocator): Target {
    return { kind: "shard", index: ownerOf(d?.id ?? locatorKey(l), this.parts.count) };
  }

  private placed(
    route: DataRoute,
    record: DataPlaneDatabase | undefined,
    facts: RequestFacts,
  ): Resolution | Promise<Resolution> {
    const turn = record?.id ?? locatorKey(route.locator);
    const process = this.shardOf(record, route.locator);
    const from = facts.headers?.[FORWARDED_BY];
    const node = chooseNode(this.parts, record, route, typeof from === "string" ? from : undefined);
    const done = (n: NodeChoice): Resolution => resolution(route, record, n, process, turn);
    return node instanceof Promise ? node.then(done) : done(node);
  }
}
