import type { DataRoute } from "../dataplane/routing.js";
import type { DatabaseLocator, DatabaseLookup } from "../domain/data-access/ports.js";
import { ownerOf } from "./ownership.js";
import type { Target } from "./router.js";

const PRIMARY: Target = { kind: "primary" };

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
 * Which process serves a data-plane request: the shard owning its database (found by id, from
 * the cached record when there is one), or the primary process. A database that can't be found
 * goes to the shard its locator hashes to, which answers 404 (or 503 while the store is down).
 */
export function targetOf(
  route: DataRoute,
  directory: Pick<DatabaseLookup, "peek" | "find">,
  shards: number,
  method?: string,
): Target | Promise<Target> {
  if (servedByPrimary(route, method)) return PRIMARY;
  const l = route.locator;
  if ("id" in l) return { kind: "shard", index: ownerOf(l.id, shards) };
  const cached = directory.peek(l);
  if (cached) return { kind: "shard", index: ownerOf(cached.id, shards) };
  const fallback: Target = { kind: "shard", index: ownerOf(locatorKey(l), shards) };
  return directory.find(l).then(
    (d) => (d ? { kind: "shard", index: ownerOf(d.id, shards) } : fallback),
    () => fallback,
  );
}
